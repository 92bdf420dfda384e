package ice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/pion/datachannel"
	"github.com/pion/webrtc/v4"
)

// MessageSize is the most one data channel message carries: a write is
// split into messages of at most this size, which every browser accepts.
const MessageSize = 16 << 10

// maxMessage is the largest message this side accepts (it says so in its
// session description, as max-message-size): a peer that splits the
// stream more coarsely than MessageSize still fits.
const maxMessage = 64 << 10

// The write side waits while more than highWater bytes are queued on the
// channel, until the queue drains to lowWater: a slow peer holds at most
// about highWater bytes of this side's memory.
const (
	highWater = 1 << 20
	lowWater  = 256 << 10
)

// readAhead is how many messages the reader goroutine holds that Read has
// not taken; beyond that the channel's receive window fills and the peer
// waits.
const readAhead = 4

// errText ends a connection whose peer sent a text message.
var errText = errors.New("the peer sent a text message; the protocol is binary")

// Conn is a connection over a data channel: the protocol's byte stream as
// a net.Conn. Its deadlines behave as a TCP connection's: one that passes
// fails the call waiting on it with os.ErrDeadlineExceeded and the
// connection stays usable. One goroutine reads at a time, and one writes.
type Conn struct {
	pc     *webrtc.PeerConnection
	dc     *webrtc.DataChannel
	rw     datachannel.ReadWriteCloser
	path   Path
	local  net.Addr
	remote net.Addr
	// peerRelayed: remote is the peer's relay candidate, an address of
	// its TURN server, not the peer's own.
	peerRelayed bool

	msgs chan []byte // read by the reader goroutine, not yet by Read
	free chan []byte // buffers Read is done with
	cur  []byte      // the message Read is returning
	off  int         // how much of cur Read has returned
	rdl  deadline

	low chan struct{} // the queue drained to lowWater
	wdl deadline

	closed    chan struct{}
	readDone  chan struct{} // closed when the reader goroutine stops
	closeOnce sync.Once
	mu        sync.Mutex
	why       error // why the connection ended; guarded by mu
}

// newConn wraps the open, detached channel rw of dc on pc.
func newConn(pc *webrtc.PeerConnection, dc *webrtc.DataChannel, rw datachannel.ReadWriteCloser, path Path, local, remote net.Addr) *Conn {
	c := &Conn{pc: pc, dc: dc, rw: rw, path: path, local: local, remote: remote,
		msgs: make(chan []byte, readAhead), free: make(chan []byte, readAhead+2),
		low: make(chan struct{}, 1), closed: make(chan struct{}), readDone: make(chan struct{})}
	c.rdl.init()
	c.wdl.init()
	for range readAhead + 2 {
		c.free <- make([]byte, maxMessage)
	}
	dc.SetBufferedAmountLowThreshold(lowWater)
	dc.OnBufferedAmountLow(func() {
		select {
		case c.low <- struct{}{}:
		default:
		}
	})
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateFailed || s == webrtc.PeerConnectionStateClosed {
			c.end(fmt.Errorf("ice: the connection %s", s))
		}
	})
	go c.readLoop()
	return c
}

// Path is the way the connection took.
func (c *Conn) Path() Path { return c.path }

// PeerRelayed says the peer's end of the connection is a TURN relay:
// RemoteAddr is then an address of the relay, shared by every peer it
// relays (one port per peer), not the peer's own.
func (c *Conn) PeerRelayed() bool { return c.peerRelayed }

// readLoop reads the channel's messages for Read until the channel ends.
func (c *Conn) readLoop() {
	type textReader interface {
		ReadDataChannel([]byte) (int, bool, error)
	}
	tr, _ := c.rw.(textReader)
	defer close(c.readDone)
	for {
		var b []byte
		select {
		case b = <-c.free:
		case <-c.closed:
			c.discard()
			return
		}
		var n int
		var text bool
		var err error
		if tr != nil {
			n, text, err = tr.ReadDataChannel(b)
		} else {
			n, err = c.rw.Read(b)
		}
		switch {
		case err != nil:
			c.end(err)
			return
		case text:
			c.end(errText)
			return
		case n == 0:
			c.free <- b
			continue
		}
		select {
		case c.msgs <- b[:n]:
		case <-c.closed:
			c.discard()
			return
		}
	}
}

// discard reads the ended connection's channel until it is closed, so
// that the reader stops when the channel does.
func (c *Conn) discard() {
	b := make([]byte, maxMessage)
	for {
		if _, err := c.rw.Read(b); err != nil {
			return
		}
	}
}

// Read returns the stream's next bytes.
func (c *Conn) Read(p []byte) (int, error) {
	if err := c.Err(); errors.Is(err, net.ErrClosed) {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.cur == nil {
		var err error
		if c.cur, err = c.next(); err != nil {
			return 0, err
		}
		c.off = 0
	}
	n := copy(p, c.cur[c.off:])
	c.off += n
	if c.off == len(c.cur) {
		c.free <- c.cur[:cap(c.cur)]
		c.cur = nil
	}
	return n, nil
}

// next waits for the next message, the read deadline or the end.
func (c *Conn) next() ([]byte, error) {
	for {
		// A message that arrived before the end is still delivered.
		select {
		case b := <-c.msgs:
			return b, nil
		default:
		}
		fire, stop, changed, err := c.rdl.wait()
		if err != nil {
			return nil, err
		}
		select {
		case b := <-c.msgs:
			stop()
			return b, nil
		case <-c.closed:
			stop()
			select {
			case b := <-c.msgs:
				return b, nil
			default:
				return nil, c.reason()
			}
		case <-fire:
		case <-changed:
			stop()
		}
	}
}

// Write sends p as messages of at most MessageSize bytes, waiting while
// the channel's queue is full.
func (c *Conn) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := c.room(); err != nil {
			return n, err
		}
		m := min(len(p), MessageSize)
		if _, err := c.rw.Write(p[:m]); err != nil {
			c.end(err)
			return n, c.reason()
		}
		n += m
		p = p[m:]
	}
	return n, nil
}

// room waits until the channel's queue is below highWater, the write
// deadline passes or the connection ends.
func (c *Conn) room() error {
	for {
		select {
		case <-c.closed:
			return c.reason()
		default:
		}
		if c.dc.BufferedAmount() <= highWater {
			return nil
		}
		fire, stop, changed, err := c.wdl.wait()
		if err != nil {
			return err
		}
		select {
		case <-c.low:
		case <-c.closed:
		case <-fire:
		case <-changed:
		}
		stop()
	}
}

// end ends the connection, remembering why (the first reason only).
func (c *Conn) end(why error) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.why = why
		c.mu.Unlock()
		close(c.closed)
		tearing.Add(1)
		go c.teardown(errors.Is(why, net.ErrClosed), tearing.Done)
	})
}

// tearing counts the connections of this process whose teardown has
// not yet sent what was written before Close.
var tearing sync.WaitGroup

// Drain waits until every connection this process has ended has sent
// what was written before Close, acknowledged by the peer (each within
// closeLinger), or until ctx ends. The rest of a close (the channel's
// closing handshake, the ICE agent's) may go on after. Close returns at once and
// sends the rest in the background, as a kernel goes on sending a closed
// TCP socket's data; but nothing sends once the process has exited, so a
// program calls Drain before it exits, or its last words may be lost.
func Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		tearing.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ice: connections still closing: %w", ctx.Err())
	}
}

// closeLinger bounds how long a closed connection goes on sending what
// was written before Close, and then waits for the peer to close its
// side of the channel.
const closeLinger = 5 * time.Second

// teardown closes the channel and the peer connection; when this side
// closed (flush), after the queue has drained (the peer acknowledged
// every byte) and the peer has answered the channel's close, within
// closeLinger. It calls sent once nothing written is left to send.
func (c *Conn) teardown(flush bool, sent func()) {
	if flush {
		give := time.Now().Add(closeLinger)
		for c.dc.BufferedAmount() > 0 && time.Now().Before(give) && !c.peerGone() {
			time.Sleep(5 * time.Millisecond)
		}
		c.rw.Close()
		sent()
		select {
		case <-c.readDone:
		case <-time.After(time.Until(give)):
		}
	} else {
		sent()
	}
	c.rw.Close()
	c.pc.Close()
}

// peerGone says the peer connection has closed or failed: nothing more
// can be sent.
func (c *Conn) peerGone() bool {
	s := c.pc.ConnectionState()
	return s == webrtc.PeerConnectionStateClosed || s == webrtc.PeerConnectionStateFailed
}

// reason is why the connection ended: io.EOF when the peer closed it,
// net.ErrClosed when this side did.
func (c *Conn) reason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.why
}

// Err is why the connection ended, or nil while it is open.
func (c *Conn) Err() error {
	select {
	case <-c.closed:
		return c.reason()
	default:
		return nil
	}
}

// Close ends the connection. What was written before it is still sent
// (for up to closeLinger), then the channel is closed, and the peer reads
// io.EOF after the last byte.
func (c *Conn) Close() error {
	select {
	case <-c.closed:
		return nil
	default:
	}
	c.end(net.ErrClosed)
	return nil
}

// LocalAddr is this side's address in the selected candidate pair.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr is the peer's address in the selected candidate pair (a TURN
// server's relayed address when the peer's side is relayed).
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.rdl.set(t)
	c.wdl.set(t)
	return nil
}

// SetReadDeadline sets the read deadline.
func (c *Conn) SetReadDeadline(t time.Time) error { c.rdl.set(t); return nil }

// SetWriteDeadline sets the write deadline: it bounds a write's wait
// for room in the channel's queue.
func (c *Conn) SetWriteDeadline(t time.Time) error { c.wdl.set(t); return nil }

// deadline is a net.Conn deadline that a waiting call sees change.
type deadline struct {
	mu      sync.Mutex
	t       time.Time
	changed chan struct{} // closed when t changes
}

func (d *deadline) init() { d.changed = make(chan struct{}) }

func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.t = t
	close(d.changed)
	d.changed = make(chan struct{})
}

// wait returns a channel that fires at the deadline (nil when there is
// none), a function that stops it, and a channel closed when the deadline
// changes; or os.ErrDeadlineExceeded when the deadline has passed.
func (d *deadline) wait() (<-chan time.Time, func(), <-chan struct{}, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.t.IsZero() {
		return nil, func() {}, d.changed, nil
	}
	left := time.Until(d.t)
	if left <= 0 {
		return nil, nil, nil, os.ErrDeadlineExceeded
	}
	t := time.NewTimer(left)
	return t.C, func() { t.Stop() }, d.changed, nil
}

var _ net.Conn = (*Conn)(nil)
var _ io.ReadWriteCloser = (*Conn)(nil)
