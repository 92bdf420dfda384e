// Package rawclient speaks lockhost's protocol by hand, a packet at a
// time, for tests that need a client doing what no well-behaved client
// does (a hostile arbiter, a bomb, a declaration out of bounds) against a
// host in the test's process or a real host binary. It also makes the
// hostile payloads those tests send.
package rawclient

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lockhost/lockhost/wire"
)

// frameOverhead is what a frame adds to its body: its length (4 bytes)
// and the packet ID (1), docs/protocol.md section 2.
const frameOverhead = 5

// Conn is one hand-spoken connection to a host.
type Conn struct {
	t  testing.TB
	nc net.Conn
	fr *wire.FrameReader
}

// Dial connects to addr; the connection closes when the test ends, and
// any read or write after limit fails (it bounds a hang only).
func Dial(t testing.TB, addr string, limit time.Duration) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(limit))
	return &Conn{t: t, nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)}
}

// Close closes the connection.
func (c *Conn) Close() { c.nc.Close() }

// Send writes one packet.
func (c *Conn) Send(p wire.Packet) {
	c.t.Helper()
	if _, err := c.nc.Write(wire.MustMarshal(p)); err != nil {
		c.t.Fatal(err)
	}
}

// Until reads, answering clock rounds, until a packet with one of ids or
// the host's disconnect arrives, and returns it with its frame's size.
func (c *Conn) Until(ids ...wire.ID) (wire.Packet, int) {
	c.t.Helper()
	for {
		id, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", ids, err)
		}
		if id != wire.IDServerDisconnect && id != wire.IDServerClock && !slices.Contains(ids, id) {
			continue
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			c.t.Fatal(err)
		}
		if ck, ok := p.(*wire.ServerClock); ok {
			c.Send(&wire.ClientClock{Nonce: ck.Nonce, ClientTime: time.Now().UnixMicro()})
			continue
		}
		return p, len(body) + frameOverhead
	}
}

// Expect is Until for one packet, which must come: a disconnect fails the
// test.
func Expect[T wire.Packet](c *Conn, id wire.ID) T {
	c.t.Helper()
	p, _ := c.Until(id)
	got, ok := p.(T)
	if !ok {
		c.t.Fatalf("waiting for %s: got %+v", id, p)
	}
	return got
}

// Pump has c play a live client from now on, in the background: it
// answers clock rounds, echoes keepalives and acknowledges ticks, and
// hands on the host's upload requests, upload results and disconnect.
// The channel closes when the connection ends; c's reads are the pump's
// from then on.
func (c *Conn) Pump() <-chan wire.Packet {
	out := make(chan wire.Packet, 16)
	go func() {
		defer close(out)
		for {
			id, body, err := c.fr.Next()
			if err != nil {
				return
			}
			p, err := wire.Decode(id, body)
			if err != nil {
				return
			}
			var answer wire.Packet
			switch p := p.(type) {
			case *wire.ServerKeepalive:
				answer = &wire.ClientKeepalive{Seq: p.Seq, HostTime: p.HostTime}
			case *wire.ServerTick:
				answer = &wire.ClientTickAck{Tick: p.Granted}
			case *wire.ServerClock:
				answer = &wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()}
			case *wire.ServerUploadRequest, *wire.ServerUploadResult, *wire.ServerDisconnect:
				out <- p
			}
			if answer != nil {
				if _, err := c.nc.Write(wire.MustMarshal(answer)); err != nil {
					return
				}
			}
		}
	}()
	return out
}

// Next takes the next packet Pump handed on, which must be a T.
func Next[T wire.Packet](t testing.TB, pkts <-chan wire.Packet) T {
	t.Helper()
	p, open := <-pkts
	got, ok := p.(T)
	if !ok {
		var want T
		t.Fatalf("got %+v (connection open: %v), want a %T", p, open, want)
	}
	return got
}

// Upload sends payload as the answer to upload request q, in chunks.
func (c *Conn) Upload(q uint32, payload []byte) { c.UploadFrom(q, payload, 0) }

// UploadFrom sends payload from offset from on as the answer to upload
// request q, in chunks: the rest of an upload begun by hand.
func (c *Conn) UploadFrom(q uint32, payload []byte, from int) {
	c.t.Helper()
	for o := from; o < len(payload); o += wire.MaxChunkData {
		end := min(o+wire.MaxChunkData, len(payload))
		c.Send(&wire.ClientUpload{Request: q, Offset: uint64(o), Total: uint64(len(payload)), Data: payload[o:end]})
	}
}

// ZstdZeros is a zstd frame of n zero bytes: a few bytes a 128 KiB block,
// so about 64 KiB for 2 GiB (a decompression bomb).
func ZstdZeros(t testing.TB, n int64) []byte {
	t.Helper()
	var b bytes.Buffer
	enc, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(enc, zeros{}, n); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
