package ws

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Path is where a host serves WebSocket players on its HTTP listener.
const Path = "/ws"

// Subprotocol is the WebSocket subprotocol the host offers; a client may
// ask for it, and a client that asks for none is served the same.
const Subprotocol = "lockhost"

// DefaultReadLimit bounds one WebSocket message read (the protocol's
// largest frame, 1 MiB, plus room for its length and a little more): a
// client that sends one frame per message always fits, and a bigger
// message ends the connection with status 1009 (message too big).
const DefaultReadLimit = 1<<20 + 1024

// IsURL reports whether addr names a host by a WebSocket URL (ws:// or
// wss://) rather than a TCP address.
func IsURL(addr string) bool {
	scheme, _, ok := strings.Cut(addr, "://")
	return ok && (strings.EqualFold(scheme, "ws") || strings.EqualFold(scheme, "wss"))
}

// Addr is the address of one end of a WebSocket connection: the HTTP
// client's or server's address. Its AddrPort method is what the host's
// per-address limits key on.
type Addr struct {
	ap netip.AddrPort
}

// Network is "websocket".
func (a Addr) Network() string { return "websocket" }

// String is the address as "host:port".
func (a Addr) String() string { return a.ap.String() }

// AddrPort is the IP address and port.
func (a Addr) AddrPort() netip.AddrPort { return a.ap }

// conn is a WebSocket connection as a net.Conn that reports the addresses
// its HTTP request came from and to, and whose read deadline fails a read
// without ending the connection (readPump).
type conn struct {
	net.Conn
	ws            *websocket.Conn // nc's
	reads         *readPump
	remote, local net.Addr
	closeOnce     sync.Once
}

func newConn(ws *websocket.Conn, nc net.Conn, remote, local net.Addr) *conn {
	return &conn{Conn: nc, ws: ws, reads: newReadPump(nc), remote: remote, local: local}
}

func (c *conn) Read(p []byte) (int, error) { return c.reads.Read(p) }

// SetReadDeadline bounds Read; a read past it fails, and the connection
// stays open.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.reads.setDeadline(t)
	return nil
}

// SetDeadline sets the read deadline as SetReadDeadline does and the
// write deadline as the WebSocket library does.
func (c *conn) SetDeadline(t time.Time) error {
	c.reads.setDeadline(t)
	return c.Conn.SetWriteDeadline(t)
}

// Close starts the WebSocket closing handshake and returns: as closing a
// TCP connection leaves the FIN to the kernel, the handshake (the library
// waits up to seconds for the peer's answer) goes on in the background,
// so a host that closes many connections at shutdown is not held by
// peers that never answer.
//
// It closes the WebSocket itself, not through nc: nc's Close cancels the
// read under way (the pump's, always), which ends the connection at once,
// racing the close frame.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		c.reads.stop()
		go c.ws.Close(websocket.StatusNormalClosure, "")
	})
	return nil
}

func (c *conn) RemoteAddr() net.Addr { return c.remote }
func (c *conn) LocalAddr() net.Addr  { return c.local }
