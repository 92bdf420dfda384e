package host_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// pipeListener is a transport that is not TCP: each Dial makes a
// net.Pipe, hands the host its end through Accept and gives the player the
// other. Its connections say they come from the address given to Dial, as
// a WebSocket or port-mapping transport says whom it accepted for.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr("pipe:host") }

// dialFrom returns a join.Config.Dial whose connections come from remote.
func (l *pipeListener) dialFrom(remote string) func(context.Context, string) (net.Conn, error) {
	return func(ctx context.Context, _ string) (net.Conn, error) {
		player, hostEnd := net.Pipe()
		select {
		case l.conns <- addrConn{Conn: hostEnd, remote: pipeAddr(remote)}:
			return player, nil
		case <-l.closed:
			return nil, errors.New("transport closed")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

// addrConn is a connection that reports the remote address its
// transport vouches for.
type addrConn struct {
	net.Conn
	remote net.Addr
}

func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// TestCustomTransport: a host serves a listener that is not TCP and a
// player joins through join.Config.Dial, with the public API only; the
// host sees the address the transport gives, and its per-address limit
// applies to it as to a TCP address.
func TestCustomTransport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncbuf.Buffer{}
	srv, err := host.New(host.Config{Logger: slog.New(slog.NewTextHandler(logs, nil)), Admission: host.AdmissionConfig{ConnRate: 0.01, ConnBurst: 1}},
		host.Content{GameVersion: "counters 1"}, locksteptest.New(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	ln := newPipeListener()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, &host.Listeners{TCP: ln}) }()

	join1 := func(name, from string) (*join.Session, error) {
		jctx, jcancel := context.WithTimeout(ctx, 20*time.Second)
		defer jcancel()
		return join.Join(jctx, join.Config{Addr: "ignored-by-dial", Name: name, Logger: testkit.Quiet(),
			Loader: locksteptest.Load, Dial: ln.dialFrom(from)})
	}
	alice, err := join1("Alice", "203.0.113.7:5000")
	if err != nil {
		t.Fatalf("join through the pipe transport: %v", err)
	}
	defer alice.Close()
	// The world is read before Run, which owns it from then on.
	if alice.Sim().Tick() == 0 && alice.Timings().Connect <= 0 {
		t.Fatalf("joined without a world or a connect time: tick %d, %+v", alice.Sim().Tick(), alice.Timings())
	}
	go alice.Run(ctx)
	players, err := srv.Players()
	if err != nil {
		t.Fatal(err)
	}
	if len(players) != 1 || players[0].Name != "Alice" || players[0].Addr != "203.0.113.7:5000" {
		t.Fatalf("players %+v, want Alice from 203.0.113.7:5000", players)
	}
	// A second connection from the same address is over the connection
	// rate (a burst of one); from another address it is admitted.
	// (Over a pipe the refusal may not be read: both ends write first, and
	// a pipe has no buffer, so the host's log is what is checked.)
	if _, err := join1("Bob", "203.0.113.7:5001"); err == nil {
		t.Fatal("a second connection from Alice's address was admitted over the connection rate")
	}
	if !strings.Contains(logs.String(), "reason=RateLimited remote=203.0.113.7:5001") &&
		!strings.Contains(logs.String(), "remote=203.0.113.7:5001 reason=RateLimited") {
		t.Fatalf("no RateLimited refusal of 203.0.113.7:5001 logged:\n%s", logs.String())
	}
	bob, err := join1("Bob", "198.51.100.2:6000")
	if err != nil {
		t.Fatalf("join from another address: %v", err)
	}
	bob.Close()
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("served: %v", err)
	}
}
