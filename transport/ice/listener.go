package ice

import (
	"context"
	"errors"
	"net"
	"sync"
)

// ErrBusy is returned by Listener.Answer when the listener holds as many
// connections and attempts as its backlog allows.
var ErrBusy = errors.New("ice: too many joiners waiting; try again shortly")

// Listener is the host's side: Answer connects one joiner per signalling
// attempt, and Accept returns the connections, so the host serves them
// with its other listeners (host.Listeners.Extra).
type Listener struct {
	cfg   Config
	slots chan struct{} // one per attempt under way or connection not yet accepted
	conns chan net.Conn // connected, waiting for Accept; as big as slots

	mu       sync.Mutex
	isClosed bool // guarded by mu
	closed   chan struct{}
}

// NewListener returns a Listener that connects joiners with cfg.
func NewListener(cfg Config) *Listener {
	cfg = cfg.Defaults()
	return &Listener{cfg: cfg, slots: make(chan struct{}, cfg.Backlog),
		conns: make(chan net.Conn, cfg.Backlog), closed: make(chan struct{})}
}

// Answer answers the joiner at the other end of sig and queues the
// connection for Accept, returning the path it took. It refuses at once
// (ErrBusy) beyond the backlog.
func (l *Listener) Answer(ctx context.Context, sig Signaller) (Path, error) {
	return l.AnswerWith(ctx, sig, l.cfg.Servers)
}

// AnswerWith is Answer with servers in place of the listener's
// Config.Servers, for STUN and TURN credentials that change between
// attempts (short-lived ones a coordinator hands out).
func (l *Listener) AnswerWith(ctx context.Context, sig Signaller, servers []Server) (Path, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		return "", ErrBusy
	}
	cfg := l.cfg
	cfg.Servers = servers
	c, path, err := Accept(ctx, sig, cfg)
	if err != nil {
		<-l.slots
		l.cfg.Logger.Debug("ice attempt failed", "err", err)
		return "", err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isClosed {
		c.Close()
		<-l.slots
		return "", net.ErrClosed
	}
	l.conns <- c // never blocks: a slot is held
	return path, nil
}

// Accept returns the next connected joiner.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		<-l.slots
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and closes the connections not yet accepted;
// attempts under way close theirs when they connect.
func (l *Listener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isClosed {
		return nil
	}
	l.isClosed = true
	close(l.closed)
	for {
		select {
		case c := <-l.conns:
			c.Close()
			<-l.slots
		default:
			return nil
		}
	}
}

// Addr is the listener's address: the network "ice", no port.
func (l *Listener) Addr() net.Addr { return iceAddr{} }

type iceAddr struct{}

func (iceAddr) Network() string { return "ice" }
func (iceAddr) String() string  { return "ice" }
