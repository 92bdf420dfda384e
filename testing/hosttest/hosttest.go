package hosttest

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/testkit"
)

// StopWait bounds how long a host may take to stop when its test ends.
const StopWait = 30 * time.Second

// Host is a host serving for one test.
type Host struct {
	// Addr is the address it listens on.
	Addr string
	// Server is the running host.
	Server *host.Server

	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// Config returns cfg with the settings a loopback test needs where cfg
// leaves them unset: a quiet logger, and no per-address limits on
// connections, connections still joining (per address and per network)
// and password attempts (a test connects from one address, many times
// and at once).
func Config(cfg host.Config) host.Config {
	if cfg.Logger == nil {
		cfg.Logger = testkit.Quiet()
	}
	if cfg.Admission.ConnRate == 0 {
		cfg.Admission.ConnRate = -1
	}
	if cfg.Admission.MaxPendingPerAddr == 0 {
		cfg.Admission.MaxPendingPerAddr = -1
	}
	if cfg.Admission.MaxPendingPerPrefix == 0 {
		cfg.Admission.MaxPendingPerPrefix = -1
	}
	if cfg.Admission.PasswordRate == 0 {
		cfg.Admission.PasswordRate = -1
	}
	return cfg
}

// Start serves sim with content on a free loopback port until the test
// ends, with cfg completed by Config.
func Start(t testing.TB, cfg host.Config, content host.Content, sim lockstep.Sim) *Host {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return StartOn(t, ln, cfg, content, sim)
}

// StartOn is Start on a listener of the test's (closed when the host
// stops). When the test ends the host is stopped and must return from
// Serve without error within StopWait; otherwise the test fails with
// every goroutine's stack.
func StartOn(t testing.TB, ln net.Listener, cfg host.Config, content host.Content, sim lockstep.Sim) *Host {
	t.Helper()
	srv, err := host.New(Config(cfg), content, sim)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	return serve(t, ln, srv)
}

// StartRelay is Start for a relay host (host.NewRelay): it runs no
// simulation, and its world comes from the arbiter, a joiner with the
// arbiter secret of cfg.Relay.
func StartRelay(t testing.TB, cfg host.Config, content host.Content) *Host {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := host.NewRelay(Config(cfg), content)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	return serve(t, ln, srv)
}

// serve serves srv on ln until the test ends, as StartOn says.
func serve(t testing.TB, ln net.Listener, srv *host.Server) *Host {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{Addr: ln.Addr().String(), Server: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { h.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { h.Stop(t) })
	return h
}

// Stop stops the host and waits for Serve to return (once; later calls
// only check again), failing the test if Serve returned an error or took
// longer than StopWait. A test that reads what the host did on stopping
// (its final save, its stats) calls it; otherwise the test's end does.
func (h *Host) Stop(t testing.TB) {
	t.Helper()
	h.cancel()
	h.wait(t)
}

// Wait waits for Serve to return by itself, as it does after a shutdown
// command, failing the test as Stop does if it returned an error or has
// not returned within StopWait. Stop at the test's end then only checks
// again.
func (h *Host) Wait(t testing.TB) {
	t.Helper()
	h.wait(t)
}

func (h *Host) wait(t testing.TB) {
	t.Helper()
	h.once.Do(func() {
		select {
		case h.err = <-h.done:
		case <-time.After(StopWait):
			buf := make([]byte, 4<<20)
			h.err = fmt.Errorf("host did not stop within %v; goroutines:\n%s", StopWait, buf[:runtime.Stack(buf, true)])
		}
	})
	if h.err != nil {
		t.Errorf("serve: %v", h.err)
	}
}

// Joiner is a session joined for a test and followed (Session.Run) until
// the test ends or the session does.
type Joiner struct {
	// Session is the joined session.
	Session *join.Session
	done    chan struct{}
	once    sync.Once
	err     error
	cancel  context.CancelFunc
}

// Join joins with cfg (a quiet logger if it has none), failing the test
// if the join fails, and runs the session until the test ends.
func Join(t testing.TB, cfg join.Config) *Joiner {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testkit.Quiet()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := join.Join(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("join %s: %v", cfg.Name, err)
	}
	j := &Joiner{Session: s, done: make(chan struct{}), cancel: cancel}
	go func() {
		j.err = s.Run(ctx)
		close(j.done)
	}()
	t.Cleanup(j.Leave)
	return j
}

// Done is closed when Run has returned.
func (j *Joiner) Done() <-chan struct{} { return j.done }

// Err is what Run returned: nil for a session left by the test; only
// meaningful once Done is closed.
func (j *Joiner) Err() error {
	<-j.done
	return j.err
}

// Leave ends the session and waits for Run to return.
func (j *Joiner) Leave() {
	j.once.Do(j.cancel)
	<-j.done
}
