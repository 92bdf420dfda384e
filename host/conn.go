package host

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// conn is one client connection's sending side and its single close.
// Small packets go through a bounded queue; the world payload is streamed
// by the writer chunk by chunk, with queued small packets sent first so a
// downloading client keeps receiving ticks and notices.
type conn struct {
	nc           net.Conn
	log          *slog.Logger
	writeTimeout time.Duration

	ctrl     chan []byte
	transfer chan *transfer // the next payload to stream (capacity 1)
	queued   atomic.Int64   // bytes in ctrl not yet written
	maxBytes int64

	closeOnce sync.Once
	closing   chan struct{}  // closed when close starts
	done      chan struct{}  // closed when the writer has exited
	final     []byte         // disconnect frame to send before closing
	why       string         // why it closed, for the other players
	sent      *atomic.Uint64 // counts bytes written, if set
	// codec is what this client's payloads (join and repairs) are
	// compressed with: the host's codec if the client reads it, else
	// gzip. Set in the handshake, before admission.
	codec snapshot.Codec
}

func newConn(nc net.Conn, queue int, maxBytes int64, writeTimeout time.Duration, log *slog.Logger) *conn {
	c := &conn{
		nc:           nc,
		maxBytes:     maxBytes,
		log:          log,
		writeTimeout: writeTimeout,
		ctrl:         make(chan []byte, queue),
		transfer:     make(chan *transfer, 1),
		closing:      make(chan struct{}),
		done:         make(chan struct{}),
	}
	go c.writeLoop()
	return c
}

// send queues a frame without blocking. A full queue means the client
// cannot keep up: it is disconnected rather than allowed to stall anyone.
func (c *conn) send(frame []byte) bool {
	select {
	case <-c.closing:
		return false
	default:
	}
	if c.queued.Add(int64(len(frame))) > c.maxBytes {
		c.close(wire.ReasonSlowClient, fmt.Sprintf("over %d bytes waiting to be sent", c.maxBytes))
		return false
	}
	select {
	case c.ctrl <- frame:
		return true
	default:
		c.close(wire.ReasonSlowClient, "send queue full")
		return false
	}
}

// sendPacket marshals and queues p.
func (c *conn) sendPacket(p wire.Packet) bool {
	b, err := wire.Marshal(nil, p)
	if err != nil {
		c.log.Error("encode packet", "packet", p.ID(), "err", err)
		c.close(wire.ReasonGeneric, "internal error")
		return false
	}
	return c.send(b)
}

// startTransfer hands a payload's transfer to the writer, which streams
// it after the one under way, if any.
func (c *conn) startTransfer(t *transfer) {
	select {
	case c.transfer <- t:
	case <-c.closing:
	}
}

// close ends the connection once, sending a disconnect with reason first.
// Later calls do nothing; the first reason is the one remembered.
func (c *conn) close(reason wire.Reason, why string) {
	msg := reason.Sentence()
	if why != "" {
		msg += " (" + why + ")"
	}
	c.closeWith(&wire.ServerDisconnect{Reason: reason, Message: msg}, why)
}

// closeWith ends the connection once with a prepared disconnect packet;
// why is what other players are told. A nil d sends nothing (the peer is
// gone already).
func (c *conn) closeWith(d *wire.ServerDisconnect, why string) {
	c.closeOnce.Do(func() {
		c.why = why
		if d != nil {
			c.final, _ = wire.Marshal(nil, d)
		}
		close(c.closing)
	})
}

func (c *conn) write(b []byte) error {
	if c.writeTimeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	n, err := c.nc.Write(b)
	c.count(int64(n))
	return err
}

func (c *conn) count(n int64) {
	if c.sent != nil && n > 0 {
		c.sent.Add(uint64(n))
	}
}

// writev writes parts as one frame with a single system call where the
// connection allows it.
func (c *conn) writev(parts ...[]byte) error {
	if c.writeTimeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	bufs := net.Buffers(parts)
	n, err := bufs.WriteTo(c.nc)
	c.count(n)
	return err
}

func (c *conn) writeLoop() {
	defer close(c.done)
	defer c.nc.Close()
	var (
		t      *transfer // the payload being streamed, if any
		offset uint64
		frame  []byte
	)
	fail := func(err error) {
		c.log.Debug("write failed", "err", err)
		c.closeWith(nil, "connection lost")
	}
	for {
		// Small packets first.
		select {
		case <-c.closing:
			c.flushFinal()
			return
		case b := <-c.ctrl:
			c.queued.Add(-int64(len(b)))
			if err := c.write(b); err != nil {
				fail(err)
				return
			}
			continue
		default:
		}
		if t != nil && !t.ahead(offset) {
			// The chunk goes out as a small header plus the shared blob
			// bytes themselves: nothing is copied or encoded per joiner.
			data := t.pl.Chunk(offset, wire.MaxChunkData)
			frame = wire.AppendWorldDataHeader(frame[:0], offset, t.pl.Total(), len(data))
			if err := c.writev(frame, data); err != nil {
				fail(err)
				return
			}
			offset += uint64(len(data))
			t.wrote(offset)
			if offset >= t.pl.Total() {
				t = nil
			}
			continue
		}
		next, wake := c.transfer, (chan struct{})(nil)
		if t != nil {
			next, wake = nil, t.wake // one payload at a time; wait for an acknowledgement
		}
		select {
		case <-c.closing:
			c.flushFinal()
			return
		case b := <-c.ctrl:
			c.queued.Add(-int64(len(b)))
			if err := c.write(b); err != nil {
				fail(err)
				return
			}
		case t = <-next:
			offset = 0
		case <-wake:
		}
	}
}

// flushFinal sends the disconnect frame, giving a slow peer a short grace.
func (c *conn) flushFinal() {
	if c.final != nil && sendFinal(c.nc, c.final) {
		c.count(int64(len(c.final)))
	}
}

// sendFinal writes a last frame and half-closes, then waits briefly for the
// peer to hang up: closing a socket with unread input resets it, and the
// peer could lose the frame. It reports whether the frame was written.
func sendFinal(nc net.Conn, frame []byte) bool {
	_ = nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
	if _, err := nc.Write(frame); err != nil {
		return false
	}
	if tc, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		_ = nc.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = io.Copy(io.Discard, io.LimitReader(nc, 4<<20))
	}
	return true
}
