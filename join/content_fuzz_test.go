package join

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"io"
	"net"
	"testing"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// streamConn is a connection whose host side is fixed bytes; what the
// client writes is dropped.
type streamConn struct {
	net.Conn
	r io.Reader
}

func (c streamConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c streamConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c streamConn) Close() error                     { return nil }
func (c streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c streamConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzContentBody feeds any bytes as the host's answer to a content
// request: the client reads at most the size it asked for, and never
// more than its frames could carry, inflated.
func FuzzContentBody(f *testing.F) {
	file := []byte("<Defs><ThingDef><defName>A</defName></ThingDef></Defs>")
	sum := sha256.Sum256(file)
	f.Add(wire.MustMarshal(&wire.ServerContent{Hash: sum[:], Total: uint64(len(file)), Length: uint32(len(file)), Data: file}))
	f.Add(append(wire.MustMarshal(&wire.ServerContent{Hash: sum[:], Total: uint64(len(file)), Length: 10, Data: file[:10]}),
		wire.MustMarshal(&wire.ServerContent{Hash: sum[:], Offset: 10, Total: uint64(len(file)), Length: uint32(len(file) - 10), Coding: wire.ContentZstd, Data: []byte{0x28, 0xb5, 0x2f, 0xfd}})...))
	f.Fuzz(func(t *testing.T, stream []byte) {
		nc := streamConn{r: bytes.NewReader(stream)}
		cc := &ContentConn{nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame), wait: time.Second}
		body, _, err := cc.get(sum[:], int64(len(file)), 0)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(io.LimitReader(body, int64(len(file))+1))
		if len(got) > len(file) {
			t.Fatalf("read %d bytes of a %d-byte file", len(got), len(file))
		}
	})
}
