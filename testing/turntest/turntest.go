// Package turntest runs coturn's turnserver on loopback for tests of the
// relayed path: TURN over UDP and TCP with TURN REST credentials
// (use-auth-secret), relaying on loopback only. A test skips, saying so,
// where turnserver is not installed (Debian's coturn package).
package turntest

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Secret is the secret the server shares with the credentials' issuer
// (coturn's static-auth-secret).
const Secret = "lockhost-test-secret"

// Server is a running turnserver.
type Server struct {
	// Port is its UDP and TCP port on 127.0.0.1.
	Port int
	log  *lockedBuffer
}

// URL is the server's TURN URL over transport ("udp" or "tcp"), as a
// coordinator hands it out (--turn-url).
func (s *Server) URL(transport string) string {
	return "turn:" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) + "?transport=" + transport
}

// URLs are the server's TURN URLs over UDP and over TCP.
func (s *Server) URLs() []string { return []string{s.URL("udp"), s.URL("tcp")} }

// Log is the server's output so far, for a failure message.
func (s *Server) Log() string { return s.log.String() }

// Start starts turnserver on a free loopback port until the test ends,
// or skips the test when it is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("turnserver")
	if err != nil {
		t.Skip("turnserver (coturn) is not installed, so the relayed path is not tested: apt-get install -y coturn")
	}
	s := &Server{Port: freePort(t), log: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1",
		"--listening-port="+strconv.Itoa(s.Port), "--no-tls", "--no-dtls", "--no-cli",
		"--allow-loopback-peers", "--no-multicast-peers",
		"--use-auth-secret", "--static-auth-secret="+Secret, "--realm=lockhost.test",
		"--log-file=stdout", "--simple-log", "--pidfile="+filepath.Join(t.TempDir(), "turnserver.pid"))
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start turnserver: %v", err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), time.Second)
		if err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("turnserver does not listen on %d: %v\n%s", s.Port, err, s.log)
		}
	}
}

// freePort is a loopback port free for both UDP and TCP just now.
func freePort(t testing.TB) int {
	t.Helper()
	for range 20 {
		tl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := tl.Addr().(*net.TCPAddr).Port
		ul, err := net.ListenPacket("udp", tl.Addr().String())
		tl.Close()
		if err == nil {
			ul.Close()
			return port
		}
	}
	t.Fatal("no loopback port free for UDP and TCP")
	return 0
}

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
