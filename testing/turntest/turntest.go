// Package turntest runs coturn's turnserver on loopback for tests of the
// relayed path: TURN over UDP and TCP, and over TLS (turns:) with a
// self-signed certificate, with TURN REST credentials (use-auth-secret),
// relaying on loopback only. A test skips, saying so, where turnserver is
// not installed (Debian's coturn package).
package turntest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

// Secret is the secret the server shares with the credentials' issuer
// (coturn's static-auth-secret).
const Secret = "lockhost-test-secret"

// Server is a running turnserver.
type Server struct {
	// Port is its UDP and TCP port on 127.0.0.1.
	Port int
	// TLSPort is its TURN over TLS port on 127.0.0.1.
	TLSPort int
	// CAFile is the self-signed certificate its TLS listener presents,
	// PEM: a TURN client trusts it through SSL_CERT_FILE. Every server
	// of a process presents the same one (see Start).
	CAFile string
	log    *syncbuf.Buffer
}

// URL is the server's TURN URL over transport ("udp" or "tcp"), as a
// coordinator hands it out (--turn-url); "tls" is TURN over TLS
// (turns:) on the TLS port.
func (s *Server) URL(transport string) string {
	if transport == "tls" {
		return "turns:" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.TLSPort)) + "?transport=tcp"
	}
	return "turn:" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) + "?transport=" + transport
}

// URLs are the server's TURN URLs over UDP and over TCP.
func (s *Server) URLs() []string { return []string{s.URL("udp"), s.URL("tcp")} }

// Credentials are TURN REST credentials for name valid for an hour:
// username "EXPIRY:NAME", credential base64(HMAC-SHA1(Secret, username)).
func Credentials(name string) (username, credential string) {
	username = fmt.Sprintf("%d:%s", time.Now().Add(time.Hour).Unix(), name)
	mac := hmac.New(sha1.New, []byte(Secret))
	mac.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Log is the server's output so far, for a failure message.
func (s *Server) Log() string { return s.log.String() }

// Start starts turnserver on free loopback ports until the test ends, or
// skips the test when it is not installed.
//
// Go reads the system's roots (SSL_CERT_FILE) once per process, so every
// server of a process presents one self-signed certificate: a test that
// trusts CAFile of a first server trusts every later one.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("turnserver")
	if err != nil {
		t.Skip("turnserver (coturn) is not installed, so the relayed path is not tested: apt-get install -y coturn")
	}
	dir := t.TempDir()
	s := &Server{Port: freePort(t), TLSPort: freePort(t), CAFile: filepath.Join(dir, "cert.pem"), log: &syncbuf.Buffer{}}
	keyFile := filepath.Join(dir, "key.pem")
	writeSelfSigned(t, s.CAFile, keyFile)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1",
		"--listening-port="+strconv.Itoa(s.Port), "--tls-listening-port="+strconv.Itoa(s.TLSPort),
		"--cert="+s.CAFile, "--pkey="+keyFile, "--no-dtls", "--no-cli",
		"--allow-loopback-peers", "--no-multicast-peers",
		"--use-auth-secret", "--static-auth-secret="+Secret, "--realm=lockhost.test",
		"--log-file=stdout", "--simple-log", "--pidfile="+filepath.Join(dir, "turnserver.pid"))
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

// selfSigned is one self-signed certificate for 127.0.0.1 and its key,
// PEM, for every turnserver of the process (see Start).
var selfSigned = sync.OnceValues(func() ([2][]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return [2][]byte{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return [2][]byte{}, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return [2][]byte{}, err
	}
	return [2][]byte{pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})}, nil
})

// writeSelfSigned writes selfSigned's certificate and key.
func writeSelfSigned(t testing.TB, certFile, keyFile string) {
	t.Helper()
	pair, err := selfSigned()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pair[0], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pair[1], 0o600); err != nil {
		t.Fatal(err)
	}
}
