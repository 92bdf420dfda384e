package metrics_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/operator/metrics"
	"github.com/lockhost/lockhost/wire"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// fakeSource returns a fixed Overview.
type fakeSource struct{ o host.Overview }

func (f *fakeSource) Overview() host.Overview { return f.o }

// scrape fetches url and parses it with the Prometheus text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s: %s", resp.Status, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse scrape: %v\n%s", err, body)
	}
	return fams
}

// find returns the metric of family name whose labels include every
// name=value pair in labels (nil if none).
func find(fams map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		return m
	}
	return nil
}

// value is a counter's, gauge's or untyped metric's value, or -1 when the
// metric is missing.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m := find(fams, name, labels...)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

func serve(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	ts := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestEventsAndState(t *testing.T) {
	now := time.Now()
	src := &fakeSource{o: host.Overview{
		At: now.Add(-300 * time.Millisecond), Tick: 4321, Speed: 2, TicksPerSecond: 119.5, Holding: true,
		Players: []host.PlayerView{
			{Name: "Alice", Status: "playing", TicksBehind: 7, Latency: 12 * time.Millisecond},
			{Name: "Bob", Status: "downloading", TicksBehind: 900},
			{Name: "Eve", Spectator: true, Status: "spectating", TicksBehind: 3},
		},
		Stats: host.Stats{BytesSent: 123456, Commands: 40, CommandsRefused: 2, Repaired: 1, Checkpoints: 70, MajorityCheckpoints: 5, NoMajority: 2,
			MapResyncs: 1, JoinPoints: 3, Built: 2, AdminActions: 4,
			Pending: 17, PendingEvicted: 900, PasswordChecks: 90, PasswordsWrong: 88, GuessesRefused: 5000, PuzzlesIssued: 70, PuzzleBits: 19},
	}}
	m := metrics.New()
	reg, err := metrics.NewRegistry(m, src)
	if err != nil {
		t.Fatal(err)
	}
	phases := func(ms ...int) []host.PhaseTime {
		var ps []host.PhaseTime
		for i, v := range ms {
			ps = append(ps, host.PhaseTime{Phase: host.JoinPhases[i], D: time.Duration(v) * time.Millisecond})
		}
		return ps
	}
	m.JoinFinished(host.JoinRecord{Name: "Alice", Outcome: host.JoinOK, Phases: phases(1, 2, 3, 400, 50, 6), Total: 462 * time.Millisecond, Bytes: 1000, Path: "lan"})
	m.JoinFinished(host.JoinRecord{Name: "Bob", Outcome: host.JoinOK, Phases: phases(1, 2, 3, 4, 5, 6), Total: 21 * time.Millisecond, Bytes: 500, Path: "turn-udp"})
	m.ConnectAttempt("turn-udp")
	m.ConnectAttempt("failed")
	m.ConnectAttempt("failed")
	m.JoinFinished(host.JoinRecord{Name: "alice", Outcome: host.JoinRefused, Reason: "UsernameAlreadyOnline", Phases: phases(1, 2), Total: 3 * time.Millisecond})
	m.JoinFinished(host.JoinRecord{Name: "Cy", Outcome: host.JoinDropped, Join: 3, Bytes: 900})
	m.JoinFinished(host.JoinRecord{Name: "Cy", Outcome: host.JoinOK, Join: 3, Retries: 1, Retry: true, Bytes: 100, Resumed: 800})
	m.Desync(host.DesyncRecord{Event: host.DesyncDetected})
	m.Desync(host.DesyncRecord{Event: host.DesyncRepaired, Repair: 80 * time.Millisecond})
	m.Saved(host.SaveRecord{At: now, D: 30 * time.Millisecond, Bytes: 2048})
	m.Saved(host.SaveRecord{At: now, Err: "disk full"})

	fams := scrape(t, serve(t, reg))
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"lockhost_joins_total", []string{"outcome", "joined", "reason", ""}, 3},
		{"lockhost_joins_total", []string{"outcome", "refused", "reason", "UsernameAlreadyOnline"}, 1},
		{"lockhost_join_world_bytes_total", nil, 2500},
		{"lockhost_joins_by_path_total", []string{"path", "lan", "outcome", "joined"}, 1},
		{"lockhost_joins_by_path_total", []string{"path", "turn-udp", "outcome", "joined"}, 1},
		{"lockhost_connect_attempts_total", []string{"outcome", "turn-udp"}, 1},
		{"lockhost_connect_attempts_total", []string{"outcome", "failed"}, 2},
		{"lockhost_connect_attempts_total", []string{"outcome", "punched"}, 0},
		{"lockhost_resumed_bytes_total", nil, 800},
		{"lockhost_join_retries_total", nil, 1},
		{"lockhost_desync_events_total", []string{"event", "detected"}, 1},
		{"lockhost_desync_events_total", []string{"event", "repaired"}, 1},
		{"lockhost_desync_events_total", []string{"event", "dropped"}, 0},
		{"lockhost_autosave_failures_total", nil, 1},
		{"lockhost_autosave_last_bytes", nil, 2048},
		{"lockhost_bytes_sent_total", nil, 123456},
		{"lockhost_commands_total", []string{"result", "accepted"}, 40},
		{"lockhost_commands_total", []string{"result", "refused"}, 2},
		{"lockhost_desync_repairs_total", nil, 1},
		{"lockhost_resyncs_started_total", []string{"scope", "map"}, 1},
		{"lockhost_checkpoints_total", nil, 70},
		{"lockhost_relay_checkpoints_decided_total", []string{"outcome", "majority"}, 5},
		{"lockhost_relay_checkpoints_decided_total", []string{"outcome", "none"}, 2},
		{"lockhost_join_points_total", []string{"stage", "built"}, 2},
		{"lockhost_admin_actions_total", nil, 4},
		{"lockhost_pending_connections", nil, 17},
		{"lockhost_pending_evicted_total", nil, 900},
		{"lockhost_password_checks_total", []string{"result", "right"}, 2},
		{"lockhost_password_checks_total", []string{"result", "wrong"}, 88},
		{"lockhost_password_guesses_refused_total", nil, 5000},
		{"lockhost_password_puzzles_issued_total", nil, 70},
		{"lockhost_password_puzzle_difficulty", nil, 19},
		{"lockhost_players_online", []string{"role", "player"}, 2},
		{"lockhost_players_online", []string{"role", "spectator"}, 1},
		{"lockhost_session_tick", nil, 4321},
		{"lockhost_session_speed", nil, 2},
		{"lockhost_ticks_per_second", nil, 119.5},
		{"lockhost_session_holding", nil, 1},
		// Bob is still downloading: his 900 ticks are catching up, not lag.
		{"lockhost_tick_lag_max_ticks", nil, 7},
		{"lockhost_player_ticks_behind", []string{"player", "Bob"}, 900},
		{"lockhost_player_latency_seconds", []string{"player", "Alice"}, 0.012},
	} {
		if got := value(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := value(fams, "lockhost_player_latency_seconds", "player", "Bob"); got != -1 {
		t.Errorf("Bob's latency is not measured yet but is reported as %v", got)
	}
	if age := value(fams, "lockhost_overview_age_seconds"); age < 0.3 || age > 60 {
		t.Errorf("overview age %v s, want about 0.3", age)
	}
	if last := value(fams, "lockhost_autosave_last_success_timestamp_seconds"); last != float64(now.UnixNano())/1e9 {
		t.Errorf("last save at %v, want %v", last, float64(now.UnixNano())/1e9)
	}

	wantPhase := map[string]uint64{"handshake": 3, "defs": 3, "admission": 2, "download": 2, "catch_up": 2, "clock_sync": 2}
	for phase, n := range wantPhase {
		h := find(fams, "lockhost_join_phase_duration_seconds", "phase", phase).GetHistogram()
		if h.GetSampleCount() != n || h.GetSampleSum() <= 0 {
			t.Errorf("phase %s: %d samples summing %v s, want %d samples", phase, h.GetSampleCount(), h.GetSampleSum(), n)
		}
	}
	dl := find(fams, "lockhost_join_phase_duration_seconds", "phase", "download").GetHistogram()
	if got, want := dl.GetSampleSum(), 0.404; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("download phase sum %v s, want %v", got, want)
	}
	if h := find(fams, "lockhost_join_duration_seconds", "outcome", "joined").GetHistogram(); h.GetSampleCount() != 3 {
		t.Errorf("join durations of joined: %d samples, want 3", h.GetSampleCount())
	}
	if h := find(fams, "lockhost_autosave_duration_seconds").GetHistogram(); h.GetSampleCount() != 1 || h.GetSampleSum() != 0.03 {
		t.Errorf("autosave durations: %d samples summing %v, want 1 of 0.03", h.GetSampleCount(), h.GetSampleSum())
	}
	if h := find(fams, "lockhost_desync_repair_duration_seconds").GetHistogram(); h.GetSampleCount() != 1 {
		t.Errorf("repair durations: %d samples, want 1", h.GetSampleCount())
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if fams[name] == nil {
			t.Errorf("runtime metric %s missing", name)
		}
	}
	for name, f := range fams {
		if f.GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
	}
}

// TestPlayersComeAndGo checks per-player series follow the players online
// instead of piling up.
func TestPlayersComeAndGo(t *testing.T) {
	src := &fakeSource{o: host.Overview{Players: []host.PlayerView{{Name: "Alice", Status: "playing"}, {Name: "Bob", Status: "playing"}}}}
	m := metrics.New()
	reg := prometheus.NewRegistry()
	if err := m.Register(reg, src); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatalf("gather: %v", err)
		}
		for _, f := range fams {
			if f.GetName() == "lockhost_player_ticks_behind" {
				return len(f.GetMetric())
			}
		}
		return 0
	}
	if n := count(); n != 2 {
		t.Fatalf("%d per-player series with two players online", n)
	}
	src.o.Players = src.o.Players[:1]
	if n := count(); n != 1 {
		t.Fatalf("%d per-player series after Bob left", n)
	}
	// A duplicate name (which the host never lists) must not break the
	// whole scrape.
	src.o.Players = append(src.o.Players, src.o.Players[0])
	if n := count(); n != 1 {
		t.Fatalf("%d per-player series with a duplicate name", n)
	}
	if err := m.Register(prometheus.NewRegistry(), nil); err != nil {
		t.Fatalf("register without a source: %v", err)
	}
}

func TestLint(t *testing.T) {
	m := metrics.New()
	m.JoinFinished(host.JoinRecord{Outcome: host.JoinRefused, Reason: "BadPassword"})
	reg := prometheus.NewRegistry()
	if err := m.Register(reg, &fakeSource{}); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(fams).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), "lockhost_") {
			t.Errorf("metric %s lacks the lockhost_ prefix", f.GetName())
		}
	}
}

// TestUnverifiedGaugeIsTheOverviews holds the rule of the protocol spec's
// section 9.3: lockhost_players_unverified counts exactly the players the
// Overview marks Unverified, which is the value the status page's
// "unverified" shows, so the two agree whenever they read the same
// Overview.
func TestUnverifiedGaugeIsTheOverviews(t *testing.T) {
	for _, marks := range [][]bool{nil, {false}, {true}, {true, false, true}} {
		o := host.Overview{}
		want := 0
		for i, u := range marks {
			o.Players = append(o.Players, host.PlayerView{Name: fmt.Sprintf("P%d", i), Status: "playing", Unverified: u})
			if u {
				want++
			}
		}
		reg, err := metrics.NewRegistry(metrics.New(), &fakeSource{o: o})
		if err != nil {
			t.Fatal(err)
		}
		if got := value(scrape(t, serve(t, reg)), "lockhost_players_unverified"); got != float64(want) {
			t.Errorf("marks %v: lockhost_players_unverified = %v, want %d", marks, got, want)
		}
	}
}

// TestRejoinCounters: the rejoins of players past WorldReady are counted
// by how (from a held world or with a download), and the held worlds
// turned down by their reason's name.
func TestRejoinCounters(t *testing.T) {
	o := host.Overview{}
	o.Stats.RejoinsHeld, o.Stats.RejoinsDownloaded, o.Stats.RejoinReplayedBytes = 3, 2, 900
	o.Stats.RejoinFallbacks[wire.RejoinWindow] = 1
	o.Stats.RejoinFallbacks[wire.RejoinHashes] = 1
	reg, err := metrics.NewRegistry(metrics.New(), &fakeSource{o: o})
	if err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, serve(t, reg))
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"lockhost_rejoins_total", []string{"how", "held"}, 3},
		{"lockhost_rejoins_total", []string{"how", "downloaded"}, 2},
		{"lockhost_rejoin_replayed_bytes_total", nil, 900},
		{"lockhost_rejoin_fallbacks_total", []string{"reason", "window"}, 1},
		{"lockhost_rejoin_fallbacks_total", []string{"reason", "hashes"}, 1},
		{"lockhost_rejoin_fallbacks_total", []string{"reason", "ahead"}, 0},
	} {
		if got := value(fams, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
