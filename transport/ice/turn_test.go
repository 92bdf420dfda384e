package ice

import (
	"bytes"
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
)

// turnServer is a coturn turnserver on loopback with TURN REST
// credentials (use-auth-secret).
type turnServer struct {
	port, tlsPort int
	secret        string
	log           *lockedBuffer
	caFile        string // the self-signed certificate of its TLS listener, PEM
}

// lockedBuffer collects a process's output for a failure message.
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

// startTURN starts coturn's turnserver on a free loopback port, listening
// on UDP and TCP and relaying on loopback, or skips the test when it is
// not installed.
func startTURN(t testing.TB) *turnServer {
	t.Helper()
	bin, err := exec.LookPath("turnserver")
	if err != nil {
		t.Skip("turnserver (coturn) is not installed: apt-get install -y coturn")
	}
	port := freePort(t)
	dir := t.TempDir()
	ts := &turnServer{port: port, tlsPort: freePort(t), secret: "lockhost-test-secret", log: &lockedBuffer{},
		caFile: filepath.Join(dir, "cert.pem")}
	keyFile := filepath.Join(dir, "key.pem")
	writeSelfSigned(t, ts.caFile, keyFile)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1",
		"--listening-port="+strconv.Itoa(port), "--tls-listening-port="+strconv.Itoa(ts.tlsPort),
		"--cert="+ts.caFile, "--pkey="+keyFile, "--allow-loopback-peers", "--no-dtls", "--no-cli",
		"--use-auth-secret", "--static-auth-secret="+ts.secret, "--realm=lockhost.test",
		"--no-multicast-peers", "--log-file=stdout", "--simple-log",
		"--pidfile="+filepath.Join(t.TempDir(), "turnserver.pid"))
	cmd.Stdout, cmd.Stderr = ts.log, ts.log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start turnserver: %v", err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return ts
		}
		if time.Now().After(deadline) {
			t.Fatalf("turnserver does not listen on %d: %v\n%s", port, err, ts.log)
		}
		time.Sleep(50 * time.Millisecond)
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

// server is a TURN server entry with REST credentials valid for an hour
// (username "EXPIRY:NAME", credential base64(HMAC-SHA1(secret, username))).
// The transport "tls" is TURN over TLS (turns:) on the TLS port.
func (ts *turnServer) server(transport string) Server {
	user := fmt.Sprintf("%d:joiner", time.Now().Add(time.Hour).Unix())
	mac := hmac.New(sha1.New, []byte(ts.secret))
	mac.Write([]byte(user))
	url := fmt.Sprintf("turn:127.0.0.1:%d?transport=%s", ts.port, transport)
	if transport == "tls" {
		url = fmt.Sprintf("turns:127.0.0.1:%d?transport=tcp", ts.tlsPort)
	}
	return Server{URLs: []string{url}, Username: user, Credential: base64.StdEncoding.EncodeToString(mac.Sum(nil))}
}

// selfSigned is one self-signed certificate for 127.0.0.1 and its key,
// PEM, for every turnserver of the process: Go reads the roots
// (SSL_CERT_FILE) once per process, so a second server must present the
// certificate the first did.
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

// TestTURN: a joiner that may only use relay candidates connects through
// coturn over UDP, TCP and TLS, names its path by how it reaches the
// relay, and the stream crosses intact both ways; the host, reached by
// the relay, names the path turn. Wrong credentials fail within the bound.
func TestTURN(t *testing.T) {
	ts := startTURN(t)
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
				// is here or in BenchmarkConnect (selfSigned).
				t.Setenv("SSL_CERT_FILE", ts.caFile)
			}
			joiner := loopback
			joiner.RelayOnly = true
			joiner.Servers = []Server{ts.server(tc.transport)}
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
		s := ts.server("udp")
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
