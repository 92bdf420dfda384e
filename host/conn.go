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
	path         string // the way it came (connPath); set before it is shared
	log          *slog.Logger
	writeTimeout time.Duration

	ctrl     chan []byte
	transfer chan *transfer // the next payload to stream (capacity 1)
	queued   atomic.Int64   // bytes in ctrl not yet written
	room     chan struct{}  // a signal (capacity 1) that the writer took a frame from ctrl
	maxBytes int64

	closeOnce sync.Once
	closing   chan struct{}  // closed when close starts
	done      chan struct{}  // closed when the writer has exited
	final     []byte         // disconnect frame to send before closing
	why       string         // why it closed, for the other players
	left      atomic.Bool    // the client sent Client_Leave: set before the close
	sent      *atomic.Uint64 // counts bytes written, if set
	// up is the host's uplink, which paces every connection's world
	// chunks together; nil: no pacing.
	up *uplink
	// codec is what this client's payloads (join and repairs) are
	// compressed with: the host's codec if the client reads it, else
	// gzip. Set in the handshake, before admission.
	codec snapshot.Codec
	// explain is the explanation waiting for this client's answer, if
	// any (explain.go): set by the explaining goroutine, filled by the
	// reader. explainSeq numbers the requests.
	explain    atomic.Pointer[explainWait]
	explainSeq atomic.Uint32
}

func newConn(nc net.Conn, queue int, maxBytes int64, writeTimeout time.Duration, log *slog.Logger) *conn {
	c := &conn{
		nc:           nc,
		maxBytes:     maxBytes,
		log:          log,
		writeTimeout: writeTimeout,
		ctrl:         make(chan []byte, queue),
		room:         make(chan struct{}, 1),
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

// sendWithin queues a frame once at most limit bytes wait before it,
// waiting for the writer to take frames meanwhile: for a sender that
// paces itself on the reader (content chunks) rather than being dropped
// as slow. It reports false when the connection closed first.
func (c *conn) sendWithin(frame []byte, limit int64) bool {
	for c.queued.Load() > 0 && c.queued.Load()+int64(len(frame)) > limit {
		select {
		case <-c.room:
		case <-c.closing:
			return false
		}
	}
	return c.send(frame)
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

// isClosing reports whether close has been called.
func (c *conn) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
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

// stream is the writer's state of the payload it streams, if any.
type stream struct {
	t      *transfer // the payload being streamed, if any
	offset uint64
	frame  []byte
	data   []byte    // the next chunk, granted by the uplink and not yet written
	at     time.Time // when the uplink lets data go
	timer  *time.Timer
}

// due is a channel that fires when a granted chunk may go (at once if
// its time passed since the writer looked), or nil when none waits.
func (st *stream) due() <-chan time.Time {
	if st.data == nil {
		return nil
	}
	d := max(time.Until(st.at), 0)
	if st.timer == nil {
		st.timer = time.NewTimer(d)
	} else {
		st.timer.Reset(d)
	}
	return st.timer.C
}

// writeFailGrace is how long a failed write waits for the reader's word
// before the connection counts as lost.
const writeFailGrace = 500 * time.Millisecond

// awaitReader gives the reader, after a write failed, up to
// writeFailGrace to end the connection itself: what the peer sent before
// it went (a leave) may still be unread. A WebSocket fails writes as soon
// as its reader has taken the peer's close frame, while the leave before
// that frame still waits for the host's reader.
func (c *conn) awaitReader() {
	t := time.NewTimer(writeFailGrace)
	defer t.Stop()
	select {
	case <-c.closing:
	case <-t.C:
	}
}

func (c *conn) writeLoop() {
	defer close(c.done)
	defer c.nc.Close()
	st := &stream{}
	defer func() {
		if st.timer != nil {
			st.timer.Stop()
		}
	}()
	fail := func(err error) {
		c.log.Debug("write failed", "err", err)
		c.awaitReader()
		c.closeWith(nil, "connection lost")
	}
	for {
		// Small packets first: they never wait for the uplink.
		select {
		case <-c.closing:
			c.flushFinal()
			return
		case b := <-c.ctrl:
			if err := c.writeCtrl(b); err != nil {
				fail(err)
				return
			}
			continue
		default:
		}
		if st.t != nil && !st.t.ahead(st.offset) {
			c.grant(st)
			if !st.at.After(time.Now()) {
				if err := c.writeChunk(st); err != nil {
					fail(err)
					return
				}
				continue
			}
		}
		next, wake := c.transfer, (chan struct{})(nil)
		if st.t != nil {
			next, wake = nil, st.t.wake // one payload at a time; wait for an acknowledgement
		}
		select {
		case <-c.closing:
			c.flushFinal()
			return
		case b := <-c.ctrl:
			if err := c.writeCtrl(b); err != nil {
				fail(err)
				return
			}
		case st.t = <-next:
			st.offset = 0
		case <-wake:
		case <-st.due():
		}
	}
}

// writeCtrl writes one small packet.
func (c *conn) writeCtrl(b []byte) error {
	c.queued.Add(-int64(len(b)))
	signal(c.room)
	return c.write(b)
}

// grant takes the next chunk of the stream from the uplink, unless one is
// granted already: the chunk and the time it may go.
func (c *conn) grant(st *stream) {
	if st.data != nil {
		return
	}
	st.data = st.t.pl.Chunk(st.offset, c.up.chunk(wire.MaxChunkData))
	st.at = time.Time{}
	if c.up != nil {
		st.at = c.up.take(len(st.data))
	}
}

// writeChunk writes the granted chunk: a small header plus the shared
// blob bytes themselves, nothing copied or encoded per joiner.
func (c *conn) writeChunk(st *stream) error {
	t := st.t
	st.frame = wire.AppendWorldDataHeader(st.frame[:0], st.offset, t.pl.Total(), len(st.data))
	if err := c.writev(st.frame, st.data); err != nil {
		return err
	}
	st.offset += uint64(len(st.data))
	st.data = nil
	t.wrote(st.offset)
	if st.offset >= t.pl.Total() {
		st.t = nil
	}
	return nil
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
		// The deadline alone does not bound the wait: another goroutine
		// may move it meanwhile (a download's deadline is cleared while
		// it waits for a slot), and the peer's reader may hold the read
		// lock. Past the grace, the socket is closed, as it is next anyway.
		stop := time.AfterFunc(1500*time.Millisecond, func() { _ = nc.Close() })
		_, _ = io.Copy(io.Discard, io.LimitReader(nc, 4<<20))
		stop.Stop()
	}
	return true
}
