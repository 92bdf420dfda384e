package coordserver

import (
	"bytes"
	"context"
	"errors"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func coordinator(t *testing.T, cfg ServerConfig) (*Server, *httptest.Server, *coord.Coordinator) {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(s)
	t.Cleanup(ts.Close)
	c, err := coord.ParseURL(ts.URL + "#" + tlsid.FingerprintDER(ts.Certificate().Raw))
	if err != nil {
		t.Fatal(err)
	}
	return s, ts, c
}

func register(t *testing.T, ctx context.Context, cfg coord.HostConfig) (*coord.Host, *coord.TURN) {
	t.Helper()
	got := make(chan *coord.TURN, 4)
	cfg.OnRegistered = func(_ coord.Code, turn *coord.TURN) { got <- turn }
	cfg.MinBackoff = 20 * time.Millisecond
	h := coord.Register(ctx, cfg)
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
	secret, _ := coord.NewSecret()
	reach := coord.Reach{Addrs: []string{"203.0.113.7:30502"}, LAN: []string{"192.168.1.5:30502"}, Play: []string{"http://203.0.113.7:8080/play"}}
	cur := make(chan coord.Reach, 1)
	cur <- reach
	h, turn := register(t, ctx, coord.HostConfig{Coordinator: c, Secret: secret, Reach: func() coord.Reach { r := <-cur; cur <- r; return r }})
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
	if r.Code != coord.CodeOfSecret(secret) || r.Addrs[0] != reach.Addrs[0] || r.LAN[0] != reach.LAN[0] || r.TURN == nil {
		t.Fatalf("lookup: %+v", r)
	}
	<-cur
	cur <- coord.Reach{Addrs: []string{"198.51.100.9:40000"}}
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
	// The register again is answered with fresh TURN credentials, which
	// the host keeps for its next attempts.
	for deadline := time.Now().Add(5 * time.Second); h.TURN() == turn && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if h.TURN() == turn || h.TURN() == nil || h.TURN().Username[strings.Index(h.TURN().Username, ":"):] != ":"+string(h.Code()[1:]) {
		t.Fatalf("after registering again the host's TURN is %+v, was %+v", h.TURN(), turn)
	}
	other, _ := coord.NewSecret()
	var se *coord.StatusError
	if _, err := c.Lookup(ctx, coord.CodeOfSecret(other)); !errors.As(err, &se) || se.Status != http.StatusNotFound {
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

func TestCodeStableAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	secret, _, _ := coord.LoadOrCreateSecret(dir)
	srv1, _, c1 := coordinator(t, ServerConfig{HostTimeout: 2 * time.Second})
	ctx, stop := context.WithCancel(context.Background())
	regs := make(chan struct{}, 8)
	h1 := coord.Register(ctx, coord.HostConfig{Coordinator: c1, Secret: secret, Ping: 50 * time.Millisecond, MinBackoff: 20 * time.Millisecond,
		Logger: testLogger(t), OnRegistered: func(coord.Code, *coord.TURN) { regs <- struct{}{} }})
	code := h1.Code()
	<-regs
	// Pings every 50 ms keep it over the coordinator's 2 s timeout, which
	// passes more than once meanwhile (a loaded machine may hold a ping
	// back for a while: a timeout of 6 pings failed 1 run in 6).
	time.Sleep(5 * time.Second)
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
	secret2, created, err := coord.LoadOrCreateSecret(dir)
	if err != nil || created {
		t.Fatal(created, err)
	}
	_, _, c2 := coordinator(t, ServerConfig{})
	ctx3, stop3 := context.WithCancel(context.Background())
	defer stop3()
	h3, _ := register(t, ctx3, coord.HostConfig{Coordinator: c2, Secret: secret2})
	if h3.Code() != code {
		t.Fatalf("code %s after the restart, was %s", h3.Code(), code)
	}
	if _, err := c2.Lookup(ctx3, code); err != nil {
		t.Fatalf("lookup at the new coordinator: %v", err)
	}
}

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
	if n := count(coord.PathHost, repeat("203.0.113.1:1000", 5)); n != 3 {
		t.Errorf("one address, 5 registrations: %d refused, want 3", n)
	}
	if n := testutil.ToFloat64(s.m.lookups.WithLabelValues("limited")); n != 21 {
		t.Errorf("lookups counted as limited: %v, want 21", n)
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestSignalRelay(t *testing.T) {
	_, _, c := coordinator(t, ServerConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	secret, _ := coord.NewSecret()
	ended := make(chan error, 1)
	h, _ := register(t, ctx, coord.HostConfig{Coordinator: c, Secret: secret,
		OnSignal: func(ctx context.Context, s coord.Signal, _ *coord.TURN) {
			for {
				b, err := s.Recv(ctx)
				if err != nil {
					ended <- err
					return
				}
				slices.Reverse(b)
				if err := s.Send(ctx, b); err != nil {
					ended <- err
					return
				}
			}
		}})
	sig, err := c.OpenSignal(ctx, h.Code())
	if err != nil {
		t.Fatal(err)
	}
	for _, blob := range []string{"offer: v=0 o=- 1 2 IN IP4 0.0.0.0", "candidate:1 1 udp 2130706431 192.0.2.1 5000 typ host", strings.Repeat("x", coord.MaxBlob)} {
		if err := sig.Send(ctx, []byte(blob)); err != nil {
			t.Fatal(err)
		}
		got, err := sig.Recv(ctx)
		want := []byte(blob)
		slices.Reverse(want)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("reply to %.20q: %.20q, %v", blob, got, err)
		}
	}
	if err := sig.Send(ctx, make([]byte, coord.MaxBlob+1)); err == nil {
		t.Fatal("a blob over MaxBlob was sent")
	}
	sig.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, coord.ErrSignalClosed) {
			t.Fatalf("the host's side ended with %v, want ErrSignalClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the host's side did not see the attempt end")
	}
}

func TestSignalWithoutHandler(t *testing.T) {
	_, _, c := coordinator(t, ServerConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret, _ := coord.NewSecret()
	h, _ := register(t, ctx, coord.HostConfig{Coordinator: c, Secret: secret})
	sig, err := c.OpenSignal(ctx, h.Code())
	if err != nil {
		t.Fatal(err)
	}
	defer sig.Close()
	sig.Send(ctx, []byte("offer"))
	if _, err := sig.Recv(ctx); !errors.Is(err, coord.ErrSignalClosed) {
		t.Fatalf("Recv: %v, want ErrSignalClosed", err)
	}
}

func TestConnectFallbackAndReport(t *testing.T) {
	srv, _, c := coordinator(t, ServerConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	secret, _ := coord.NewSecret()
	h, _ := register(t, ctx, coord.HostConfig{Coordinator: c, Secret: secret,
		Reach: func() coord.Reach { return coord.Reach{Addrs: []string{testkit.DeadAddr(t)}} },
		OnSignal: func(ctx context.Context, s coord.Signal, _ *coord.TURN) {
			if b, err := s.Recv(ctx); err == nil {
				s.Send(ctx, append([]byte("answer to "), b...))
			}
		}})
	r, err := c.Lookup(ctx, h.Code())
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer b.Close()
	conn, path, err := c.Connect(ctx, r, coord.ConnectOptions{Fallback: func(ctx context.Context, sig coord.Signal, _ *coord.TURN) (net.Conn, string, error) {
		if err := sig.Send(ctx, []byte("offer")); err != nil {
			return nil, "", err
		}
		got, err := sig.Recv(ctx)
		if err != nil || string(got) != "answer to offer" {
			return nil, "", errors.New("no answer: " + string(got))
		}
		return a, "punched", nil
	}})
	if err != nil || path != "punched" || conn != a {
		t.Fatalf("Connect: path %q, %v", path, err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if testutil.ToFloat64(srv.m.attempts.WithLabelValues("punched")) == 1 {
			break
		}
	}
	if n := testutil.ToFloat64(srv.m.attempts.WithLabelValues("punched")); n != 1 {
		t.Fatalf("punched attempts counted: %v, want 1", n)
	}
	if err := c.Report(ctx, h.Code(), "teleported", time.Second); err == nil {
		t.Fatal("a report with an unknown outcome was taken")
	}
}

func TestInvitePage(t *testing.T) {
	_, ts, c := coordinator(t, ServerConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret, _ := coord.NewSecret()
	h, _ := register(t, ctx, coord.HostConfig{Coordinator: c, Secret: secret,
		Reach: func() coord.Reach { return coord.Reach{Play: []string{"http://203.0.113.7:8080/play"}} }})
	client := ts.Client()
	resp, err := client.Get(c.InviteLink(h.Code()))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := html.UnescapeString(string(raw))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `url=http://203.0.113.7:8080/play`) || !strings.Contains(string(body), "join "+string(h.Code())) {
		t.Fatalf("invite page: %d\n%s", resp.StatusCode, body)
	}
	other, _ := coord.NewSecret()
	resp, err = client.Get(c.InviteLink(coord.CodeOfSecret(other)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("invite page of an unknown code: %d", resp.StatusCode)
	}
}

// TestInvitePagePlayer: with a browser player the invite link is the
// player's page (asked for at /play, the code left in the link for the
// page to read), its files are served under /play, and an unknown code
// is still 404 without reaching the player.
func TestInvitePagePlayer(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	player := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		io.WriteString(w, "player page")
	})
	_, ts, c := coordinator(t, ServerConfig{Player: player})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	secret, _ := coord.NewSecret()
	h, _ := register(t, ctx, coord.HostConfig{Coordinator: c, Secret: secret,
		Reach: func() coord.Reach { return coord.Reach{Play: []string{"http://203.0.113.7:8080/play"}} }})
	client := ts.Client()
	other, _ := coord.NewSecret()
	for _, tc := range []struct {
		url    string
		status int
		body   string
	}{
		{c.InviteLink(h.Code()), 200, "player page"},
		{ts.URL + "/play/play.js", 200, "player page"},
		{c.InviteLink(coord.CodeOfSecret(other)), http.StatusNotFound, "No host is registered"},
	} {
		resp, err := client.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(raw), tc.body) {
			t.Errorf("GET %s: %d %q, want %d %q", tc.url, resp.StatusCode, raw, tc.status, tc.body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"/play", "/play/play.js"}; strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("the player was asked for %q, want %q", seen, want)
	}
}

func TestOwners(t *testing.T) {
	file := filepath.Join(t.TempDir(), "owners.json")
	now := time.Unix(1700000000, 0)
	o, err := loadOwners(file, time.Hour, 2, now)
	if err != nil {
		t.Fatal(err)
	}
	a, b := coord.Code("+K7QF2MX"), coord.Code("+2222222")
	steps := []struct {
		code coord.Code
		key  string
		at   time.Duration
		ok   bool
	}{
		{a, "k1", 0, true},
		{a, "k2", time.Minute, false}, // another key with the same code
		{a, "k1", 2 * time.Minute, true},
		{b, "k2", 3 * time.Minute, true},
		{coord.Code("+3333333"), "k3", 4 * time.Minute, false}, // the table is full
	}
	for i, s := range steps {
		if err := o.claim(s.code, s.key, now.Add(s.at)); (err == nil) != s.ok {
			t.Fatalf("step %d: claim %s by %s: %v, want ok=%v", i, s.code, s.key, err, s.ok)
		}
	}
	// A restart reads the file: the code is still k1's.
	later := now.Add(5 * time.Hour)
	o2, err := loadOwners(file, time.Hour, 2, later)
	if err != nil {
		t.Fatal(err)
	}
	if err := o2.claim(a, "k2", later.Add(time.Minute)); err == nil {
		t.Fatal("after a restart another key took a held code")
	}
	// Its host away for the TTL, the code is free.
	o2.seen(a, "k1", later.Add(time.Minute))
	if err := o2.claim(a, "k2", later.Add(time.Minute+time.Hour)); err != nil {
		t.Fatalf("a code unseen for the TTL: %v", err)
	}
	os.WriteFile(file, []byte(`{"not a code":{"key":"k","seen":"2026-01-01T00:00:00Z"}}`), 0o600)
	if _, err := loadOwners(file, time.Hour, 2, now); err == nil {
		t.Fatal("an owners file with a bad code was read")
	}
}

// TestSilentHostDropped: a host that sends nothing for HostTimeout is
// dropped, and registers again by itself.
func TestSilentHostDropped(t *testing.T) {
	srv, _, c := coordinator(t, ServerConfig{HostTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	secret, _ := coord.NewSecret()
	regs := make(chan struct{}, 16)
	coord.Register(ctx, coord.HostConfig{Coordinator: c, Secret: secret, Ping: time.Hour, MinBackoff: 20 * time.Millisecond,
		OnRegistered: func(coord.Code, *coord.TURN) { regs <- struct{}{} }})
	for i := 0; i < 3; i++ {
		select {
		case <-regs:
		case <-time.After(10 * time.Second):
			t.Fatalf("registration %d did not come: a silent host is not dropped (%d hosts)", i+1, srv.Hosts())
		}
	}
	if n := testutil.ToFloat64(srv.m.registrations.WithLabelValues("ok")); n < 3 {
		t.Fatalf("%v registrations counted, want 3 or more", n)
	}
}
