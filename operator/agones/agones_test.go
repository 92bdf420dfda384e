package agones

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/testing/agonestest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func sdkClient(t *testing.T) (*Client, *agonestest.SDK) {
	t.Helper()
	sdk := agonestest.Start(t, agonestest.GameServer)
	c, err := NewClient(sdk.Port)
	if err != nil {
		t.Fatal(err)
	}
	return c, sdk
}

func state(t *testing.T, c *Client) string {
	t.Helper()
	gs, err := c.GameServer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return gs.Status.State
}

// TestClientAgainstSDK drives every call of Client against the real SDK
// server and reads the GameServer back after each.
func TestClientAgainstSDK(t *testing.T) {
	c, _ := sdkClient(t)
	ctx := context.Background()
	if err := c.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if s := state(t, c); s != "Ready" {
		t.Fatalf("state after Ready = %q", s)
	}
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.SetLabel(ctx, "game", "colony"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetAnnotation(ctx, "note", "a b c"); err != nil {
		t.Fatal(err)
	}
	gs, err := c.GameServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gs.ObjectMeta.Labels["agones.dev/sdk-game"] != "colony" || gs.ObjectMeta.Annotations["agones.dev/sdk-note"] != "a b c" {
		t.Fatalf("metadata = %v %v", gs.ObjectMeta.Labels, gs.ObjectMeta.Annotations)
	}
	if _, err := c.AppendListValue(ctx, PlayersList, "ann"); err != nil {
		t.Fatal(err)
	}
	l, err := c.AppendListValue(ctx, PlayersList, "bo")
	if err != nil || strings.Join(l.Values, ",") != "ann,bo" || l.Capacity != 8 {
		t.Fatalf("list after two adds = %+v, %v", l, err)
	}
	if _, err := c.AppendListValue(ctx, PlayersList, "bo"); !sdkSays(err, "already") {
		t.Fatalf("adding a value twice: %v, want the SDK's refusal", err)
	}
	if l, err = c.DeleteListValue(ctx, PlayersList, "ann"); err != nil || strings.Join(l.Values, ",") != "bo" {
		t.Fatalf("list after a delete = %+v, %v", l, err)
	}
	if l, err = c.GetList(ctx, PlayersList); err != nil || strings.Join(l.Values, ",") != "bo" {
		t.Fatalf("GetList = %+v, %v", l, err)
	}
	if _, err := c.GetList(ctx, "nosuch"); !IsStatus(err) {
		t.Fatalf("GetList of a missing List: %v, want a StatusError", err)
	}
	if err := c.Allocate(ctx); err != nil || state(t, c) != "Allocated" {
		t.Fatalf("Allocate: %v, state %q", err, state(t, c))
	}
	if err := c.Shutdown(ctx); err != nil || state(t, c) != "Shutdown" {
		t.Fatalf("Shutdown: %v, state %q", err, state(t, c))
	}
}

// fakeSession is a host whose Overview the test sets.
type fakeSession struct {
	mu        sync.Mutex
	o         host.Overview
	shutdowns int
}

func (f *fakeSession) Overview() host.Overview {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.o
}

func (f *fakeSession) Shutdown(string, time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shutdowns++
	return nil
}

// moved advances the session's picture, as a live session goroutine does.
func (f *fakeSession) moved(players ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.o.At.IsZero() {
		f.o.At = time.Unix(1_000_000, 0)
	}
	f.o.At = f.o.At.Add(250 * time.Millisecond)
	f.o.Tick++
	f.o.Players = nil
	for i, p := range players {
		f.o.Players = append(f.o.Players, host.PlayerView{ID: int32(i + 1), Name: p})
	}
}

func healthPings(sdk *agonestest.SDK) int {
	return strings.Count(sdk.Log.String(), "Health Ping Received")
}

// sdkPings waits until the SDK server has logged want health pings (it
// logs after it answers), for up to 10 s on a loaded machine, and returns
// the count then.
func sdkPings(sdk *agonestest.SDK, want int) int {
	for range 500 {
		if healthPings(sdk) >= want {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return healthPings(sdk)
}

// TestAgentHealthStopsWhenSessionStalls pings Health at each step where
// the session's picture moved and not at all while it stands still, and
// the SDK server counts the same pings.
func TestAgentHealthStopsWhenSessionStalls(t *testing.T) {
	c, sdk := sdkClient(t)
	sess := &fakeSession{}
	sess.moved()
	a := NewAgent(AgentConfig{Client: c, Session: sess})
	ctx := context.Background()
	if err := a.start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(2_000_000, 0)
	for range 3 {
		sess.moved()
		now = now.Add(time.Second)
		a.step(ctx, now)
	}
	if n := sdkPings(sdk, 3); a.Pings() != 3 || n != 3 {
		t.Fatalf("ticking: agent pings %d, SDK saw %d; want 3", a.Pings(), n)
	}
	for range 5 { // the session is stalled: its picture stays
		now = now.Add(time.Second)
		a.step(ctx, now)
	}
	if a.Pings() != 3 {
		t.Fatalf("stalled: agent pings %d; want still 3", a.Pings())
	}
	sess.moved()
	a.step(ctx, now.Add(time.Second))
	// the SDK server's count is exactly one more: none came while stalled
	if n := sdkPings(sdk, 4); a.Pings() != 4 || n != 4 {
		t.Fatalf("ticking again: agent pings %d, SDK saw %d; want 4", a.Pings(), n)
	}
}

// TestAgentPlayersAndIdleShutdown follows joins and leaves in the players
// List, allocates at the first player and shuts the host down once it has
// been empty for the idle time, and only then.
func TestAgentPlayersAndIdleShutdown(t *testing.T) {
	c, _ := sdkClient(t)
	sess := &fakeSession{}
	sess.moved()
	a := NewAgent(AgentConfig{Client: c, Session: sess, Idle: 10 * time.Second,
		Labels: map[string]string{"game": "colony"}})
	ctx := context.Background()
	if err := a.start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(2_000_000, 0)
	step := func(d time.Duration, players ...string) []string {
		sess.moved(players...)
		now = now.Add(d)
		a.step(ctx, now)
		l, err := c.GetList(ctx, PlayersList)
		if err != nil {
			t.Fatal(err)
		}
		return l.Values
	}
	if got := step(time.Hour); len(got) != 0 || sess.shutdowns != 0 || state(t, c) != "Ready" {
		t.Fatalf("no one joined yet: list %v, shutdowns %d, state %q", got, sess.shutdowns, state(t, c))
	}
	if got := step(time.Second, "ann"); strings.Join(got, ",") != "ann" || state(t, c) != "Allocated" {
		t.Fatalf("one join: list %v, state %q", got, state(t, c))
	}
	if got := step(time.Second, "ann", "bo"); strings.Join(got, ",") != "ann,bo" {
		t.Fatalf("two joins: list %v", got)
	}
	if got := step(time.Second, "bo"); strings.Join(got, ",") != "bo" {
		t.Fatalf("a leave: list %v", got)
	}
	step(time.Second)
	if got := step(9 * time.Second); len(got) != 0 || sess.shutdowns != 0 {
		t.Fatalf("empty for 9 s of 10: list %v, shutdowns %d", got, sess.shutdowns)
	}
	step(time.Second)
	step(time.Second)
	if sess.shutdowns != 1 {
		t.Fatalf("empty for the idle time: %d shutdowns, want 1", sess.shutdowns)
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"lockhost colony":        "lockhost-colony",
		"  Ünïcode! ":            "n--code",
		"--under score! ":        "under-score",
		strings.Repeat("a", 100): strings.Repeat("a", 63),
		"ok_1.2":                 "ok_1.2",
	} {
		if got := LabelValue(in); got != want {
			t.Errorf("LabelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFactsMetadata(t *testing.T) {
	fp := "sha256:" + strings.Repeat("ab", 32)
	l, an := Facts{Game: "My game", Protocol: 4, Password: true, Fingerprint: fp}.Metadata()
	if l["game"] != "My-game" || l["protocol"] != "4" || l["password"] != "true" || l["tls"] != "true" ||
		l["tls-fingerprint"] != strings.Repeat("ab", 16) || an["tls-fingerprint"] != fp || len(l["defs-hash"]) == 0 {
		t.Fatalf("labels %v annotations %v", l, an)
	}
	for k, v := range l {
		if len(v) > maxLabelValue {
			t.Errorf("label %s=%q over %d characters", k, v, maxLabelValue)
		}
	}
}

// failFirst is a transport whose first n requests fail as if no one
// listened, then go to the real one.
type failFirst struct {
	n    int
	real http.RoundTripper
}

func (f *failFirst) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.n > 0 {
		f.n--
		return nil, errors.New("connect: connection refused")
	}
	return f.real.RoundTrip(r)
}

// TestAgentWaitsForSidecar reaches an SDK server that answers only from
// the third request on, as a sidecar that starts after the host: the
// Agent tries again at each step and marks the server Ready.
func TestAgentWaitsForSidecar(t *testing.T) {
	c, _ := sdkClient(t)
	c.http.Transport = &failFirst{n: 2, real: http.DefaultTransport}
	sess := &fakeSession{}
	sess.moved()
	a := NewAgent(AgentConfig{Client: c, Session: sess, Labels: map[string]string{"game": "colony"}})
	steps := make(chan time.Time, 10)
	for range 10 {
		steps <- time.Now()
	}
	if err := a.start(context.Background(), steps); err != nil {
		t.Fatal(err)
	}
	gs, err := c.GameServer(context.Background())
	if err != nil || gs.Status.State != "Ready" || gs.ObjectMeta.Labels["agones.dev/sdk-game"] != "colony" {
		t.Fatalf("after the sidecar came: state %q, labels %v, %v", gs.Status.State, gs.ObjectMeta.Labels, err)
	}
	if left := len(steps); left != 8 {
		t.Errorf("%d steps left of 10, want 8: two failed tries", left)
	}
}

func TestPortFromEnv(t *testing.T) {
	for _, c := range []struct {
		v       string
		port    int
		set, ok bool
	}{
		{"", 0, false, true}, {"9358", 9358, true, true}, {"0", 0, true, false},
		{"65536", 0, true, false}, {"x", 0, true, false},
	} {
		t.Setenv(PortEnv, c.v)
		port, set, err := PortFromEnv()
		if port != c.port || set != c.set || (err == nil) != c.ok {
			t.Errorf("%s=%q: %d, %v, %v", PortEnv, c.v, port, set, err)
		}
	}
}

// TestAgentMetrics reads the Agent's metrics through a registry as the
// host's /metrics does, and its Status as the status page does: the state
// follows Ready, then the first player, and the List size the players
// online.
func TestAgentMetrics(t *testing.T) {
	c, _ := sdkClient(t)
	sess := &fakeSession{}
	sess.moved()
	a := NewAgent(AgentConfig{Client: c, Session: sess})
	reg := prometheus.NewRegistry()
	reg.MustRegister(a.Collector())
	want := func(state string, players int) {
		t.Helper()
		exp := fmt.Sprintf(`
# HELP lockhost_agones_players Names in the Agones players List, as the host last set it.
# TYPE lockhost_agones_players gauge
lockhost_agones_players %d
# HELP lockhost_agones_state The Agones GameServer state the host last set: 1 for the current one.
# TYPE lockhost_agones_state gauge
`, players)
		for _, s := range agentStates {
			v := 0
			if s == state {
				v = 1
			}
			exp += fmt.Sprintf("lockhost_agones_state{state=%q} %d\n", s, v)
		}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "lockhost_agones_state", "lockhost_agones_players"); err != nil {
			t.Error(err)
		}
	}
	want(StateStarting, 0)
	if st := a.Status(); st != (Status{State: StateStarting}) {
		t.Errorf("status before Ready = %+v, want Starting and nothing else", st)
	}
	ctx := context.Background()
	if err := a.start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	want(StateReady, 0)
	sess.moved("anna", "bob")
	a.step(ctx, time.Now())
	want(StateAllocated, 2)
	if st := a.Status(); st.State != StateAllocated || st.Players != 2 || st.HealthPings != 1 || st.LastPing.IsZero() {
		t.Errorf("status with two players = %+v, want Allocated, 2 players, 1 ping and its time", st)
	}
	if n := testutil.CollectAndCount(a.Collector(), "lockhost_agones_health_pings_total"); n != 1 {
		t.Errorf("%d pings series, want 1", n)
	}
}

// TestAgentFirstPlayerDeadline shuts down a host that Agones allocated
// and no player joined within FirstPlayer, reading the allocation from
// the real SDK server; a host that is Ready but not allocated waits for
// ever, and one whose first player came in time is left to the idle
// rule.
func TestAgentFirstPlayerDeadline(t *testing.T) {
	for _, tc := range []struct {
		name      string
		allocate  bool          // a matchmaker allocates the GameServer
		joinAfter time.Duration // a player comes this long after (0: never)
		want      int           // shutdowns after an hour of steps
	}{
		{name: "allocated, nobody comes", allocate: true, want: 1},
		{name: "allocated, a player comes in time", allocate: true, joinAfter: 50 * time.Second, want: 0},
		{name: "allocated, the player comes too late", allocate: true, joinAfter: 2 * time.Minute, want: 1},
		{name: "ready, never allocated", want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := sdkClient(t)
			sess := &fakeSession{}
			sess.moved()
			a := NewAgent(AgentConfig{Client: c, Session: sess, FirstPlayer: time.Minute})
			ctx := context.Background()
			if err := a.start(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if tc.allocate {
				// The allocator's doing, not the host's.
				if err := c.Allocate(ctx); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Unix(3_000_000, 0)
			var shutAt time.Duration
			for d := time.Duration(0); d <= time.Hour; d += 10 * time.Second {
				var players []string
				if tc.joinAfter > 0 && d >= tc.joinAfter && sess.shutdowns == 0 {
					players = []string{"ann"}
				}
				sess.moved(players...)
				a.step(ctx, start.Add(d))
				if sess.shutdowns > 0 && shutAt == 0 {
					shutAt = d
				}
			}
			if sess.shutdowns != tc.want {
				t.Fatalf("%d shutdowns, want %d", sess.shutdowns, tc.want)
			}
			if tc.want > 0 && (shutAt < time.Minute || shutAt > time.Minute+10*time.Second) {
				t.Fatalf("shut down %v after the allocation was seen, want at the deadline of 1m", shutAt)
			}
			if tc.want > 0 && a.State() != StateShutdown {
				t.Fatalf("state %q after the shutdown", a.State())
			}
		})
	}
}
