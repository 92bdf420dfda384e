package testkit

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Relay forwards every TCP connection made to its own loopback address to
// a target, byte for byte, counting the bytes each way. A test dials
// Addr instead of the target and can then stall the traffic (a cable
// pulled out: nothing moves and nobody hangs up), delay it, reset a
// connection (a network failure: both ends get a reset) or cut one after
// exactly n bytes from the target (the client reads those n bytes and
// then the end of the stream; the target gets a reset).
type Relay struct {
	ln     net.Listener
	target string
	delay  atomic.Int64 // time.Duration added to every piece
	stall  atomic.Bool
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  []*Conn
	cuts   map[int]int64 // connection index -> bytes towards the client before the cut
	closed bool
}

// NewRelay listens on a free loopback port and forwards to target until
// Close.
func NewRelay(target string) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay listen: %w", err)
	}
	r := &Relay{ln: ln, target: target, cuts: map[int]int64{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// StartRelay is NewRelay for a test: it fails the test if the relay
// cannot listen and closes the relay when the test ends.
func StartRelay(t testing.TB, target string) *Relay {
	t.Helper()
	r, err := NewRelay(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// Addr is the address to dial instead of the target's.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// SetDelay holds every piece read from now on for d before forwarding
// it, in both directions (a round trip gains 2d).
func (r *Relay) SetDelay(d time.Duration) { r.delay.Store(int64(d)) }

// Stall stops (true) or resumes (false) forwarding in every connection.
// While stalled nothing is written and nothing is closed: a side that
// hangs up is not told to the other. What arrives is held and forwarded
// in order on resuming.
func (r *Relay) Stall(on bool) { r.stall.Store(on) }

// CutAfter cuts connection i (counting from 0 in the order they were
// accepted, including ones not yet made) once n bytes have gone from the
// target to the client: the client reads exactly n bytes and then the end
// of the stream, and the target's connection is reset. On a connection
// that has already forwarded n bytes the cut comes at once.
func (r *Relay) CutAfter(i int, n int64) {
	r.mu.Lock()
	if i >= len(r.conns) {
		r.cuts[i] = n
		r.mu.Unlock()
		return
	}
	c := r.conns[i]
	r.mu.Unlock()
	c.limit.Store(n)
	c.passedLimit()
}

// Conns returns the connections accepted so far, in order.
func (r *Relay) Conns() []*Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Conn(nil), r.conns...)
}

// ResetAll resets every open connection through the relay on both sides
// and returns how many it reset.
func (r *Relay) ResetAll() int {
	n := 0
	for _, c := range r.Conns() {
		if c.Reset() {
			n++
		}
	}
	return n
}

// Close stops listening, resets every connection and waits for the
// relay's goroutines.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	err := r.ln.Close()
	r.ResetAll()
	r.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		client, err := r.ln.Accept()
		if err != nil {
			return // closed
		}
		up, err := net.DialTimeout("tcp", r.target, 10*time.Second)
		if err != nil {
			client.Close()
			continue
		}
		c := &Conn{r: r, client: client, host: up, done: make(chan struct{})}
		c.limit.Store(-1)
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			client.Close()
			up.Close()
			return
		}
		c.index = len(r.conns)
		if n, ok := r.cuts[c.index]; ok {
			c.limit.Store(n)
		}
		r.conns = append(r.conns, c)
		r.mu.Unlock()
		c.start()
	}
}

// Conn is one connection through a Relay.
type Conn struct {
	r            *Relay
	index        int
	client, host net.Conn
	down, up     atomic.Int64 // bytes forwarded to the client, to the target
	read         atomic.Int64 // bytes read from either side
	readsEnded   atomic.Int32 // sides that have ended (for tests)
	limit        atomic.Int64 // bytes to the client before the cut; -1: none
	cut, reset   atomic.Bool
	done         chan struct{}
}

// Index is the connection's place in accept order, from 0.
func (c *Conn) Index() int { return c.index }

// Down is how many bytes have been forwarded from the target to the
// client.
func (c *Conn) Down() int64 { return c.down.Load() }

// Up is how many bytes have been forwarded from the client to the target.
func (c *Conn) Up() int64 { return c.up.Load() }

// Held is how many bytes the relay has read from either side and not
// (yet) forwarded: while stalled, what it holds.
func (c *Conn) Held() int64 { return c.read.Load() - c.down.Load() - c.up.Load() }

// Cut reports whether the connection was cut by a CutAfter rule.
func (c *Conn) Cut() bool { return c.cut.Load() }

// WasReset reports whether the connection was reset by Reset, ResetAll
// or Close (and not only cut by a CutAfter rule).
func (c *Conn) WasReset() bool { return c.reset.Load() }

// Done is closed once both directions have ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Reset closes both sides with a reset, as a network failure does. It
// reports false if the connection had already ended.
func (c *Conn) Reset() bool {
	select {
	case <-c.done:
		return false
	default:
	}
	if c.reset.Swap(true) {
		return false
	}
	for _, nc := range []net.Conn{c.client, c.host} {
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
	}
	c.client.Close()
	c.host.Close()
	return true
}

func (c *Conn) start() {
	var both sync.WaitGroup
	both.Add(2)
	c.r.wg.Add(3)
	go func() { defer c.r.wg.Done(); defer both.Done(); c.pipe(c.host, c.client, &c.down, true) }()
	go func() { defer c.r.wg.Done(); defer both.Done(); c.pipe(c.client, c.host, &c.up, false) }()
	go func() {
		defer c.r.wg.Done()
		both.Wait()
		c.client.Close()
		c.host.Close()
		close(c.done)
	}()
}

type piece struct {
	at   time.Time
	data []byte
}

// pipe forwards src to dst. Reading and writing are apart, so a stall or
// a delay holds the data and not the reading.
func (c *Conn) pipe(src, dst net.Conn, count *atomic.Int64, toClient bool) {
	q := make(chan piece, 1024)
	go func() {
		defer close(q)
		defer c.readsEnded.Add(1)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				c.read.Add(int64(n))
				q <- piece{time.Now().Add(time.Duration(c.r.delay.Load())), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for p := range q {
		if failed {
			continue // keep reading src so it is not reset for unread data
		}
		time.Sleep(time.Until(p.at))
		c.waitStall()
		if toClient {
			p.data = c.clip(p.data)
		}
		if len(p.data) > 0 {
			n, err := dst.Write(p.data)
			count.Add(int64(n))
			failed = failed || err != nil
		}
		if toClient && c.passedLimit() {
			failed = true
		}
	}
	c.waitStall() // a stalled relay holds the end of the stream too
	if tc, ok := dst.(*net.TCPConn); ok && !failed && !c.reset.Load() {
		_ = tc.CloseWrite() // pass the end of the stream on
	}
}

// waitStall returns once the relay is not stalled or the connection has
// been reset.
func (c *Conn) waitStall() {
	for c.r.stall.Load() && !c.reset.Load() {
		time.Sleep(5 * time.Millisecond)
	}
}

// clip shortens b to what the cut rule lets through.
func (c *Conn) clip(b []byte) []byte {
	limit := c.limit.Load()
	if limit < 0 {
		return b
	}
	return b[:min(int64(len(b)), max(0, limit-c.down.Load()))]
}

// passedLimit cuts the connection, once, if it has forwarded all the cut
// rule lets through, and reports whether it is cut.
func (c *Conn) passedLimit() bool {
	limit := c.limit.Load()
	if limit < 0 || c.down.Load() < limit {
		return false
	}
	if !c.cut.Swap(true) {
		c.finishCut()
	}
	return true
}

// finishCut ends the stream to the client after the bytes let through and
// resets the target; the client's side stays open, drained, until the
// client closes it, so nothing it has not read is lost to a reset.
func (c *Conn) finishCut() {
	if tc, ok := c.client.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	if tc, ok := c.host.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.host.Close()
}
