package coord

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/tlsid"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestCodeOf(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, SecretLen), bytes.Repeat([]byte{2}, SecretLen)
	ca, cb := CodeOf(a), CodeOf(b)
	if ca != CodeOf(a) {
		t.Fatalf("CodeOf is not deterministic")
	}
	if ca == cb {
		t.Fatalf("two secrets give one code %s", ca)
	}
	seen := map[Code]bool{}
	letters := map[rune]int{}
	for i := 0; i < 2000; i++ {
		s, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		c := CodeOf(s)
		if len(c) != CodeLen+1 || c[0] != '+' {
			t.Fatalf("code %q: not + and %d letters", c, CodeLen)
		}
		for _, r := range c[1:] {
			if !strings.ContainsRune(Alphabet, r) {
				t.Fatalf("code %q has %q, outside the alphabet", c, r)
			}
			letters[r]++
		}
		if seen[c] {
			t.Fatalf("code %s twice in 2000 secrets", c)
		}
		seen[c] = true
		if p, err := ParseCode(strings.ToLower(string(c[1:4])) + "-" + string(c[4:])); err != nil || p != c {
			t.Fatalf("ParseCode of %s as typed: %q, %v", c, p, err)
		}
	}
	// 14000 letters over 30: each about 467; a letter never or twice as
	// often as it should says the mapping is skewed.
	for _, r := range Alphabet {
		if n := letters[r]; n < 300 || n > 650 {
			t.Errorf("letter %q appears %d times in 14000", r, n)
		}
	}
}

func TestParseCode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Code
		ok   bool
	}{
		{"+K7QF2MX", "+K7QF2MX", true},
		{"k7qf2mx", "+K7QF2MX", true},
		{"+K7Q F2M-X", "+K7QF2MX", true},
		{"+K7QF2M", "", false},
		{"+K7QF2MXX", "", false},
		{"+K7QF2M0", "", false}, // 0 is not in the alphabet
		{"+K7QF2MI", "", false},
		{"+K7QF2Mé", "", false},
		{"", "", false},
	} {
		got, err := ParseCode(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseCode(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestSecretStable(t *testing.T) {
	dir := t.TempDir()
	s1, created, err := LoadOrCreateSecret(dir)
	if err != nil || !created {
		t.Fatalf("first load: created=%v err=%v", created, err)
	}
	s2, created, err := LoadOrCreateSecret(dir)
	if err != nil || created || !bytes.Equal(s1, s2) {
		t.Fatalf("second load: created=%v err=%v same=%v", created, err, bytes.Equal(s1, s2))
	}
	if fi, err := os.Stat(filepath.Join(dir, SecretFile)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("secret file: %v, mode %v", err, fi.Mode())
	}
	os.WriteFile(filepath.Join(dir, SecretFile), []byte("short\n"), 0o600)
	if _, _, err := LoadOrCreateSecret(dir); err == nil {
		t.Errorf("a damaged secret file was read")
	}
}

// TestTURNCredentials holds TURNCredentials to the TURN REST convention
// with vectors computed apart from this package: Python's hmac module
// and openssl dgst -sha1 -hmac both give these.
func TestTURNCredentials(t *testing.T) {
	for _, tc := range []struct {
		secret, id string
		expiry     int64
		user, pass string
	}{
		{"north-wind-secret", "K7QF2MX", 1700000000, "1700000000:K7QF2MX", "+krY0VT9EKlTnONLn/LSTDQWvDM="},
		{"", "", 0, "0:", "OMULkEY8i3k1y1l5jqF6MXE1eYs="},
	} {
		u, p := TURNCredentials([]byte(tc.secret), tc.id, time.Unix(tc.expiry, 0))
		if u != tc.user || p != tc.pass {
			t.Errorf("TURNCredentials(%q, %q, %d) = %q, %q; want %q, %q", tc.secret, tc.id, tc.expiry, u, p, tc.user, tc.pass)
		}
	}
}

// coordinator starts a coordinator over loopback TLS and returns it and
// its URL with the certificate's pin.
func coordinator(t *testing.T, cfg ServerConfig) (*Server, *httptest.Server, *Coordinator) {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(s)
	t.Cleanup(ts.Close)
	c, err := ParseURL(ts.URL + "#" + tlsid.FingerprintDER(ts.Certificate().Raw))
	if err != nil {
		t.Fatal(err)
	}
	return s, ts, c
}

// register registers a host and waits for the coordinator's answer.
func register(t *testing.T, ctx context.Context, cfg HostConfig) (*Host, *TURN) {
	t.Helper()
	got := make(chan *TURN, 4)
	cfg.OnRegistered = func(_ Code, turn *TURN) { got <- turn }
	cfg.MinBackoff = 20 * time.Millisecond
	h := Register(ctx, cfg)
	select {
	case turn := <-got:
		return h, turn
	case <-time.After(10 * time.Second):
		t.Fatal("the host did not register in 10 s")
	}
	return nil, nil
}

func TestRegisterLookupUpdate(t *testing.T) {
	srv, _, c := coordinator(t, ServerConfig{TURNURLs: []string{"turn:turn.example.org:3478?transport=udp"}, TURNSecret: []byte("s")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	secret, _ := NewSecret()
	reach := Reach{Addrs: []string{"203.0.113.7:30502"}, LAN: []string{"192.168.1.5:30502"}, Play: []string{"http://203.0.113.7:8080/play"}}
	cur := make(chan Reach, 1)
	cur <- reach
	h, turn := register(t, ctx, HostConfig{Coordinator: c, Secret: secret, Reach: func() Reach { r := <-cur; cur <- r; return r }})
	if turn == nil || len(turn.URLs) != 1 || !strings.HasSuffix(turn.Username, ":"+string(h.Code()[1:])) {
		t.Errorf("registration's TURN: %+v", turn)
	}
	if srv.Hosts() != 1 {
		t.Fatalf("%d hosts registered, want 1", srv.Hosts())
	}
	r, err := c.Lookup(ctx, h.Code())
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != CodeOfSecret(secret) || r.Addrs[0] != reach.Addrs[0] || r.LAN[0] != reach.LAN[0] || r.TURN == nil {
		t.Fatalf("lookup: %+v", r)
	}
	<-cur
	cur <- Reach{Addrs: []string{"198.51.100.9:40000"}}
	h.Update()
	deadline := time.Now().Add(5 * time.Second)
	for r.Addrs[0] != "198.51.100.9:40000" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if r, err = c.Lookup(ctx, h.Code()); err != nil {
			t.Fatal(err)
		}
	}
	if r.Addrs[0] != "198.51.100.9:40000" || len(r.LAN) != 0 {
		t.Fatalf("after Update the lookup gives %+v", r)
	}
	other, _ := NewSecret()
	var se *StatusError
	if _, err := c.Lookup(ctx, CodeOfSecret(other)); !errors.As(err, &se) || se.Status != http.StatusNotFound {
		t.Fatalf("lookup of an unregistered code: %v", err)
	}
	cancel()
	<-h.Done()
	for deadline := time.Now().Add(5 * time.Second); srv.Hosts() != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if srv.Hosts() != 0 {
		t.Fatalf("a stopped host is still registered")
	}
}

// TestCodeStableAcrossRestart: the same secret gets the same code from a
// coordinator started afresh; a host pinging in time stays registered, and
// one whose connection the coordinator drops registers again by itself.
func TestCodeStableAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	secret, _, _ := LoadOrCreateSecret(dir)
	srv1, _, c1 := coordinator(t, ServerConfig{HostTimeout: 300 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	regs := make(chan struct{}, 8)
	h1 := Register(ctx, HostConfig{Coordinator: c1, Secret: secret, Ping: 50 * time.Millisecond, MinBackoff: 20 * time.Millisecond,
		Logger: testLogger(t), OnRegistered: func(Code, *TURN) { regs <- struct{}{} }})
	code := h1.Code()
	<-regs
	// Pings every 50 ms keep it over the coordinator's 300 ms timeout.
	time.Sleep(time.Second)
	if len(regs) != 0 || srv1.Hosts() != 1 {
		t.Fatalf("a pinging host registered %d more times; %d hosts", len(regs), srv1.Hosts())
	}
	srv1.dropHosts()
	select {
	case <-regs:
	case <-time.After(10 * time.Second):
		t.Fatal("the host did not register again after the coordinator dropped it")
	}
	if _, err := c1.Lookup(ctx, code); err != nil {
		t.Fatalf("lookup after the reconnect: %v", err)
	}
	stop()
	<-h1.Done()
	// A new coordinator and a restarted host (the secret read again).
	secret2, created, err := LoadOrCreateSecret(dir)
	if err != nil || created {
		t.Fatal(created, err)
	}
	_, _, c2 := coordinator(t, ServerConfig{})
	ctx3, stop3 := context.WithCancel(context.Background())
	defer stop3()
	h3, _ := register(t, ctx3, HostConfig{Coordinator: c2, Secret: secret2})
	if h3.Code() != code {
		t.Fatalf("code %s after the restart, was %s", h3.Code(), code)
	}
	if _, err := c2.Lookup(ctx3, code); err != nil {
		t.Fatalf("lookup at the new coordinator: %v", err)
	}
}

// get runs one request from remote through the coordinator's handler.
func get(s *Server, method, path, remote string) int {
	req := httptest.NewRequest(method, path, nil)
	req.RemoteAddr = remote
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec.Code
}

func TestRateLimits(t *testing.T) {
	s, err := NewServer(ServerConfig{LookupRate: 0.001, LookupBurst: 5, RegisterRate: 0.001, RegisterBurst: 2})
	if err != nil {
		t.Fatal(err)
	}
	code := "/v1/lookup/+K7QF2MX"
	count := func(path string, addrs []string) (limited int) {
		for _, a := range addrs {
			if get(s, http.MethodGet, path, a) == http.StatusTooManyRequests {
				limited++
			}
		}
		return limited
	}
	repeat := func(a string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = a
		}
		return out
	}
	// One address: its burst, then refused.
	if n := count(code, repeat("192.0.2.1:1000", 8)); n != 3 {
		t.Errorf("one address, 8 lookups: %d refused, want 3", n)
	}
	// Many addresses in one /24: the prefix's 4 bursts (20), less the 5
	// taken above, then refused, although no address is over its own.
	var same24 []string
	for i := 10; i < 40; i++ {
		same24 = append(same24, "192.0.2."+strconv.Itoa(i)+":1000")
	}
	if n := count(code, same24); n != 15 {
		t.Errorf("30 addresses in one /24, a lookup each: %d refused, want 15", n)
	}
	// Addresses in 30 other /24s: none refused.
	var spread []string
	for i := 10; i < 40; i++ {
		spread = append(spread, "198.51."+strconv.Itoa(i)+".7:1000")
	}
	if n := count(code, spread); n != 0 {
		t.Errorf("30 addresses in 30 /24s: %d refused, want 0", n)
	}
	// IPv6: one /64 is one address.
	var v6 []string
	for i := 1; i <= 8; i++ {
		v6 = append(v6, "[2001:db8:1:2::"+strconv.Itoa(i)+"]:1000")
	}
	if n := count(code, v6); n != 3 {
		t.Errorf("8 addresses in one /64: %d refused, want 3", n)
	}
	// Registrations have their own, smaller limit (the refusal comes
	// before the WebSocket upgrade).
	if n := count(PathHost, repeat("203.0.113.1:1000", 5)); n != 3 {
		t.Errorf("one address, 5 registrations: %d refused, want 3", n)
	}
	if n := testutil.ToFloat64(s.m.lookups.WithLabelValues("limited")); n != 21 {
		t.Errorf("lookups counted as limited: %v, want 21", n)
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}
