package testkit

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"
)

// Quiet returns a logger that drops everything.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// DefaultWait bounds WaitFor: long enough that only a hang reaches it on
// a loaded machine.
const DefaultWait = 20 * time.Second

// WaitFor polls cond until it holds, failing the test if DefaultWait
// passes first.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitWithin(t, DefaultWait, what, cond)
}

// WaitWithin polls cond until it holds, failing the test if d passes
// first. d bounds a hang, not a speed, so it should be generous.
func WaitWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Listen listens on a free loopback port until the test ends and hands
// each connection it accepts to the test on the returned channel; every
// one is closed when the test ends.
func Listen(t testing.TB) (addr string, accepted <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			conns <- c
		}
	}()
	return ln.Addr().String(), conns
}

// CountingReader counts the bytes read from R through it in N, so a test
// sees how far a decoder read.
type CountingReader struct {
	R io.Reader
	N int
}

// Read reads from R and adds what it got to N.
func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += n
	return n, err
}

// DeadAddr is a loopback address that refuses connections at once: a
// port listened on and closed again just now.
func DeadAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}
