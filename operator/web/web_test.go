package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// hostile is a player name a client could never get past the host's
// username rules, here to prove nothing renders it as markup.
const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`

// fakeSource is a Source whose Overview the test sets; when live, each
// Overview is taken now and a tick later than the one before.
type fakeSource struct {
	mu   sync.Mutex
	o    host.Overview
	live bool
}

func (f *fakeSource) Overview() host.Overview {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.live {
		f.o.At = time.Now()
		f.o.Tick++
	}
	return f.o
}

func (f *fakeSource) set(o host.Overview) {
	f.mu.Lock()
	f.o = o
	f.mu.Unlock()
}

// fullOverview has one of everything.
func fullOverview(now time.Time) host.Overview {
	return host.Overview{
		At: now.Add(-100 * time.Millisecond), Started: now.Add(-90 * time.Minute), Game: "Test colony",
		Tick: 98765, TickRate: 60, Speed: 1, TicksPerSecond: 59.5, TLS: true, MaxPlayers: 8, HashEvery: 60,
		Players: []host.PlayerView{
			{ID: 1, Name: "Alice", Status: "playing", Faction: 3, Latency: 12500 * time.Microsecond, TicksBehind: 2, Since: now.Add(-time.Minute)},
			{ID: 2, Name: hostile, Spectator: true, Status: "spectating", Repairing: true},
		},
		Maps: []host.MapView{{ID: 0, RawBytes: 4 << 20, Bytes: 1 << 20, CheckedTick: 98760, CheckedAt: now.Add(-time.Second), Matched: true}},
		Joins: []host.JoinRecord{
			{At: now.Add(-30 * time.Second), Remote: "127.0.0.1:5555", Name: "Alice", Outcome: host.JoinOK,
				Phases: []host.PhaseTime{{Phase: "handshake", D: 1500 * time.Microsecond}, {Phase: "download", D: 2 * time.Second}},
				Total:  2500 * time.Millisecond, Bytes: 1 << 20, Resumed: 3 << 20, Join: 9, Retries: 2},
			{At: now.Add(-20 * time.Second), Remote: "127.0.0.1:5556", Name: "alice", Outcome: host.JoinRefused, Reason: "UsernameAlreadyOnline",
				Total: 3 * time.Millisecond},
		},
		Unnamed: 417,
		Desyncs: []host.DesyncRecord{{At: now.Add(-10 * time.Second), Player: 1, Name: "Alice", Event: host.DesyncRepaired, Tick: 98000, Maps: []int32{0}, Repair: 80 * time.Millisecond},
			{At: now.Add(-11 * time.Second), Player: 1, Name: "Alice", Event: host.DesyncDetected, Tick: 98000, Maps: []int32{0}, Reference: "majority 2 of 3 players"}},
		LastSave: &host.SaveRecord{At: now.Add(-5 * time.Second), Path: "/srv/games/saves/world.lhsave", Tick: 98700, Bytes: 2 << 20, D: 45 * time.Millisecond},
		Chat: []host.ChatRecord{
			{At: now.Add(-2 * time.Second), By: "console", Text: "restart in 5 minutes"},
			{At: now.Add(-3 * time.Second), PlayerID: 2, Name: "Alice", Text: hostile},
		},
		Stats: host.Stats{BytesSent: 123456, Commands: 40, CommandsRefused: 6, RefusedRate: 3, RefusedSpectator: 2, RefusedInvalid: 1,
			Checkpoints: 1600, Saves: 3, Chats: 9, ChatsRefused: 1, Leaves: 4, Drops: 2, AdminActions: 1,
			Pending: 64, PendingEvicted: 5000, PasswordChecks: 90, PasswordsWrong: 89, GuessesRefused: 700, PuzzlesIssued: 60, PuzzleBits: 18},
	}
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp, string(b)
}

func TestOverviewJSON(t *testing.T) {
	src := &fakeSource{o: fullOverview(time.Now())}
	// Stale only after an hour, so a slow machine cannot make the
	// 100 ms-old picture stale before the request.
	ts := httptest.NewServer(web.Handler(src, web.Config{StaleAfter: time.Hour, Logger: testkit.Quiet()}))
	defer ts.Close()
	resp, body := get(t, ts.URL+"/api/overview")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, "/srv/games") {
		t.Errorf("the JSON carries raw markup or the save's folder: %s", body)
	}
	var v struct {
		Game     string   `json:"game"`
		Tick     uint64   `json:"tick"`
		AgeMs    float64  `json:"age_ms"`
		Stale    bool     `json:"stale"`
		UptimeMs float64  `json:"uptime_ms"`
		TLS      bool     `json:"tls"`
		Phases   []string `json:"join_phases"`
		Players  []struct {
			Name      string  `json:"name"`
			Spectator bool    `json:"spectator"`
			Status    string  `json:"status"`
			Faction   int32   `json:"faction"`
			LatencyMs float64 `json:"latency_ms"`
			Behind    uint64  `json:"ticks_behind"`
			Repairing bool    `json:"repairing"`
			Since     *string `json:"since"`
		} `json:"players"`
		Maps []struct {
			RawBytes    uint64 `json:"raw_bytes"`
			Bytes       uint64 `json:"bytes"`
			CheckedTick uint64 `json:"checked_tick"`
			Matched     bool   `json:"matched"`
		} `json:"maps"`
		Joins []struct {
			Name    string `json:"name"`
			Outcome string `json:"outcome"`
			Reason  string `json:"reason"`
			Phases  []struct {
				Phase string  `json:"phase"`
				Ms    float64 `json:"ms"`
			} `json:"phases"`
			TotalMs      float64 `json:"total_ms"`
			Retries      int     `json:"retries"`
			ResumedBytes uint64  `json:"resumed_bytes"`
		} `json:"joins"`
		Unnamed uint64 `json:"unnamed"`
		Desyncs []struct {
			Event     string  `json:"event"`
			Maps      []int32 `json:"maps"`
			RepairMs  float64 `json:"repair_ms"`
			Reference string  `json:"reference"`
		} `json:"desyncs"`
		LastSave *struct {
			File string  `json:"file"`
			Ms   float64 `json:"ms"`
			Tick uint64  `json:"tick"`
		} `json:"last_save"`
		Chat []struct {
			Player int32  `json:"player"`
			Name   string `json:"name"`
			By     string `json:"by"`
			Text   string `json:"text"`
		} `json:"chat"`
		Stats struct {
			BytesSent       uint64            `json:"bytes_sent"`
			Commands        uint64            `json:"commands"`
			CommandsRefused uint64            `json:"commands_refused"`
			RefusedBy       map[string]uint64 `json:"refused_by"`
			Chats           uint64            `json:"chats"`
			ChatsRefused    uint64            `json:"chats_refused"`
			Leaves          uint64            `json:"leaves"`
			Drops           uint64            `json:"drops"`
			AdminActions    uint64            `json:"admin_actions"`
			Pending         int               `json:"pending"`
			PendingEvicted  uint64            `json:"pending_evicted"`
			PasswordChecks  uint64            `json:"password_checks"`
			PasswordsWrong  uint64            `json:"passwords_wrong"`
			GuessesRefused  uint64            `json:"guesses_refused"`
			PuzzlesIssued   uint64            `json:"puzzles_issued"`
			PuzzleBits      int               `json:"puzzle_bits"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if v.Game != "Test colony" || v.Tick != 98765 || v.Stale || v.AgeMs < 100 || v.AgeMs > float64(time.Hour/time.Millisecond) || v.UptimeMs < 90*60*1000 || !v.TLS {
		t.Errorf("session fields: %+v", v)
	}
	if strings.Join(v.Phases, ",") != strings.Join(host.JoinPhases, ",") {
		t.Errorf("join phases %v", v.Phases)
	}
	if len(v.Players) != 2 || v.Players[0].Name != "Alice" || v.Players[0].LatencyMs != 12.5 || v.Players[0].Faction != 3 ||
		v.Players[0].Behind != 2 || v.Players[0].Since == nil || v.Players[1].Name != hostile || !v.Players[1].Spectator ||
		!v.Players[1].Repairing || v.Players[1].Since != nil {
		t.Errorf("players: %+v", v.Players)
	}
	if len(v.Maps) != 1 || v.Maps[0].RawBytes != 4<<20 || v.Maps[0].Bytes != 1<<20 || v.Maps[0].CheckedTick != 98760 || !v.Maps[0].Matched {
		t.Errorf("maps: %+v", v.Maps)
	}
	if len(v.Joins) != 2 || v.Joins[0].TotalMs != 2500 || len(v.Joins[0].Phases) != 2 || v.Joins[0].Phases[0].Phase != "handshake" ||
		v.Joins[0].Phases[0].Ms != 1.5 || v.Joins[1].Reason != "UsernameAlreadyOnline" || v.Joins[1].Phases == nil ||
		v.Joins[0].Retries != 2 || v.Joins[0].ResumedBytes != 3<<20 || v.Joins[1].Retries != 0 {
		t.Errorf("joins: %+v", v.Joins)
	}
	if v.Unnamed != 417 {
		t.Errorf("unnamed attempts %d, want 417", v.Unnamed)
	}
	if len(v.Desyncs) != 2 || v.Desyncs[0].RepairMs != 80 || len(v.Desyncs[0].Maps) != 1 || v.Desyncs[0].Reference != "" ||
		v.Desyncs[1].Reference != "majority 2 of 3 players" {
		t.Errorf("desyncs: %+v", v.Desyncs)
	}
	if v.LastSave == nil || v.LastSave.File != "world.lhsave" || v.LastSave.Ms != 45 || v.LastSave.Tick != 98700 {
		t.Errorf("last save: %+v", v.LastSave)
	}
	if st := v.Stats; st.BytesSent != 123456 || st.Commands != 40 || st.CommandsRefused != 6 ||
		st.RefusedBy["rate"] != 3 || st.RefusedBy["spectator"] != 2 || st.RefusedBy["invalid"] != 1 ||
		st.Chats != 9 || st.ChatsRefused != 1 || st.Leaves != 4 || st.Drops != 2 || st.AdminActions != 1 ||
		st.Pending != 64 || st.PendingEvicted != 5000 || st.PasswordChecks != 90 || st.PasswordsWrong != 89 ||
		st.GuessesRefused != 700 || st.PuzzlesIssued != 60 || st.PuzzleBits != 18 {
		t.Errorf("stats: %+v", v.Stats)
	}
	if len(v.Chat) != 2 || v.Chat[0].Name != "" || v.Chat[0].By != "console" || v.Chat[0].Text != "restart in 5 minutes" ||
		v.Chat[1].Name != "Alice" || v.Chat[1].Player != 2 || v.Chat[1].Text != hostile {
		t.Errorf("chat: %+v", v.Chat)
	}

	// Before the session publishes anything: empty lists, not null, and
	// stale.
	src.set(host.Overview{})
	_, body = get(t, ts.URL+"/api/overview")
	for _, field := range []string{`"players":[]`, `"maps":[]`, `"joins":[]`, `"desyncs":[]`, `"chat":[]`, `"admin_actions":0`, `"last_save":null`, `"at":null`, `"stale":true`} {
		if !strings.Contains(body, field) {
			t.Errorf("empty overview lacks %s: %s", field, body)
		}
	}
}

// readEvent reads one Server-Sent Event's lines up to the blank line.
func readEvent(t *testing.T, r *bufio.Reader) []string {
	t.Helper()
	var lines []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read event: %v (after %q)", err, lines)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return lines
		}
		lines = append(lines, line)
	}
}

func TestEventsFraming(t *testing.T) {
	src := &fakeSource{o: fullOverview(time.Now()), live: true}
	ts := httptest.NewServer(web.Handler(src, web.Config{Interval: 50 * time.Millisecond, MaxStreams: 1, Logger: testkit.Quiet()}))
	defer ts.Close()

	open := func() (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, cancel
	}
	resp, cancel := open()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%s, %v", resp.Status, resp.Header)
	}
	r := bufio.NewReader(resp.Body)
	if ev := readEvent(t, r); len(ev) != 1 || ev[0] != "retry: 2000" {
		t.Fatalf("first event %q, want the retry interval", ev)
	}
	var ticks []uint64
	for range 3 {
		ev := readEvent(t, r)
		if len(ev) != 1 || !strings.HasPrefix(ev[0], "data: {") {
			t.Fatalf("event %q, want one data line of JSON", ev)
		}
		var v struct {
			Tick    uint64 `json:"tick"`
			Players []struct {
				Name string `json:"name"`
			} `json:"players"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev[0], "data: ")), &v); err != nil {
			t.Fatalf("event data: %v", err)
		}
		if len(v.Players) != 2 || v.Players[1].Name != hostile {
			t.Fatalf("event players %+v", v.Players)
		}
		ticks = append(ticks, v.Tick)
	}
	if !(ticks[0] < ticks[1] && ticks[1] < ticks[2]) {
		t.Errorf("ticks over three events %v, want rising", ticks)
	}

	// The only stream slot is taken: another stream is refused.
	if resp2, body := get(t, ts.URL+"/events"); resp2.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a stream past the cap: %s %s", resp2.Status, body)
	}
	// Leaving frees the slot.
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp3, cancel3 := open()
		code := resp3.StatusCode
		cancel3()
		resp3.Body.Close()
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream slot was not freed after the client left: %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHealthz(t *testing.T) {
	src := &fakeSource{}
	// An hour's margin either side of StaleAfter: a loaded machine may
	// take seconds between building this table and a request.
	ts := httptest.NewServer(web.Handler(src, web.Config{StaleAfter: time.Hour, Logger: testkit.Quiet()}))
	defer ts.Close()
	for _, c := range []struct {
		name string
		at   time.Time
		code int
		body string
	}{
		{"before the first overview", time.Time{}, 503, "starting"},
		{"fresh", time.Now().Add(-100 * time.Millisecond), 200, "ok\n"},
		{"stalled", time.Now().Add(-2 * time.Hour), 503, "stale"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src.set(host.Overview{At: c.at, Tick: 42})
			resp, body := get(t, ts.URL+"/healthz")
			if resp.StatusCode != c.code || !strings.HasPrefix(body, c.body) {
				t.Errorf("%d %q, want %d %q", resp.StatusCode, body, c.code, c.body)
			}
		})
	}
}

func TestPage(t *testing.T) {
	ts := httptest.NewServer(web.Handler(&fakeSource{}, web.Config{Logger: testkit.Quiet()}))
	defer ts.Close()
	resp, body := get(t, ts.URL+"/")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("%s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'sha256-", "style-src 'sha256-", "connect-src 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows any inline code: %q", csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("no nosniff header")
	}
	// Offline and self-contained: nothing fetched from anywhere else.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//`).FindString(body); m != "" {
		t.Errorf("the page loads an external resource: %s", m)
	}
	// Data reaches the DOM only as text.
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(body, sink) {
			t.Errorf("the page uses %s", sink)
		}
	}
	for _, id := range []string{`id="tick"`, `id="players"`, `id="maps"`, `id="joins"`, `id="desyncs"`, `id="save"`, `id="conn"`, `new EventSource("events")`} {
		if !strings.Contains(body, id) {
			t.Errorf("the page lacks %s", id)
		}
	}
}

func TestRoutes(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "lockhost_test_total", Help: "A test counter."})
	c.Add(3)
	reg.MustRegister(c)
	with := httptest.NewServer(web.Handler(&fakeSource{}, web.Config{Gatherer: reg, Logger: testkit.Quiet()}))
	defer with.Close()
	without := httptest.NewServer(web.Handler(&fakeSource{}, web.Config{Logger: testkit.Quiet()}))
	defer without.Close()

	resp, body := get(t, with.URL+"/metrics")
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	if v := fams["lockhost_test_total"].GetMetric()[0].GetCounter().GetValue(); v != 3 {
		t.Errorf("counter %v, want 3", v)
	}
	for _, c := range []struct {
		url, method string
		code        int
	}{
		{without.URL + "/metrics", "GET", 404},
		{with.URL + "/nope", "GET", 404},
		{with.URL + "/index.html", "GET", 404},
		{with.URL + "/api/overview", "POST", 405},
		{with.URL + "/", "HEAD", 200},
	} {
		req, _ := http.NewRequest(c.method, c.url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.url, resp.StatusCode, c.code)
		}
	}
}

func TestListenAddr(t *testing.T) {
	for _, c := range []struct {
		in, want string
		loopback bool
	}{
		{"8080", "127.0.0.1:8080", true},
		{":8080", "127.0.0.1:8080", true},
		{" :9100 ", "127.0.0.1:9100", true},
		{":0", "127.0.0.1:0", true},
		{"localhost:8080", "localhost:8080", true},
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{"[::1]:8080", "[::1]:8080", true},
		{"0.0.0.0:8080", "0.0.0.0:8080", false},
		{"[::]:8080", "[::]:8080", false},
		{"192.168.1.5:8080", "192.168.1.5:8080", false},
		{"status.example:80", "status.example:80", false},
		{"", "", false},
		{"localhost", "", false},
		{"::1", "", false},
		{":http", "", false},
		{":65536", "", false},
		{":-1", "", false},
		{"host:", "", false},
	} {
		got, err := web.ListenAddr(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("ListenAddr(%q) = %q, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", c.in, got, err, c.want)
			continue
		}
		if lb := web.IsLoopback(got); lb != c.loopback {
			t.Errorf("IsLoopback(%q) = %v, want %v", got, lb, c.loopback)
		}
	}
}

// TestServeShutdown checks Serve ends open streams and returns promptly
// once its context ends.
func TestServeShutdown(t *testing.T) {
	ln, err := web.Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	if !web.IsLoopback(ln.Addr().String()) {
		t.Fatalf("a bare port listened on %s", ln.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	src := &fakeSource{o: fullOverview(time.Now()), live: true}
	go func() {
		served <- web.Serve(ctx, ln, web.Handler(src, web.Config{Logger: testkit.Quiet()}), testkit.Quiet())
	}()

	resp, err := http.Get("http://" + ln.Addr().String() + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	readEvent(t, r) // retry
	readEvent(t, r) // the first overview
	cancel()
	// Serve returns nil only when its graceful shutdown finished before
	// the grace period ran out, which with a stream open means the stream
	// was ended; a stream left open would make it return an error.
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended, with a stream open")
	}
	if _, err := io.Copy(io.Discard, r); err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Logf("stream ended with %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Error("still listening after shutdown")
	}
}

// TestStreamOutlivesWriteTimeout checks a stream keeps going past a
// server's write timeout: each event pushes the deadline forward.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	src := &fakeSource{o: fullOverview(time.Now()), live: true}
	ts := httptest.NewUnstartedServer(web.Handler(src, web.Config{Interval: 50 * time.Millisecond, Logger: testkit.Quiet()}))
	ts.Config.WriteTimeout = 300 * time.Millisecond
	ts.Start()
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	readEvent(t, r)
	// Read until an event arrives four write timeouts after the first: a
	// stream whose deadline was not pushed forward would break before
	// that, and readEvent would fail. How many events come meanwhile is
	// the machine's business.
	start := time.Now()
	for time.Since(start) < 4*ts.Config.WriteTimeout {
		readEvent(t, r)
	}
}

// TestEventsPerAddressCap: one address holding its most /events streams
// is refused one more, while another address still gets a stream, and
// the slot comes back when a stream ends.
func TestEventsPerAddressCap(t *testing.T) {
	src := &fakeSource{o: fullOverview(time.Now()), live: true}
	ts := httptest.NewServer(web.Handler(src, web.Config{Interval: 50 * time.Millisecond, MaxStreams: 8, MaxStreamsPerAddr: 2, Logger: testkit.Quiet()}))
	t.Cleanup(ts.Close) // after the streams' cleanups below, which end them
	clientFrom := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	}
	open := func(c *http.Client) (int, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/events", nil)
		resp, err := c.Do(req)
		if err != nil {
			cancel()
			t.Skipf("cannot connect from another loopback address: %v", err)
		}
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		return resp.StatusCode, func() { cancel(); resp.Body.Close() }
	}
	idler := clientFrom("127.0.0.2")
	code1, close1 := open(idler)
	code2, _ := open(idler)
	if code1 != 200 || code2 != 200 {
		t.Fatalf("first two streams from one address: %d, %d", code1, code2)
	}
	if code, _ := open(idler); code != http.StatusServiceUnavailable {
		t.Fatalf("third stream from one address: %d, want 503", code)
	}
	if code, _ := open(clientFrom("127.0.0.3")); code != 200 {
		t.Fatalf("a stream from another address: %d, want 200", code)
	}
	close1()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, closeIt := open(idler)
		closeIt()
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the address's slot was not freed after its stream ended: %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOverviewAgones: with Config.Agones the JSON carries what the host
// last told Agones (the state, the players List's size, the pings and the
// last one's age from the JSON's own clock); without it, "agones" is
// null, so the page shows no Agones card outside Agones.
func TestOverviewAgones(t *testing.T) {
	src := &fakeSource{o: fullOverview(time.Now())}
	pinged := time.Now().Add(-time.Hour)
	calls := 0
	with := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet(), Agones: func() web.Agones {
		calls++
		return web.Agones{State: "Allocated", Players: 2, HealthPings: 7, LastPing: pinged}
	}}))
	defer with.Close()
	without := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet()}))
	defer without.Close()

	type agonesJSON struct {
		State         string     `json:"state"`
		Players       int        `json:"players"`
		HealthPings   int64      `json:"health_pings"`
		LastPing      *time.Time `json:"last_ping"`
		LastPingAgoMs *float64   `json:"last_ping_ago_ms"`
	}
	var v struct {
		Agones *agonesJSON `json:"agones"`
	}
	_, body := get(t, with.URL+"/api/overview")
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	a := v.Agones
	if a == nil || a.State != "Allocated" || a.Players != 2 || a.HealthPings != 7 || calls != 1 {
		t.Fatalf("agones = %+v after %d calls, want Allocated, 2 players, 7 pings, 1 call: %s", a, calls, body)
	}
	if a.LastPing == nil || !a.LastPing.Equal(pinged) || a.LastPingAgoMs == nil || *a.LastPingAgoMs < float64(time.Hour/time.Millisecond) {
		t.Errorf("last ping %v, %v ms ago; want %v, an hour or more ago", a.LastPing, a.LastPingAgoMs, pinged)
	}

	_, body = get(t, without.URL+"/api/overview")
	if !strings.Contains(body, `"agones":null`) {
		t.Errorf("without Config.Agones the JSON lacks \"agones\":null: %s", body)
	}
}

// TestOverviewPortMapping: with Config.PortMapping the JSON carries the
// router's forwarding of the game port (state, method, external address,
// the line a friend types); without it, "port_mapping" is null.
func TestOverviewPortMapping(t *testing.T) {
	src := &fakeSource{o: fullOverview(time.Now())}
	pm := web.PortMapping{State: "mapped", Method: "NAT-PMP", External: "198.51.100.1:30502", Join: "join 198.51.100.1:30502"}
	with := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet(), PortMapping: func() web.PortMapping { return pm }}))
	defer with.Close()
	without := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet()}))
	defer without.Close()
	_, body := get(t, with.URL+"/api/overview")
	want := `"port_mapping":{"state":"mapped","method":"NAT-PMP","external":"198.51.100.1:30502","join":"join 198.51.100.1:30502"}`
	if !strings.Contains(body, want) {
		t.Errorf("the JSON lacks %s: %s", want, body)
	}
	_, body = get(t, without.URL+"/api/overview")
	if !strings.Contains(body, `"port_mapping":null`) {
		t.Errorf("without Config.PortMapping the JSON lacks \"port_mapping\":null: %s", body)
	}
}

// TestShutdownClosesConnectionsWithoutRequest: a connection that has sent
// no request yet (a browser opens some ahead of need) does not hold the
// shutdown: Serve ends without error instead of waiting out its 5 s
// allowance and reporting "context deadline exceeded".
func TestShutdownClosesConnectionsWithoutRequest(t *testing.T) {
	ln, err := web.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- web.Serve(ctx, ln, web.Handler(&fakeSource{o: fullOverview(time.Now())}, web.Config{Logger: testkit.Quiet()}), testkit.Quiet())
	}()
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	// The server has accepted it once a request on another connection is
	// answered: connections are accepted in order.
	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Serve with a connection that sent nothing: %v", err)
	}
}
