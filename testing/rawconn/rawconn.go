// Package rawconn is a client connection spoken one packet at a time,
// for the benchmarks and the soak that play clients the join library
// would not be (slow readers, stallers, hostile players): it frames and
// decodes packets and answers the host's clock rounds and keepalives as
// any client must, and leaves everything else to its caller.
package rawconn

import (
	"bufio"
	"net"
	"sync"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// WriteTimeout bounds one Send.
const WriteTimeout = 10 * time.Second

// Conn is a connection to a host. Send may be called from any goroutine;
// Next from one at a time.
type Conn struct {
	nc  net.Conn
	fr  *wire.FrameReader
	wmu sync.Mutex
}

// New speaks packets over nc, reading frames of at most
// wire.DefaultMaxFrame.
func New(nc net.Conn) *Conn {
	return &Conn{nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)}
}

// NetConn is the connection underneath.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Send writes one packet within WriteTimeout.
func (c *Conn) Send(p wire.Packet) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	_, err := c.nc.Write(wire.MustMarshal(p))
	return err
}

// Next reads the next packet that is not a clock round or a keepalive,
// answering those as it goes.
func (c *Conn) Next() (wire.Packet, error) {
	for {
		id, body, err := c.fr.Next()
		if err != nil {
			return nil, err
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			return nil, err
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			err = c.Send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
		case *wire.ServerKeepalive:
			err = c.Send(&wire.ClientKeepalive{Seq: p.Seq, HostTime: p.HostTime})
		default:
			return p, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
