package corpus

import (
	"net"
	"slices"
	"sync"
)

// maxTapped bounds what one direction of one connection keeps; a session
// of the recorder's small world stays far below it.
const maxTapped = 64 << 20

// Conn is what one TCP connection carried, as the host read and wrote it.
type Conn struct {
	// FromClient is every byte the host read, in order.
	FromClient []byte
	// FromHost is every byte the host wrote, in order.
	FromHost []byte
}

// tapListener hands the host connections whose traffic is copied into a
// Conn each, in accept order.
type tapListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*tapConn
}

func (l *tapListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &tapConn{Conn: nc}
	l.mu.Lock()
	l.conns = append(l.conns, tc)
	l.mu.Unlock()
	return tc, nil
}

// snapshot copies what every connection carried so far.
func (l *tapListener) snapshot() []Conn {
	l.mu.Lock()
	conns := slices.Clone(l.conns)
	l.mu.Unlock()
	out := make([]Conn, len(conns))
	for i, c := range conns {
		c.mu.Lock()
		out[i] = Conn{FromClient: slices.Clone(c.in), FromHost: slices.Clone(c.out)}
		c.mu.Unlock()
	}
	return out
}

// tapConn copies what passes through a connection.
type tapConn struct {
	net.Conn
	mu      sync.Mutex
	in, out []byte
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.keep(&c.in, p[:n])
	return n, err
}

func (c *tapConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.keep(&c.out, p[:n])
	return n, err
}

// CloseWrite keeps the half-close the host does on a TCP connection.
func (c *tapConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *tapConn) keep(dst *[]byte, p []byte) {
	if len(p) == 0 {
		return
	}
	c.mu.Lock()
	if len(*dst)+len(p) <= maxTapped {
		*dst = append(*dst, p...)
	}
	c.mu.Unlock()
}

// tapPacketConn copies the datagrams a status server reads and writes.
type tapPacketConn struct {
	net.PacketConn
	mu      sync.Mutex
	in, out [][]byte
}

func (c *tapPacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, addr, err := c.PacketConn.ReadFrom(p)
	if n > 0 {
		c.mu.Lock()
		c.in = append(c.in, slices.Clone(p[:n]))
		c.mu.Unlock()
	}
	return n, addr, err
}

func (c *tapPacketConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	n, err := c.PacketConn.WriteTo(p, addr)
	if n > 0 {
		c.mu.Lock()
		c.out = append(c.out, slices.Clone(p[:n]))
		c.mu.Unlock()
	}
	return n, err
}

// datagrams returns copies of what was read and written so far.
func (c *tapPacketConn) datagrams() (in, out [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.in), slices.Clone(c.out)
}
