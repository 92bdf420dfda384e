package testkit

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// dialThrough dials the relay and returns the client end and the
// target's end of the new connection.
func dialThrough(t *testing.T, r *Relay, accepted <-chan net.Conn) (client, target net.Conn) {
	t.Helper()
	n := len(r.Conns())
	client, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	// The relay registers a connection once the target has accepted it
	// (and before a byte passes).
	WaitFor(t, "the relay to register the connection", func() bool { return len(r.Conns()) > n })
	select {
	case target = <-accepted:
	case <-time.After(DefaultWait):
		t.Fatal("the relay did not dial the target")
	}
	return client, target
}

func send(t *testing.T, from, to net.Conn, msg []byte) {
	t.Helper()
	if _, err := from.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	_ = to.SetReadDeadline(time.Now().Add(DefaultWait))
	if _, err := io.ReadFull(to, got); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("read %q, %v; want %q", got, err, msg)
	}
}

// TestRelayForwardsAndCounts: bytes go both ways unchanged and each
// connection counts its own.
func TestRelayForwardsAndCounts(t *testing.T) {
	addr, accepted := Listen(t)
	r := StartRelay(t, addr)
	c1, t1 := dialThrough(t, r, accepted)
	c2, t2 := dialThrough(t, r, accepted)
	send(t, c1, t1, []byte("hello host"))
	send(t, t1, c1, []byte("hello client, a longer answer"))
	send(t, t2, c2, []byte("second"))
	conns := r.Conns()
	if len(conns) != 2 || conns[0].Index() != 0 || conns[1].Index() != 1 {
		t.Fatalf("%d connections, want 2 in order", len(conns))
	}
	// A count follows its write, so it may lag the read a moment.
	WaitFor(t, "counts up/down 10/29 and 0/6", func() bool {
		return conns[0].Up() == 10 && conns[0].Down() == 29 && conns[1].Up() == 0 && conns[1].Down() == 6
	})
	// The target hanging up reaches the client as the end of the stream.
	t1.Close()
	_ = c1.SetReadDeadline(time.Now().Add(DefaultWait))
	if n, err := c1.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after the target closed: %d bytes, %v; want EOF", n, err)
	}
}

// TestRelayCutAfter: the client gets exactly n bytes of what the target
// sends and then the end of the stream; the target's side is reset; the
// rule applies to the connection it names only.
func TestRelayCutAfter(t *testing.T) {
	addr, accepted := Listen(t)
	r := StartRelay(t, addr)
	r.CutAfter(0, 1000)
	client, target := dialThrough(t, r, accepted)
	sent := bytes.Repeat([]byte("0123456789"), 300)
	if _, err := target.Write(sent[:700]); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 700)
	_ = client.SetReadDeadline(time.Now().Add(DefaultWait))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if _, err := target.Write(sent[700:]); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(client)
	if err != nil {
		t.Fatalf("the client's stream ended with %v, want EOF", err)
	}
	got = append(got, rest...)
	if !bytes.Equal(got, sent[:1000]) {
		t.Fatalf("client got %d bytes, want the first 1000", len(got))
	}
	conns := r.Conns()
	if !conns[0].Cut() || conns[0].Down() != 1000 {
		t.Fatalf("cut %v after %d bytes, want cut after 1000", conns[0].Cut(), conns[0].Down())
	}
	_ = target.SetReadDeadline(time.Now().Add(DefaultWait))
	if _, err := io.ReadAll(target); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the target read %v after the cut, want a connection reset", err)
	}
	client.Close()
	select {
	case <-conns[0].Done():
	case <-time.After(DefaultWait):
		t.Fatal("the cut connection did not end after the client closed")
	}
	// The next connection is not cut.
	c2, t2 := dialThrough(t, r, accepted)
	send(t, t2, c2, sent)
	if r.Conns()[1].Cut() {
		t.Fatal("the second connection was cut")
	}
}

// TestRelayCutLive: a rule set on a live connection that has already
// forwarded more cuts it at once.
func TestRelayCutLive(t *testing.T) {
	addr, accepted := Listen(t)
	r := StartRelay(t, addr)
	client, target := dialThrough(t, r, accepted)
	send(t, target, client, []byte("twelve bytes"))
	r.CutAfter(0, 5)
	_ = client.SetReadDeadline(time.Now().Add(DefaultWait))
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after a cut: %d bytes, %v; want EOF", n, err)
	}
}

// TestRelayStall: a stalled relay forwards nothing and closes nothing;
// resuming delivers what was held, in order.
func TestRelayStall(t *testing.T) {
	addr, accepted := Listen(t)
	r := StartRelay(t, addr)
	client, target := dialThrough(t, r, accepted)
	r.Stall(true)
	if _, err := target.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	// Wait until the relay holds the bytes, then check none went through.
	c := r.Conns()[0]
	WaitFor(t, "the relay to hold the bytes", func() bool { return c.Held() == 4 })
	if c.Down() != 0 {
		t.Fatalf("%d bytes forwarded while stalled", c.Down())
	}
	_ = client.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := client.Read(make([]byte, 8)); n != 0 || !errors.Is(err, timeoutErr(err)) {
		t.Fatalf("read %d bytes (%v) through a stalled relay", n, err)
	}
	r.Stall(false)
	got := make([]byte, 4)
	_ = client.SetReadDeadline(time.Now().Add(DefaultWait))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "held" {
		t.Fatalf("after resuming: %q, %v", got, err)
	}
	// The count follows the write, so it may lag the read a moment.
	WaitFor(t, "the counts to show the bytes forwarded", func() bool { return c.Held() == 0 && c.Down() == 4 })

	// A hang-up is held too: the target's end of the stream reaches the
	// client only on resuming.
	r.Stall(true)
	target.Close()
	WaitFor(t, "the relay to see the target's hang-up", func() bool { return c.readsEnded.Load() == 1 })
	_ = client.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := client.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %v through a stalled relay after the target hung up, want nothing", err)
	}
	r.Stall(false)
	_ = client.SetReadDeadline(time.Now().Add(DefaultWait))
	if _, err := client.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after resuming: %v, want EOF", err)
	}
}

// timeoutErr returns err if it is a timeout, for errors.Is above.
func timeoutErr(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return err
	}
	return errors.New("not a timeout")
}

// TestRelayReset: ResetAll fails both ends, as a network failure does.
func TestRelayReset(t *testing.T) {
	addr, accepted := Listen(t)
	r := StartRelay(t, addr)
	client, target := dialThrough(t, r, accepted)
	send(t, client, target, []byte("hi"))
	if r.Conns()[0].WasReset() {
		t.Fatal("WasReset before any reset")
	}
	if n := r.ResetAll(); n != 1 || !r.Conns()[0].WasReset() {
		t.Fatalf("reset %d connections (WasReset %v), want 1", n, r.Conns()[0].WasReset())
	}
	for name, c := range map[string]net.Conn{"client": client, "target": target} {
		_ = c.SetReadDeadline(time.Now().Add(DefaultWait))
		if _, err := io.ReadAll(c); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s: read %v after a reset, want a connection reset", name, err)
		}
	}
	if n := r.ResetAll(); n != 0 {
		t.Fatalf("second reset: %d connections, want 0", n)
	}
}

// TestWaitWithin fails the test when the condition never holds.
func TestWaitWithin(t *testing.T) {
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		WaitWithin(ft, 20*time.Millisecond, "never", func() bool { return false })
	}()
	<-done
	if !ft.failed {
		t.Fatal("WaitWithin returned without failing for a condition that never holds")
	}
	WaitFor(t, "at once", func() bool { return true })
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit()
}

// TestListen: each connection made to the address arrives on the
// channel, in order, joined to the dialler's end.
func TestListen(t *testing.T) {
	addr, accepted := Listen(t)
	for i := range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var got net.Conn
		select {
		case got = <-accepted:
		case <-time.After(DefaultWait): // bounds a hang only
			t.Fatalf("connection %d did not arrive", i)
		}
		if got.RemoteAddr().String() != c.LocalAddr().String() {
			t.Fatalf("connection %d: accepted %v, dialled from %v", i, got.RemoteAddr(), c.LocalAddr())
		}
		send(t, c, got, []byte("ping"))
	}
}

// TestCountingReader counts what passes through, and no more.
func TestCountingReader(t *testing.T) {
	r := &CountingReader{R: bytes.NewReader([]byte("twelve bytes"))}
	if _, err := io.ReadFull(r, make([]byte, 5)); err != nil || r.N != 5 {
		t.Fatalf("after 5 bytes: N %d, %v", r.N, err)
	}
	if rest, err := io.ReadAll(r); err != nil || len(rest) != 7 || r.N != 12 {
		t.Fatalf("after the rest: N %d, %d more bytes, %v", r.N, len(rest), err)
	}
}
