//go:build !js

package ws

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"github.com/coder/websocket"
	"github.com/lockhost/lockhost/internal/addrkey"
)

// DefaultBacklog is how many upgraded connections may wait for the host to
// accept them, with the upgrades under way, before more are refused.
const DefaultBacklog = 16

// The default shares of the backlog (Options.PerAddress,
// Options.PerNetwork) are these fractions of it.
const (
	defaultAddressShare = 4 // a quarter of the backlog per address
	defaultNetworkShare = 2 // half of it per network
	defaultReserve      = 4 // a quarter of it kept for networks holding none
)

// Options configure a Listener. The zero value works.
type Options struct {
	// ReadLimit bounds one WebSocket message (default DefaultReadLimit);
	// a host passes its largest frame plus a little room.
	ReadLimit int64
	// Backlog caps the connections upgraded or being upgraded that the
	// host has not accepted yet (default DefaultBacklog); one more request
	// is answered 503 before it is upgraded, so a host that is not
	// accepting holds a bounded number.
	Backlog int
	// OriginPatterns are the origins, besides the request's own host,
	// whose pages may open a connection (patterns of path.Match on the
	// origin's host, or on "scheme://host" if the pattern has a scheme).
	// By default a browser page from another site is refused (403), and a
	// page the host serves itself is not; a client that is not a browser
	// sends no Origin and is not checked.
	OriginPatterns []string
	// PerAddress caps the connections of the backlog from one address,
	// an IPv6 address counted by its /64 (default a quarter of Backlog,
	// at least 1), and PerNetwork those from one network, an IPv4 /24 or
	// an IPv6 /64 (default half of Backlog, at least PerAddress): an
	// address or a network that floods upgrades is answered 503 while
	// others still get in. The address is the HTTP client's as the
	// server saw it (no forwarding header is believed).
	PerAddress, PerNetwork int
	// Reserve is how much of the backlog only a network that holds none
	// of it may take (default a quarter of Backlog; negative: none):
	// networks that already wait fill at most the rest, so a flood from
	// a few networks, each within its share, still leaves room for a
	// player from elsewhere.
	Reserve int
	// Addr is what Addr returns (default the address "websocket" on port
	// 0); a host passes its HTTP listener's address.
	Addr net.Addr
	// Logger receives failed upgrades at debug level (default
	// slog.Default()).
	Logger *slog.Logger
}

// Listener is an http.Handler that upgrades WebSocket requests and a
// net.Listener whose Accept returns them. Serve it on an HTTP server at
// Path and give it to the host to serve (host.Listeners.Extra).
type Listener struct {
	opts  Options
	slots chan struct{} // one per connection upgraded or upgrading, not yet accepted
	conns chan waiting  // upgraded, waiting for Accept; as big as slots

	mu        sync.Mutex
	isClosed  bool
	closed    chan struct{}
	byAddr    map[string]int // slots held per address key (addrkey.Of); guarded by mu
	byNetwork map[string]int // and per network (addrkey.Prefix); guarded by mu
}

// waiting is an upgraded connection and the share of the backlog it
// holds.
type waiting struct {
	nc    net.Conn
	share share
}

// share names the address and network a slot of the backlog is counted
// under.
type share struct{ addr, network string }

// NewListener returns a Listener with opts.
func NewListener(opts Options) *Listener {
	if opts.ReadLimit <= 0 {
		opts.ReadLimit = DefaultReadLimit
	}
	if opts.Backlog <= 0 {
		opts.Backlog = DefaultBacklog
	}
	if opts.PerAddress <= 0 {
		opts.PerAddress = max(1, opts.Backlog/defaultAddressShare)
	}
	if opts.PerNetwork <= 0 {
		opts.PerNetwork = max(opts.PerAddress, opts.Backlog/defaultNetworkShare)
	}
	if opts.Reserve == 0 {
		opts.Reserve = opts.Backlog / defaultReserve
	}
	opts.Reserve = min(max(opts.Reserve, 0), opts.Backlog-1)
	if opts.Addr == nil {
		opts.Addr = Addr{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Listener{opts: opts, slots: make(chan struct{}, opts.Backlog),
		conns: make(chan waiting, opts.Backlog), closed: make(chan struct{}),
		byAddr: map[string]int{}, byNetwork: map[string]int{}}
}

// ServeHTTP upgrades the request and queues the connection for Accept,
// or answers 503 if the backlog, the client's address's share of it or
// its network's is full, or the listener closed.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sh, ok := l.take(r.RemoteAddr)
	if !ok {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the host is busy; try again", http.StatusServiceUnavailable)
		return
	}
	nc, err := l.upgrade(w, r)
	if err != nil {
		l.release(sh)
		l.opts.Logger.Debug("websocket upgrade refused", "remote", r.RemoteAddr, "err", err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isClosed {
		l.releaseLocked(sh)
		nc.Close()
		return
	}
	l.conns <- waiting{nc: nc, share: sh} // never blocks: a slot is held, and conns is as big as slots
}

// take takes a slot of the backlog for a request from remote (its
// RemoteAddr), within its address's and network's shares and, for a
// network that already holds a slot, outside the reserve.
func (l *Listener) take(remote string) (share, bool) {
	sh := share{addr: addrkey.OfHostPort(remote), network: remote}
	if host, _, err := net.SplitHostPort(remote); err == nil {
		sh.network = addrkey.Prefix(host)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.byNetwork[sh.network]
	if l.byAddr[sh.addr] >= l.opts.PerAddress || held >= l.opts.PerNetwork ||
		(held > 0 && len(l.slots) >= l.opts.Backlog-l.opts.Reserve) {
		return share{}, false
	}
	select {
	case l.slots <- struct{}{}:
	default:
		return share{}, false
	}
	l.byAddr[sh.addr]++
	l.byNetwork[sh.network]++
	return sh, true
}

// release gives back a slot taken for sh.
func (l *Listener) release(sh share) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(sh)
}

// releaseLocked is release with l.mu held.
func (l *Listener) releaseLocked(sh share) {
	<-l.slots
	if l.byAddr[sh.addr]--; l.byAddr[sh.addr] <= 0 {
		delete(l.byAddr, sh.addr)
	}
	if l.byNetwork[sh.network]--; l.byNetwork[sh.network] <= 0 {
		delete(l.byNetwork, sh.network)
	}
}

// upgrade answers the WebSocket handshake and wraps the connection. The
// HTTP server's timeouts do not follow it: net/http clears the deadlines
// of a connection it lets go (TestServerDeadlinesCleared), and the host
// sets its own.
func (l *Listener) upgrade(w http.ResponseWriter, r *http.Request) (net.Conn, error) {
	if l.closedNow() {
		http.Error(w, "the host is closing", http.StatusServiceUnavailable)
		return nil, net.ErrClosed
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:    []string{Subprotocol},
		OriginPatterns:  l.opts.OriginPatterns,
		CompressionMode: websocket.CompressionDisabled, // the protocol compresses what is worth it
	})
	if err != nil {
		return nil, err // Accept has answered
	}
	// The connection outlives the request: its context ends with Close.
	nc := websocket.NetConn(context.Background(), c, websocket.MessageBinary)
	c.SetReadLimit(l.opts.ReadLimit) // after NetConn, which lifts the limit
	return newConn(c, nc, remoteAddr(r, nc), l.opts.Addr), nil
}

// remoteAddr is the HTTP client's address: the request's RemoteAddr as
// the HTTP server saw it (no forwarding header is believed), else the
// connection's.
func remoteAddr(r *http.Request, nc net.Conn) net.Addr {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return Addr{ap: ap}
	}
	return nc.RemoteAddr()
}

// Accept waits for the next upgraded connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		l.release(c.share)
		return c.nc, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close refuses further upgrades and closes the connections not yet
// accepted. Accepted connections are their owner's to close.
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
			l.releaseLocked(c.share)
			c.nc.Close()
		default:
			return nil
		}
	}
}

func (l *Listener) closedNow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.isClosed
}

// Addr is Options.Addr.
func (l *Listener) Addr() net.Addr { return l.opts.Addr }
