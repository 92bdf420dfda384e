package ice

import (
	"context"
	"encoding/base64"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/turntest"
)

// turnServer is a relay entry for ts over transport ("udp", "tcp", or
// "tls" for TURN over TLS) with REST credentials valid for an hour.
func turnServer(ts *turntest.Server, transport string) Server {
	user, cred := turntest.Credentials("joiner")
	return Server{URLs: []string{ts.URL(transport)}, Username: user, Credential: cred}
}

// TestTURN: a joiner that may only use relay candidates connects through
// coturn over UDP, TCP and TLS, names its path by how it reaches the
// relay, and the stream crosses intact both ways; the host, reached by
// the relay, names the path turn. Wrong credentials fail within the bound.
func TestTURN(t *testing.T) {
	ts := turntest.Start(t)
	for _, tc := range []struct {
		transport string
		want      Path
	}{{"udp", PathTURNUDP}, {"tcp", PathTURNTCP}, {"tls", PathTURNTLS}} {
		t.Run(tc.transport, func(t *testing.T) {
			if tc.transport == "tls" {
				// The TURN client checks the server's certificate
				// against the system's roots: the self-signed one stands
				// in for them. Go reads SSL_CERT_FILE once, when a
				// process first needs the roots, which in this package
				// is here or in BenchmarkConnect (turntest.Start).
				t.Setenv("SSL_CERT_FILE", ts.CAFile)
			}
			joiner := loopback
			joiner.RelayOnly = true
			joiner.Servers = []Server{turnServer(ts, tc.transport)}
			start := time.Now()
			j, h := connectPair(t, joiner, loopback)
			t.Logf("connected through TURN over %s in %v", tc.transport, time.Since(start).Round(time.Millisecond))
			if j.Path() != tc.want || h.Path() != PathTURN {
				t.Fatalf("paths: joiner %q, host %q; want %q and %q", j.Path(), h.Path(), tc.want, PathTURN)
			}
			var wg sync.WaitGroup
			var sent, got [2][32]byte
			var errs [4]error
			wg.Add(4)
			go func() { defer wg.Done(); sent[0], errs[0] = pump(j, 11, 2<<20, 100<<10) }()
			go func() { defer wg.Done(); sent[1], errs[1] = pump(h, 12, 2<<20, 100<<10) }()
			go func() { defer wg.Done(); got[0], errs[2] = drain(h, 2<<20) }()
			go func() { defer wg.Done(); got[1], errs[3] = drain(j, 2<<20) }()
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if sent != got {
				t.Fatal("the stream through the relay differs from what was sent")
			}
		})
	}
	t.Run("wrong credential", func(t *testing.T) {
		joiner := loopback
		joiner.RelayOnly, joiner.Timeout = true, 3*time.Second
		s := turnServer(ts, "udp")
		s.Credential = base64.StdEncoding.EncodeToString([]byte("not the hmac of the username"))
		joiner.Servers = []Server{s}
		js, hs := Pipe()
		defer hs.Close()
		go Accept(context.Background(), hs, loopback)
		if c, _, err := Dial(context.Background(), js, joiner); err == nil {
			c.Close()
			t.Fatal("connected relay-only with a wrong TURN credential")
		}
	})
}
