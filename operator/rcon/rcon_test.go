package rcon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/testkit"
)

func TestRoundTrip(t *testing.T) {
	for _, p := range []Packet{
		{ID: 7, Type: TypeAuth, Body: []byte("secret")},
		{ID: -1, Type: TypeAuthResponse},
		{ID: 1 << 30, Type: TypeExecCommand, Body: bytes.Repeat([]byte("x"), MaxPacket-4-minSize)},
	} {
		b := Append(nil, p)
		got, err := ReadPacket(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%+v: %v", p.ID, err)
		}
		if got.ID != p.ID || got.Type != p.Type || !bytes.Equal(got.Body, p.Body) {
			t.Fatalf("got %d/%d/%q, want %d/%d/%q", got.ID, got.Type, got.Body, p.ID, p.Type, p.Body)
		}
	}
}

// TestSizeLimits: the size field is checked before the rest is read, so a
// header that claims 2 GiB costs nothing.
func TestSizeLimits(t *testing.T) {
	for _, size := range []int32{-1, 0, 9, MaxPacket - 3, 1 << 30, -1 << 31} {
		var b []byte
		b = binary.LittleEndian.AppendUint32(b, uint32(size))
		r := &testkit.CountingReader{R: io.MultiReader(bytes.NewReader(b), zeros{})}
		_, err := ReadPacket(r)
		if !errors.Is(err, ErrPacketSize) {
			t.Fatalf("size %d: %v, want ErrPacketSize", size, err)
		}
		if r.N > 4 {
			t.Fatalf("size %d: read %d bytes past the header", size, r.N-4)
		}
	}
	// The largest client packet allowed is MaxPacket bytes in all.
	big := Append(nil, Packet{Type: TypeExecCommand, Body: bytes.Repeat([]byte("a"), MaxPacket-4-minSize)})
	if len(big) != MaxPacket {
		t.Fatalf("largest packet is %d bytes", len(big))
	}
	if _, err := ReadPacket(bytes.NewReader(big)); err != nil {
		t.Fatalf("a packet of MaxPacket bytes: %v", err)
	}
}

// TestTruncated: every cut of a valid packet is an error, never a packet.
func TestTruncated(t *testing.T) {
	full := Append(nil, Packet{ID: 3, Type: TypeExecCommand, Body: []byte("players")})
	for n := 0; n < len(full); n++ {
		if p, err := ReadPacket(bytes.NewReader(full[:n])); err == nil {
			t.Fatalf("cut at %d bytes: decoded %+v", n, p)
		}
	}
	bad := bytes.Clone(full)
	bad[len(bad)-1] = 'x'
	if _, err := ReadPacket(bytes.NewReader(bad)); !errors.Is(err, ErrTerminator) {
		t.Fatalf("no terminator: %v", err)
	}
}

func FuzzReadPacket(f *testing.F) {
	f.Add(Append(nil, Packet{ID: 1, Type: TypeAuth, Body: []byte("pw")}))
	f.Add(Append(nil, Packet{ID: 2, Type: TypeExecCommand, Body: []byte("ban Bob 1h spam")}))
	f.Add(Append(nil, Packet{ID: 3, Type: TypeResponseValue}))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ReadPacket(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(p.Body) > MaxPacket-4-minSize {
			t.Fatalf("body of %d bytes accepted", len(p.Body))
		}
		again := Append(nil, p)
		if !bytes.Equal(again, b[:len(again)]) {
			t.Fatalf("re-encoded %x, read from %x", again, b)
		}
	})
}

func TestSplit(t *testing.T) {
	for _, n := range []int{0, 1, MaxResponseBody - 1, MaxResponseBody, MaxResponseBody + 1, 3*MaxResponseBody + 17} {
		out := bytes.Repeat([]byte("z"), n)
		parts := split(out)
		var joined []byte
		for i, p := range parts {
			if len(p) > MaxResponseBody || i < len(parts)-1 && len(p) != MaxResponseBody {
				t.Fatalf("%d bytes: part %d has %d", n, i, len(p))
			}
			joined = append(joined, p...)
		}
		if !bytes.Equal(joined, out) || n == 0 && len(parts) != 1 {
			t.Fatalf("%d bytes: split into %d parts that join to %d bytes", n, len(parts), len(joined))
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// serve starts a server whose commands answer with exec.
func serve(t *testing.T, exec func(by, line string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(Config{Password: []byte("hunter2"), Exec: exec, Logger: testkit.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// client is a raw RCON client: it writes packets and reads them one by one.
type client struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second)) // bounds a hang only
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func (c *client) send(ps ...Packet) {
	c.t.Helper()
	var b []byte
	for _, p := range ps {
		b = Append(b, p)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// read reads a server packet (whose body may reach MaxResponseBody).
func (c *client) read() Packet {
	c.t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	size := binary.LittleEndian.Uint32(hdr[:])
	if size < minSize || size > MaxResponseBody+minSize {
		c.t.Fatalf("server packet of size %d", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(c.r, b); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return Packet{ID: int32(binary.LittleEndian.Uint32(b)), Type: int32(binary.LittleEndian.Uint32(b[4:])), Body: b[8 : len(b)-2]}
}

// closed reports whether the server closed the connection (nothing more
// to read).
func (c *client) closed() bool {
	_, err := c.r.ReadByte()
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool { return err != nil && strings.Contains(err.Error(), "reset") }

func (c *client) login(pw string) Packet {
	c.send(Packet{ID: 42, Type: TypeAuth, Body: []byte(pw)})
	return c.read()
}

func TestAuth(t *testing.T) {
	addr := serve(t, func(by, line string) string { return "ran " + line + " for " + by })
	c := dial(t, addr)
	if p := c.login("hunter2"); p.Type != TypeAuthResponse || p.ID != 42 {
		t.Fatalf("right password: %+v", p)
	}
	c.send(Packet{ID: 5, Type: TypeExecCommand, Body: []byte("players")})
	if p := c.read(); p.ID != 5 || p.Type != TypeResponseValue || !strings.HasPrefix(string(p.Body), "ran players for rcon 127.0.0.1:") {
		t.Fatalf("command: %+v %q", p, p.Body)
	}

	bad := dial(t, addr)
	if p := bad.login("hunter3"); p.Type != TypeAuthResponse || p.ID != AuthFailedID {
		t.Fatalf("wrong password: %+v", p)
	}
	if !bad.closed() {
		t.Fatal("connection open after a wrong password")
	}

	early := dial(t, addr)
	early.send(Packet{ID: 9, Type: TypeExecCommand, Body: []byte("shutdown")})
	if p := early.read(); p.Type != TypeAuthResponse || p.ID != AuthFailedID {
		t.Fatalf("command before auth: %+v", p)
	}
	if !early.closed() {
		t.Fatal("connection open after a command before auth")
	}
}

// TestFailedLoginsLimited: past the burst of failures even the right
// password is refused, unchecked; right passwords before that cost nothing.
func TestFailedLoginsLimited(t *testing.T) {
	addr := serve(t, func(string, string) string { return "" })
	for i := 0; i < 20; i++ {
		c := dial(t, addr)
		if p := c.login("hunter2"); p.ID != 42 {
			t.Fatalf("right password %d refused", i+1)
		}
		c.nc.Close()
	}
	for i := 0; i < 5; i++ { // the default burst
		if p := dial(t, addr).login("guess"); p.ID != AuthFailedID {
			t.Fatalf("wrong password %d accepted", i+1)
		}
	}
	if p := dial(t, addr).login("hunter2"); p.ID != AuthFailedID {
		t.Fatal("right password accepted past the limit of failures")
	}
}

// TestMultiPacketResponse: a long output comes in full packets then a
// short one, and the mirror trick marks its end.
func TestMultiPacketResponse(t *testing.T) {
	long := strings.Repeat("0123456789", 1000) // 10,000 bytes
	addr := serve(t, func(_, line string) string {
		switch line {
		case "long":
			return long
		case "exact":
			return long[:MaxResponseBody]
		}
		return ""
	})
	c := dial(t, addr)
	c.login("hunter2")
	c.send(Packet{ID: 10, Type: TypeExecCommand, Body: []byte("long")}, Packet{ID: 11, Type: TypeResponseValue})
	var got []byte
	var sizes []int
	for {
		p := c.read()
		if p.ID == 11 {
			if p.Type != TypeResponseValue || len(p.Body) != 0 {
				t.Fatalf("mirror: %+v", p)
			}
			break
		}
		if p.ID != 10 || p.Type != TypeResponseValue {
			t.Fatalf("response packet %+v", p)
		}
		got = append(got, p.Body...)
		sizes = append(sizes, len(p.Body))
	}
	if string(got) != long || len(sizes) != 3 || sizes[0] != MaxResponseBody || sizes[1] != MaxResponseBody {
		t.Fatalf("got %d bytes in packets of %v", len(got), sizes)
	}
	if p := c.read(); p.ID != 11 || !bytes.Equal(p.Body, mirrorMarker) {
		t.Fatalf("after the mirror: %+v", p)
	}

	// A full body says more may follow: a Minecraft-style client asks with
	// an empty command and stops at the answer of another ID.
	c.send(Packet{ID: 20, Type: TypeExecCommand, Body: []byte("exact")})
	if p := c.read(); p.ID != 20 || len(p.Body) != MaxResponseBody {
		t.Fatalf("exact: %d bytes, id %d", len(p.Body), p.ID)
	}
	c.send(Packet{ID: 21, Type: TypeExecCommand})
	if p := c.read(); p.ID != 21 || len(p.Body) != 0 {
		t.Fatalf("empty command: %+v", p)
	}
	c.send(Packet{ID: 22, Type: TypeExecCommand, Body: []byte("quiet")})
	if p := c.read(); p.ID != 22 || len(p.Body) != 0 {
		t.Fatalf("no output: %+v", p)
	}
}

// TestOversizedPacketClosed: a packet over MaxPacket ends the connection
// without an answer.
func TestOversizedPacketClosed(t *testing.T) {
	addr := serve(t, func(string, string) string { return "x" })
	c := dial(t, addr)
	c.login("hunter2")
	c.send(Packet{ID: 1, Type: TypeExecCommand, Body: bytes.Repeat([]byte("a"), MaxPacket)})
	if !c.closed() {
		t.Fatal("connection open after an oversized packet")
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{"27015": "127.0.0.1:27015", ":27015": "127.0.0.1:27015", "0.0.0.0:1": "0.0.0.0:1", "[::1]:5": "[::1]:5"} {
		if got, err := ListenAddr(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "1:99999", "host:"} {
		if got, err := ListenAddr(in); err == nil {
			t.Errorf("%q: %q accepted", in, got)
		}
	}
}
