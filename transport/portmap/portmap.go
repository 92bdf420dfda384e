package portmap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"
)

// Protocol is the transport protocol of a mapping.
type Protocol string

// The protocols a mapping can forward.
const (
	TCP Protocol = "TCP"
	UDP Protocol = "UDP"
)

// Router is a gateway that forwards ports on request: one of the
// protocols this package speaks, or a test's fake.
type Router interface {
	// Method names the protocol spoken, as the log says it ("NAT-PMP",
	// "UPnP-IGD v2").
	Method() string
	// ExternalIP is the router's address on the internet side.
	ExternalIP(ctx context.Context) (netip.Addr, error)
	// Add asks for external port ext to be forwarded to this machine's
	// port internal for lease (0: for as long as the router keeps it). It
	// returns the external port and lease the router granted.
	Add(ctx context.Context, proto Protocol, internal, ext uint16, lease time.Duration) (uint16, time.Duration, error)
	// Delete removes the mapping of ext to internal.
	Delete(ctx context.Context, proto Protocol, internal, ext uint16) error
}

// Clock gives a Mapper its timers. Tests pass a fake one to fire renewals
// by hand.
type Clock interface {
	After(d time.Duration) <-chan time.Time
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// State is where a host's port mapping stands.
type State int

// The states of a mapping.
const (
	// Off: the host asks no router (--port-mapping off, a loopback
	// listener, or a host with no private address).
	Off State = iota
	// Searching: asking the LAN for a router.
	Searching
	// Mapped: the router forwards the port; Status.External is the
	// address a friend joins.
	Mapped
	// NoRouter: no router answered, or every router refused.
	NoRouter
	// Lost: the port was mapped, but the last renewal failed; it is
	// retried.
	Lost
	// Removed: the host removed its mapping on shutdown.
	Removed
)

var stateNames = [...]string{"off", "searching", "mapped", "no router", "lost", "removed"}

// String is the state as the log, the status page and the status query
// say it.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("state(%d)", int(s))
	}
	return stateNames[s]
}

// Status is what a Mapper reports.
type Status struct {
	State State
	// Method is the protocol the router answered ("NAT-PMP",
	// "UPnP-IGD v2"); empty before one did.
	Method string
	// External is the address a friend joins (valid once Mapped).
	External netip.AddrPort
	// UDP says the status port is forwarded too.
	UDP bool
	// Lease is the lease the router granted (0: until removed).
	Lease time.Duration
	// Renewals counts the successful renewals.
	Renewals int
	// Err is the last error, if any.
	Err string
}

// DefaultLease is the lease a Mapper asks for: an hour, NAT-PMP's
// recommended lifetime.
const DefaultLease = time.Hour

// minRenew and permanentRenew bound how often a Mapper renews: never more
// often than minRenew, and every permanentRenew when the router grants a
// lease without end (to put the mapping back after a router restart).
const (
	minRenew       = 10 * time.Second
	permanentRenew = 30 * time.Minute
	// retryAfter is how soon a failed renewal is tried again.
	retryAfter = 30 * time.Second
	// removeWithin bounds the removal on Close.
	removeWithin = 3 * time.Second
)

// Config is what a Mapper maps.
type Config struct {
	Router Router
	// Port is the host's port; the same external port is asked for.
	Port uint16
	// UDP asks for Port over UDP too (the status query).
	UDP bool
	// Lease is the lease asked for (DefaultLease when 0).
	Lease  time.Duration
	Clock  Clock        // the wall clock when nil
	Logger *slog.Logger // slog.Default when nil
}

// Mapper holds one host's mappings: made by Start, renewed on its own
// goroutine, removed by Close.
type Mapper struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	status Status
	ext    map[Protocol]uint16 // the external port granted per protocol
}

// Start maps cfg.Port on cfg.Router and keeps it mapped until Close. Its
// error says the router refused or did not answer; the Mapper is then nil.
func Start(ctx context.Context, cfg Config) (*Mapper, error) {
	if cfg.Router == nil || cfg.Port == 0 {
		return nil, errors.New("portmap: a router and a port are needed")
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Mapper{cfg: cfg, done: make(chan struct{}), ext: map[Protocol]uint16{}}
	m.status = Status{State: Searching, Method: cfg.Router.Method()}
	lease, err := m.mapAll(ctx)
	if err != nil {
		m.removeAll()
		return nil, err
	}
	m.setMapped(ctx, lease, false)
	m.mu.Lock()
	ok := m.status.State == Mapped
	st := m.status
	m.mu.Unlock()
	if !ok {
		m.removeAll()
		return nil, fmt.Errorf("portmap: %s: %s", cfg.Router.Method(), st.Err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	go m.run(runCtx, lease)
	return m, nil
}

// protocols are the protocols cfg maps, TCP first.
func (m *Mapper) protocols() []Protocol {
	if m.cfg.UDP {
		return []Protocol{TCP, UDP}
	}
	return []Protocol{TCP}
}

// mapAll asks for every mapping and returns the shortest lease granted
// (0 when every lease is without end).
func (m *Mapper) mapAll(ctx context.Context) (time.Duration, error) {
	var shortest time.Duration
	for _, p := range m.protocols() {
		m.mu.Lock()
		want, ok := m.ext[p]
		m.mu.Unlock()
		if !ok {
			want = m.cfg.Port
		}
		ext, lease, err := m.cfg.Router.Add(ctx, p, m.cfg.Port, want, m.cfg.Lease)
		if err != nil {
			return 0, fmt.Errorf("portmap: %s: forward port %d %s: %w", m.cfg.Router.Method(), m.cfg.Port, p, err)
		}
		m.mu.Lock()
		m.ext[p] = ext
		m.mu.Unlock()
		if lease > 0 && (shortest == 0 || lease < shortest) {
			shortest = lease
		}
	}
	return shortest, nil
}

// setMapped records a mapping (or its renewal) and the router's external
// address.
func (m *Mapper) setMapped(ctx context.Context, lease time.Duration, renewal bool) {
	ip, err := m.cfg.Router.ExternalIP(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil || !ip.IsValid() || ip.IsUnspecified() {
		if err == nil {
			err = fmt.Errorf("the router has no external address (%v)", ip)
		}
		m.status.State, m.status.Err = Lost, fmt.Sprintf("external address: %v", err)
		return
	}
	m.status.State, m.status.Err, m.status.Lease = Mapped, "", lease
	m.status.External = netip.AddrPortFrom(ip.Unmap(), m.ext[TCP])
	m.status.UDP = m.cfg.UDP
	if renewal {
		m.status.Renewals++
	}
}

// renewIn is how long to wait before renewing a lease: half of it, never
// less than minRenew, and permanentRenew for a lease without end.
func renewIn(lease time.Duration) time.Duration {
	if lease <= 0 {
		return permanentRenew
	}
	return max(lease/2, minRenew)
}

// run renews the mappings until ctx ends.
func (m *Mapper) run(ctx context.Context, lease time.Duration) {
	defer close(m.done)
	wait := renewIn(lease)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.cfg.Clock.After(wait):
		}
		callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		granted, err := m.mapAll(callCtx)
		if err == nil {
			m.setMapped(callCtx, granted, true)
		}
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			m.mu.Lock()
			m.status.State, m.status.Err = Lost, err.Error()
			m.mu.Unlock()
			m.cfg.Logger.Warn("port mapping: renewal failed; trying again", "err", err, "in", retryAfter)
			wait = retryAfter
			continue
		}
		wait = renewIn(granted)
		m.cfg.Logger.Debug("port mapping renewed", "lease", granted, "next", wait)
	}
}

// removeAll deletes every mapping granted so far.
func (m *Mapper) removeAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), removeWithin)
	defer cancel()
	var errs []error
	for _, p := range m.protocols() {
		m.mu.Lock()
		ext, ok := m.ext[p]
		delete(m.ext, p)
		m.mu.Unlock()
		if !ok {
			continue
		}
		if err := m.cfg.Router.Delete(ctx, p, m.cfg.Port, ext); err != nil {
			errs = append(errs, fmt.Errorf("remove port %d %s: %w", ext, p, err))
		}
	}
	return errors.Join(errs...)
}

// Close stops renewing and removes the mappings from the router.
func (m *Mapper) Close() error {
	m.cancel()
	<-m.done
	err := m.removeAll()
	m.mu.Lock()
	m.status.State = Removed
	if err != nil {
		m.status.Err = err.Error()
	}
	m.mu.Unlock()
	if err != nil {
		return fmt.Errorf("portmap: %s: %w", m.cfg.Router.Method(), err)
	}
	return nil
}

// Status is the mapping as it stands.
func (m *Mapper) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}
