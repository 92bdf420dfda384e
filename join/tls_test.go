package join_test

import (
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/wire"
)

// tlsEnds wraps each host end arriving on ends in a TLS server of cert.
func tlsEnds(ends <-chan net.Conn, cert tls.Certificate) <-chan net.Conn {
	out := make(chan net.Conn, 1)
	go func() {
		for nc := range ends {
			out <- tls.Server(nc, tlsid.ServerConfig(cert))
		}
	}()
	return out
}

// TestTLS: with Config.TLS the whole join runs inside TLS and succeeds
// against the pinned certificate; another certificate fails the join
// before a byte of the protocol is sent, saying both fingerprints (over
// TCP only).
func TestTLS(t *testing.T) {
	cert, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range transports {
		for _, pinned := range []tls.Certificate{cert, other} {
			good := tlsid.Fingerprint(pinned) == tlsid.Fingerprint(cert)
			if !good && tr.name == "pipe" {
				// A refused certificate's alert blocks on an unbuffered
				// pipe; TLS is spoken over TCP in real use.
				continue
			}
			t.Run(map[bool]string{true: "pinned", false: "mismatch"}[good]+"/"+tr.name, func(t *testing.T) {
				w := newWorld(t, 2, 0)
				ctx, addr, ends := tr.start(t)
				tlsCfg, _ := tlsid.ClientConfig(addr, tlsid.Fingerprint(pinned), nil)
				s, script, err := runCtx(t, ctx, addr, tlsEnds(ends, cert), join.Config{TLS: tlsCfg}, func(h *fakeHost) error {
					if !good {
						return h.waitClosed()
					}
					if _, err := h.handshake(); err != nil {
						return err
					}
					if err := h.sendWorld(w.payload, uint64(len(w.payload)), chunk); err != nil {
						return err
					}
					_, err := h.until(wire.IDClientWorldReady)
					return err
				})
				scriptOK(t, script)
				if good {
					if err != nil {
						t.Fatalf("join over TLS: %v", err)
					}
					if s.Info().GameName != greeting.defsOK.GameName {
						t.Fatalf("info %+v", s.Info())
					}
					return
				}
				var mm *tlsid.MismatchError
				if !errors.As(err, &mm) || !strings.Contains(err.Error(), "TLS with") {
					t.Fatalf("join against another certificate: %v, want a TLS mismatch", err)
				}
				if mm.Got != tlsid.Fingerprint(cert) || mm.Known != tlsid.Fingerprint(other) {
					t.Fatalf("mismatch says got %s known %s", mm.Got, mm.Known)
				}
			})
		}
	}
}
