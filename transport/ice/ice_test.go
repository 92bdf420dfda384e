package ice

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// loopback is the configuration of every test: candidates on the
// loopback interface only.
var loopback = Config{LoopbackOnly: true, Timeout: 15 * time.Second}

// connectPair connects a joiner (Dial) and a host (Accept) through a Pipe.
func connectPair(t testing.TB, joiner, host Config) (j, h *Conn) {
	t.Helper()
	js, hs := Pipe()
	type res struct {
		c   net.Conn
		err error
	}
	hc := make(chan res, 1)
	go func() {
		c, _, err := Accept(context.Background(), hs, host)
		hc <- res{c, err}
	}()
	jc, _, err := Dial(context.Background(), js, joiner)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	r := <-hc
	if r.err != nil {
		t.Fatalf("accept: %v", r.err)
	}
	t.Cleanup(func() { jc.Close(); r.c.Close() })
	return jc.(*Conn), r.c.(*Conn)
}

// pump writes n random bytes from seed to w in writes of random sizes
// up to max, and returns their hash.
func pump(w io.Writer, seed uint64, n, max int) ([32]byte, error) {
	rng := rand.New(rand.NewPCG(seed, seed))
	h := sha256.New()
	buf := make([]byte, max)
	for n > 0 {
		m := min(n, 1+rng.IntN(max))
		for i := range buf[:m] {
			buf[i] = byte(rng.Uint32())
		}
		h.Write(buf[:m])
		if _, err := w.Write(buf[:m]); err != nil {
			return [32]byte{}, err
		}
		n -= m
	}
	return [32]byte(h.Sum(nil)), nil
}

// drain reads n bytes from r and returns their hash.
func drain(r io.Reader, n int) ([32]byte, error) {
	h := sha256.New()
	if _, err := io.CopyN(h, r, int64(n)); err != nil {
		return [32]byte{}, err
	}
	return [32]byte(h.Sum(nil)), nil
}

// TestStreamBothWays: random bytes in writes of random sizes, small and
// far above MessageSize, cross both ways at once and arrive intact and in
// order (hashes compared); the path over loopback is direct.
func TestStreamBothWays(t *testing.T) {
	j, h := connectPair(t, loopback, loopback)
	if j.Path() != PathDirect || h.Path() != PathDirect {
		t.Errorf("paths %q and %q over loopback, want %q", j.Path(), h.Path(), PathDirect)
	}
	for _, tc := range []struct {
		name string
		n    int
		max  int
	}{{"small writes", 1 << 20, 300}, {"large writes", 8 << 20, 1 << 20}} {
		t.Run(tc.name, func(t *testing.T) {
			var wg sync.WaitGroup
			var sentJ, sentH, gotJ, gotH [32]byte
			var errs [4]error
			wg.Add(4)
			go func() { defer wg.Done(); sentJ, errs[0] = pump(j, 1, tc.n, tc.max) }()
			go func() { defer wg.Done(); sentH, errs[1] = pump(h, 2, tc.n, tc.max) }()
			go func() { defer wg.Done(); gotH, errs[2] = drain(h, tc.n) }()
			go func() { defer wg.Done(); gotJ, errs[3] = drain(j, tc.n) }()
			wg.Wait()
			if err := errors.Join(errs[:]...); err != nil {
				t.Fatal(err)
			}
			if sentJ != gotH || sentH != gotJ {
				t.Fatalf("hashes differ: joiner sent %x, host got %x; host sent %x, joiner got %x", sentJ[:4], gotH[:4], sentH[:4], gotJ[:4])
			}
		})
	}
}

// TestReadDeadline: a read deadline that passes fails the read with a
// timeout and leaves the connection usable, as over TCP; moving the
// deadline wakes a waiting read; a deadline in the past fails at once.
func TestReadDeadline(t *testing.T) {
	j, h := connectPair(t, loopback, loopback)
	buf := make([]byte, 8)
	h.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	start := time.Now()
	_, err := h.Read(buf)
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	if d := time.Since(start); d < 40*time.Millisecond || d > 5*time.Second {
		t.Fatalf("the read waited %v for a 50ms deadline", d)
	}
	h.SetReadDeadline(time.Time{})
	if _, err := j.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	if n, err := io.ReadFull(h, buf[:5]); err != nil || string(buf[:n]) != "after" {
		t.Fatalf("read after a passed deadline: %q, %v", buf[:n], err)
	}
	done := make(chan error, 1)
	go func() { _, err := h.Read(buf); done <- err }()
	time.Sleep(20 * time.Millisecond)
	h.SetReadDeadline(time.Now().Add(-time.Second))
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a waiting read when the deadline moved into the past: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("moving the deadline did not wake a waiting read")
	}
}

// TestBackpressure: a host that does not read holds the joiner's writes
// back: the joiner's queue stays bounded, a write deadline ends its
// wait with a timeout, and what was written arrives once the host reads.
func TestBackpressure(t *testing.T) {
	j, h := connectPair(t, loopback, loopback)
	j.SetWriteDeadline(time.Now().Add(time.Second))
	big := make([]byte, 64<<20)
	n, err := j.Write(big)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write of 64 MiB to a host that reads nothing: %d bytes, %v; want a timeout", n, err)
	}
	if q := j.dc.BufferedAmount(); q > highWater+MessageSize {
		t.Fatalf("%d bytes queued, more than the bound %d", q, highWater+MessageSize)
	}
	if n >= len(big)/2 {
		t.Fatalf("%d bytes taken by a write to a host that reads nothing", n)
	}
	t.Logf("a host that reads nothing took %d KiB before the write waited", n>>10)
	j.SetWriteDeadline(time.Time{})
	if _, err := drain(h, n); err != nil {
		t.Fatalf("reading what was written: %v", err)
	}
}

// TestClose: whichever side closes, the other reads everything written
// before the close and then io.EOF, and its writes fail; the closing side
// reads and writes net.ErrClosed; Close twice is harmless.
func TestClose(t *testing.T) {
	for _, closer := range []string{"joiner", "host"} {
		t.Run(closer, func(t *testing.T) {
			j, h := connectPair(t, loopback, loopback)
			a, b := j, h
			if closer == "host" {
				a, b = h, j
			}
			var sent [32]byte
			wrote := make(chan error, 1)
			go func() {
				var err error
				sent, err = pump(a, 7, 3<<20, 64<<10)
				wrote <- errors.Join(err, a.Close(), a.Close())
			}()
			got, err := drain(b, 3<<20)
			if werr := <-wrote; werr != nil {
				t.Fatalf("writing and closing twice: %v", werr)
			}
			if err != nil || got != sent {
				t.Fatalf("after the close the peer read %x, %v; sent %x", got[:4], err, sent[:4])
			}
			b.SetReadDeadline(time.Now().Add(10 * time.Second))
			if n, err := b.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
				t.Fatalf("the peer's read after the last byte: %d, %v; want io.EOF", n, err)
			}
			if _, err := a.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("read after Close: %v, want net.ErrClosed", err)
			}
			if _, err := a.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("write after Close: %v, want net.ErrClosed", err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if _, err := b.Write([]byte("x")); err != nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the peer still writes 10 s after the close")
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestDrain: once Drain returns, what was written before Close has been
// sent and the connection is closed, so a program may exit.
func TestDrain(t *testing.T) {
	j, h := connectPair(t, loopback, loopback)
	read := make(chan error, 1)
	var got [32]byte
	go func() {
		time.Sleep(300 * time.Millisecond) // a slow reader: the tail waits in the queue
		var err error
		got, err = drain(h, 1<<20)
		read <- err
	}()
	sent, err := pump(j, 9, 1<<20, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*closeLinger)
	defer cancel()
	if err := Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n := j.dc.BufferedAmount(); n != 0 {
		t.Errorf("after Drain %d bytes are still unacknowledged", n)
	}
	if err := <-read; err != nil || got != sent {
		t.Fatalf("the peer read %x, %v; sent %x", got[:4], err, sent[:4])
	}
}

// hostileSignaller answers every Recv with one blob, and takes any Send.
type hostileSignaller struct{ blob []byte }

func (s hostileSignaller) Send(context.Context, []byte) error   { return nil }
func (s hostileSignaller) Recv(context.Context) ([]byte, error) { return s.blob, nil }
func (s hostileSignaller) String() string                       { return string(s.blob) }

// TestHostileBlob: a blob that is too large, not JSON, of the wrong kind
// or without a data section is refused at once, on either side, with
// ErrBlob; nothing waits for the attempt's bound.
func TestHostileBlob(t *testing.T) {
	// A real offer, for the cases that change one thing in it.
	js, hs := Pipe()
	go Dial(context.Background(), js, Config{LoopbackOnly: true, Timeout: 2 * time.Second})
	offer, err := hs.Recv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hs.Close()
	if _, err := decodeBlob(offer, kindOffer, DefaultMaxBlob); err != nil {
		t.Fatalf("a real offer: %v", err)
	}
	noData := strings.Replace(string(offer), "m=application", "m=audio", 1)
	for _, tc := range []struct {
		name   string
		blob   []byte
		joiner bool
	}{
		{"oversized", bytes.Repeat([]byte(" "), DefaultMaxBlob+1), false},
		{"garbage", []byte("\x00\xff not json"), false},
		{"empty", nil, false},
		{"unknown field", []byte(`{"type":"offer","sdp":"v=0","x":1}`), false},
		{"trailing data", append(bytes.Clone(offer), "{}"...), false},
		{"not sdp", []byte(`{"type":"offer","sdp":"hello"}`), false},
		{"no data section", []byte(noData), false},
		{"answer for an offer", bytes.Replace(offer, []byte(`"offer"`), []byte(`"answer"`), 1), false},
		{"offer for an answer", offer, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{LoopbackOnly: true, Timeout: 10 * time.Second}
			start := time.Now()
			var err error
			if tc.joiner {
				_, _, err = Dial(context.Background(), hostileSignaller{tc.blob}, cfg)
			} else {
				_, _, err = Accept(context.Background(), hostileSignaller{tc.blob}, cfg)
			}
			if !errors.Is(err, ErrBlob) {
				t.Fatalf("got %v, want ErrBlob", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("refusing took %v", d)
			}
		})
	}
}

// TestTimeout: a host that never answers ends the joiner's attempt at
// Config.Timeout with a sentence that says so.
func TestTimeout(t *testing.T) {
	js, hs := Pipe()
	defer hs.Close()
	start := time.Now()
	_, _, err := Dial(context.Background(), js, Config{LoopbackOnly: true, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no connection within 300ms") {
		t.Fatalf("dial with no answer: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a 300ms bound took %v", d)
	}
}

// TestConfig: the zero value is valid; impossible settings are refused.
func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"stun and turn", Config{Servers: []Server{{URLs: []string{"stun:stun.example:3478"}}, {URLs: []string{"turn:turn.example:3478?transport=udp", "turns:turn.example:443?transport=tcp"}, Username: "u", Credential: "c"}}, RelayOnly: true}, true},
		{"relay only without turn", Config{RelayOnly: true, Servers: []Server{{URLs: []string{"stun:stun.example"}}}}, false},
		{"no url", Config{Servers: []Server{{}}}, false},
		{"http url", Config{Servers: []Server{{URLs: []string{"http://x"}}}}, false},
		{"negative timeout", Config{Timeout: -1}, false},
		{"negative blob", Config{MaxBlob: -1}, false},
	} {
		if err := tc.cfg.Defaults().Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestListener: joiners connected through Answer come out of Accept;
// beyond the backlog Answer refuses at once; Close ends Accept.
func TestListener(t *testing.T) {
	cfg := loopback
	cfg.Backlog = 1
	l := NewListener(cfg)
	js, hs := Pipe()
	answered := make(chan error, 1)
	go func() {
		path, err := l.Answer(context.Background(), hs)
		if err == nil && path != PathDirect {
			err = errors.New("path " + string(path))
		}
		answered <- err
	}()
	jc, _, err := Dial(context.Background(), js, loopback)
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	if err := <-answered; err != nil {
		t.Fatalf("answer: %v", err)
	}
	if _, err := l.Answer(context.Background(), hostileSignaller{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("answer beyond the backlog: %v, want ErrBusy", err)
	}
	hc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if _, err := jc.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(hc, buf); err != nil || string(buf) != "hi" {
		t.Fatalf("accepted connection read %q, %v", buf, err)
	}
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept after close: %v", err)
	}
}

// TestTextMessageEnds: a text message ends the connection, after the
// binary bytes before it, and the connection remembers why.
func TestTextMessageEnds(t *testing.T) {
	j, h := connectPair(t, loopback, loopback)
	tw, ok := j.rw.(interface {
		WriteDataChannel([]byte, bool) (int, error)
	})
	if !ok {
		t.Fatalf("the detached channel %T writes no text messages", j.rw)
	}
	if _, err := j.Write([]byte("bin")); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.WriteDataChannel([]byte("text"), true); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(h, buf); err != nil || string(buf) != "bin" {
		t.Fatalf("the bytes before the text message: %q, %v", buf, err)
	}
	h.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := h.Read(buf); !errors.Is(err, errText) {
		t.Fatalf("read at the text message: %v, want %v", err, errText)
	}
	if err := h.Err(); !errors.Is(err, errText) {
		t.Fatalf("Err after a text message: %v", err)
	}
}

// TestListenerCloseEndsQueued: closing a Listener closes the connections
// it holds that the host has not accepted: their joiners read the end.
func TestListenerCloseEndsQueued(t *testing.T) {
	l := NewListener(loopback)
	js, hs := Pipe()
	answered := make(chan error, 1)
	go func() { _, err := l.Answer(context.Background(), hs); answered <- err }()
	jc, _, err := Dial(context.Background(), js, loopback)
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	l.Close()
	jc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := jc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the joiner's read after the listener closed: %v, want io.EOF", err)
	}
}
