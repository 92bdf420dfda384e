package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// relay forwards the TCP connections made to its own loopback address to
// the host, byte for byte. Each bot slot dials the host through one, so
// the soak can kill a bot's connection under it (cut): both ends get a
// reset, as when a network drops, and neither side says goodbye.
type relay struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// newRelay listens on a free loopback port and forwards to target.
func newRelay(target string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay listen: %w", err)
	}
	r := &relay{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// addr is the address to dial instead of the host's.
func (r *relay) addr() string { return r.ln.Addr().String() }

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return // closed
		}
		up, err := net.DialTimeout("tcp", r.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		if !r.track(c, up) {
			c.Close()
			up.Close()
			return
		}
		r.wg.Add(2)
		go r.pipe(up, c)
		go r.pipe(c, up)
	}
}

// track registers a forwarded pair; false once the relay is closed.
func (r *relay) track(cs ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	for _, c := range cs {
		r.conns[c] = struct{}{}
	}
	return true
}

// pipe copies src to dst; when either side ends, both are closed (the
// other pipe then ends too).
func (r *relay) pipe(dst, src net.Conn) {
	defer r.wg.Done()
	_, _ = io.Copy(dst, src)
	r.mu.Lock()
	delete(r.conns, dst)
	delete(r.conns, src)
	r.mu.Unlock()
	dst.Close()
	src.Close()
}

// cut resets every connection through the relay, both towards the bot and
// towards the host, and returns how many it reset.
func (r *relay) cut() int {
	r.mu.Lock()
	conns := make([]net.Conn, 0, len(r.conns))
	for c := range r.conns {
		conns = append(conns, c)
	}
	r.mu.Unlock()
	// Every socket first, so a pipe that ends on the first close resets
	// its other side too.
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close with a reset, not a goodbye
		}
	}
	for _, c := range conns {
		c.Close()
	}
	return len(conns)
}

// close stops listening, resets what is left and waits for every
// goroutine of the relay.
func (r *relay) close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	err := r.ln.Close()
	r.cut()
	r.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
