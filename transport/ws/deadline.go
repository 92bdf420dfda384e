package ws

import (
	"net"
	"os"
	"sync"
	"time"
)

// The WebSocket library ends a connection when a read deadline passes
// during a read (it cancels the read, and a cancelled read closes the
// connection without a close frame), where a TCP connection only fails
// that read. The host relies on the TCP behaviour: a joiner that misses a
// deadline is sent Server_Disconnect with reason Timeout and then closed.
// So the host's side reads the WebSocket on a goroutine of its own that
// never has a deadline, and Read keeps the deadline itself.

// pumpChunk is the most one read of the pump takes from the WebSocket.
const pumpChunk = 16 << 10

// readPump reads from a WebSocket connection with deadlines of its own.
type readPump struct {
	src    net.Conn      // read only by the pump
	chunks chan []byte   // read by the pump, not yet by Read
	free   chan []byte   // buffers Read is done with
	done   chan struct{} // closed by stop
	err    error         // why the pump stopped; set before chunks is closed

	cur []byte // the chunk Read took from the pump
	off int    // how much of cur Read has returned

	mu       sync.Mutex
	deadline time.Time
	changed  chan struct{} // closed when the deadline changes
	stopOnce sync.Once
}

func newReadPump(src net.Conn) *readPump {
	r := &readPump{src: src, chunks: make(chan []byte, 1), free: make(chan []byte, 2),
		done: make(chan struct{}), changed: make(chan struct{})}
	r.free <- make([]byte, pumpChunk)
	r.free <- make([]byte, pumpChunk)
	go r.pump()
	return r
}

func (r *readPump) pump() {
	defer close(r.chunks)
	for {
		var b []byte
		select {
		case b = <-r.free:
		case <-r.done:
			r.err = net.ErrClosed
			return
		}
		n, err := r.src.Read(b)
		if n > 0 {
			select {
			case r.chunks <- b[:n]:
			case <-r.done:
				r.err = net.ErrClosed
				return
			}
		}
		if err != nil {
			r.err = err
			return
		}
		if n == 0 {
			r.free <- b
		}
	}
}

// Read returns what the pump read, or os.ErrDeadlineExceeded when the
// deadline passes first; the connection stays usable, as a TCP one does.
// One goroutine reads at a time.
func (r *readPump) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(r.cur) == r.off {
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.cur[r.off:])
	r.off += n
	if r.off == len(r.cur) {
		r.free <- r.cur[:cap(r.cur)] // never blocks: there are as many buffers as room
		r.cur, r.off = nil, 0
	}
	return n, nil
}

// next waits for the pump's next chunk within the deadline.
func (r *readPump) next() error {
	for {
		r.mu.Lock()
		d, changed := r.deadline, r.changed
		r.mu.Unlock()
		var expired <-chan time.Time
		var t *time.Timer
		if !d.IsZero() {
			wait := time.Until(d)
			if wait <= 0 {
				return os.ErrDeadlineExceeded
			}
			t = time.NewTimer(wait)
			expired = t.C
		}
		select {
		case b, ok := <-r.chunks:
			stopTimer(t)
			if !ok {
				return r.err
			}
			r.cur, r.off = b, 0
			return nil
		case <-expired:
			return os.ErrDeadlineExceeded
		case <-changed:
			stopTimer(t)
		}
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// setDeadline sets the deadline of Read, and wakes a Read waiting under
// the old one.
func (r *readPump) setDeadline(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadline = t
	close(r.changed)
	r.changed = make(chan struct{})
}

// stop ends the pump once the connection is closed.
func (r *readPump) stop() { r.stopOnce.Do(func() { close(r.done) }) }
