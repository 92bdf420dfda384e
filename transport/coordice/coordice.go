package coordice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/ice"
)

// Servers are the ICE servers of the coordinator's TURN servers t (nil:
// none): the TURN URLs with their credentials, and a STUN URL at the
// address of each turn: URL (a TURN server answers STUN on the port it
// listens on, as coturn does), so that server-reflexive candidates (hole
// punching) are gathered too.
func Servers(t *coord.TURN) []ice.Server {
	if t == nil || len(t.URLs) == 0 {
		return nil
	}
	var stun []string
	seen := map[string]bool{}
	for _, u := range t.URLs {
		rest, ok := strings.CutPrefix(u, "turn:")
		if !ok {
			continue // turns: is TLS; STUN does not speak it
		}
		hostPort, _, _ := strings.Cut(rest, "?")
		if hostPort != "" && !seen[hostPort] {
			seen[hostPort] = true
			stun = append(stun, "stun:"+hostPort)
		}
	}
	out := []ice.Server{{URLs: append([]string(nil), t.URLs...), Username: t.Username, Credential: t.Credential}}
	if len(stun) > 0 {
		out = append(out, ice.Server{URLs: stun})
	}
	return out
}

// config is base for one attempt: the TURN servers t added to its
// servers, and its largest blob no more than the coordinator relays.
func config(base ice.Config, t *coord.TURN) (ice.Config, error) {
	cfg := base
	cfg.Servers = append(append([]ice.Server(nil), base.Servers...), Servers(t)...)
	if cfg.MaxBlob <= 0 || cfg.MaxBlob > coord.MaxBlob {
		cfg.MaxBlob = coord.MaxBlob
	}
	if cfg.RelayOnly && t == nil {
		return cfg, errors.New("only a relayed path may be used, and the coordinator offers no TURN server")
	}
	return cfg, nil
}

// Fallback is the joiner's way to the host through the coordinator: one
// ICE attempt (ice.Dial) with base and the TURN servers of the lookup,
// over the attempt's signalling channel. Its connection is a *Conn.
func Fallback(base ice.Config) coord.Fallback {
	return func(ctx context.Context, sig coord.Signal, t *coord.TURN) (net.Conn, string, error) {
		cfg, err := config(base, t)
		if err != nil {
			return nil, "", err
		}
		c, path, err := ice.Dial(ctx, sig, cfg)
		if err != nil {
			return nil, "", err
		}
		return wrap(c), string(path), nil
	}
}

// Conn is a connection through ICE as this package hands it out: it
// names its path as a string (Path), as the host's status page and the
// coordinator's reports do.
type Conn struct {
	*ice.Conn
}

// wrap makes c a *Conn, or returns it as it is when it is not an ICE
// connection.
func wrap(c net.Conn) net.Conn {
	if ic, ok := c.(*ice.Conn); ok {
		return &Conn{ic}
	}
	return c
}

// Path is the way the connection took: "direct", "punched", "turn-udp",
// "turn-tcp", "turn-tls" or "turn" (ice.Path).
func (c *Conn) Path() string { return string(c.Conn.Path()) }

// Relayed says the peer's end of the connection is a TURN relay:
// RemoteAddr is the relay's address and a port of it that is this
// peer's alone, shared with every other peer the relay carries.
func (c *Conn) Relayed() bool { return c.Conn.PeerRelayed() }

// Outcomes of the host's side of an attempt, beside the paths
// (ice.Path): OutcomeFailed for an attempt that did not connect,
// OutcomeBusy for one refused because the listener's backlog was full.
const (
	OutcomeFailed = "failed"
	OutcomeBusy   = "busy"
)

// Answerer is the host's side: it answers joiners' signalling attempts
// (Answer, a coord.HostConfig.OnSignal) and hands the connections to the
// host through its Listener.
type Answerer struct {
	base ice.Config
	ln   *ice.Listener
	// onOutcome, if set, hears each attempt's outcome: its path,
	// OutcomeFailed or OutcomeBusy.
	onOutcome func(string)

	mu    sync.Mutex
	count map[string]uint64 // attempts by outcome
}

// NewAnswerer returns an Answerer that connects joiners with base (its
// MaxBlob held to coord.MaxBlob) and the TURN servers of each attempt;
// onOutcome, if not nil, hears how each attempt ended.
func NewAnswerer(base ice.Config, onOutcome func(outcome string)) *Answerer {
	cfg := base.Defaults()
	cfg.MaxBlob = min(cfg.MaxBlob, coord.MaxBlob)
	return &Answerer{base: cfg, ln: ice.NewListener(cfg), onOutcome: onOutcome, count: map[string]uint64{}}
}

// Listener is where the host accepts the joiners the Answerer
// connected: each connection a *Conn.
func (a *Answerer) Listener() net.Listener { return listener{a.ln} }

// Answer answers one joiner's attempt with the TURN servers t (as the
// coordinator gave them for this registration), until the joiner is
// connected or the attempt fails; it closes s. It is a
// coord.HostConfig.OnSignal.
func (a *Answerer) Answer(ctx context.Context, s coord.Signal, t *coord.TURN) {
	defer s.Close()
	cfg, err := config(a.base, t)
	outcome := OutcomeFailed
	if err == nil {
		var path ice.Path
		path, err = a.ln.AnswerWith(ctx, s, cfg.Servers)
		switch {
		case err == nil:
			outcome = string(path)
		case errors.Is(err, ice.ErrBusy):
			outcome = OutcomeBusy
		}
	}
	if err != nil {
		a.base.Logger.Debug("coordinator: a joiner's ICE attempt failed", "err", fmt.Sprint(err))
	}
	a.mu.Lock()
	a.count[outcome]++
	a.mu.Unlock()
	if a.onOutcome != nil {
		a.onOutcome(outcome)
	}
}

// Counts are the attempts answered so far by outcome.
func (a *Answerer) Counts() map[string]uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]uint64, len(a.count))
	for k, v := range a.count {
		out[k] = v
	}
	return out
}

// listener hands out an ice.Listener's connections as *Conn.
type listener struct{ *ice.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrap(c), nil
}
