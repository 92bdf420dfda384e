package ice

import (
	"io"
	"net"
	"testing"

	"github.com/lockhost/lockhost/testing/turntest"
)

// BenchmarkConnect: one attempt over loopback, signalling through a Pipe,
// from the offer to the open channel on both sides: host candidates
// (direct), and a relay-only joiner through coturn over UDP, TCP and
// TLS.
func BenchmarkConnect(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			j, h := connectPair(b, loopback, loopback)
			j.Close()
			h.Close()
		}
	})
	for _, transport := range []string{"udp", "tcp", "tls"} {
		b.Run("turn-"+transport, func(b *testing.B) {
			ts := turntest.Start(b)
			if transport == "tls" {
				b.Setenv("SSL_CERT_FILE", ts.CAFile) // as in TestTURN
			}
			joiner := loopback
			joiner.RelayOnly = true
			joiner.Servers = []Server{turnServer(ts, transport)}
			b.ResetTimer()
			for range b.N {
				j, h := connectPair(b, joiner, loopback)
				j.Close()
				h.Close()
			}
		})
	}
}

// transferSize is what BenchmarkThroughput sends one way.
const transferSize = 64 << 20

// BenchmarkThroughput: 64 MiB one way in 64 KiB writes, over the data
// channel (direct, loopback) and over plain loopback TCP for comparison.
func BenchmarkThroughput(b *testing.B) {
	b.Run("datachannel", func(b *testing.B) {
		j, h := connectPair(b, loopback, loopback)
		transfer(b, j, h)
	})
	b.Run("tcp", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, _ := ln.Accept()
			accepted <- c
		}()
		w, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		r := <-accepted
		defer r.Close()
		transfer(b, w, r)
	})
}

// transfer sends transferSize bytes from w to r b.N times.
func transfer(b *testing.B, w io.Writer, r io.Reader) {
	buf := make([]byte, 64<<10)
	b.SetBytes(transferSize)
	b.ResetTimer()
	for range b.N {
		done := make(chan error, 1)
		go func() {
			_, err := io.CopyN(io.Discard, r, transferSize)
			done <- err
		}()
		for sent := 0; sent < transferSize; sent += len(buf) {
			if _, err := w.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}
