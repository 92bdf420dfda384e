package host_test

import (
	"fmt"
	"math"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"context"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/attack"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// corrupter makes a relay player that perturbs one map once, at the first
// tick it steps to at or after at (never until at is set).
type corrupter struct {
	at, done, last atomic.Uint64
}

func newCorrupter() *corrupter {
	c := &corrupter{}
	c.at.Store(math.MaxUint64)
	return c
}

// player is a joinRelay option: the corruption of map m, and the client's
// last stepped tick.
func (c *corrupter) player(t *testing.T, m int32) func(*join.Config) {
	return func(cfg *join.Config) {
		rec := cfg.OnStep
		cfg.OnStep = func(sim lockstep.Sim) {
			if sim.Tick() >= c.at.Load() && c.done.Load() == 0 {
				if err := sim.(*locksteptest.Counters).Perturb(m); err != nil {
					t.Error(err)
				}
				c.done.Store(sim.Tick())
			}
			c.last.Store(sim.Tick())
			rec(sim)
		}
	}
}

// from sets the corruption at the second checkpoint tick after the
// client's tick now, and returns that checkpoint.
func (c *corrupter) from(every uint64) uint64 {
	at := (c.last.Load()/every + 2) * every
	c.at.Store(at)
	return at
}

// relayWithoutArbiter starts a relay host whose arbiter uploads the world
// and leaves once the players named have joined: the session goes on
// with no arbiter. Each player comes from a loopback network (/24) of
// its own, the host's votes counting one per network, unless srcs gives
// it a source address. It returns the host and the players, in order.
func relayWithoutArbiter(t *testing.T, cfg host.Config, logs *syncbuf.Buffer, names []string, mods map[string][]func(*join.Config),
	srcs map[string]net.IP) (*hosttest.Host, []*relayClient) {
	t.Helper()
	canDialFrom(t, attack.Source(len(names)))
	h := startRelay(t, cfg, logs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the host's log:\n%s", logs.String())
		}
	})
	arb := joinRelay(t, h.Addr, "Arbiter", true)
	players := make([]*relayClient, len(names))
	for i, n := range names {
		src := srcs[n]
		if src == nil {
			src = attack.Source(i)
		}
		players[i] = joinRelayFrom(t, src, h.Addr, n, false, mods[n]...)
	}
	arb.sess.Close()
	testkit.WaitFor(t, "the arbiter to leave", func() bool {
		return strings.Contains(logs.String(), `msg="arbiter left"`)
	})
	return h, players
}

// TestRelayMajority: three players and no arbiter (it uploaded the world
// and left). One corrupts a map; the other two agree, so the checkpoint's
// reference is their hashes and the third is found desynced, by
// "majority 2 of 3 players", which the desync report and the status
// page's record say. Its repair waits for an arbiter: when one joins and
// becomes active, the map is repaired from its upload, and everyone is in
// step with it.
func TestRelayMajority(t *testing.T) {
	var logs syncbuf.Buffer
	const every = 30
	const badMap = 1
	dir := t.TempDir()
	carolBad := newCorrupter()
	var bobEvents, carolEvents eventLog
	h, ps := relayWithoutArbiter(t, host.Config{Desync: host.DesyncConfig{HashEvery: every, Dir: dir}}, &logs,
		[]string{"Alice", "Bob", "Carol"}, map[string][]func(*join.Config){
			"Bob":   {func(c *join.Config) { c.Desync, c.Notice = bobEvents.desync, bobEvents.notice }},
			"Carol": {carolBad.player(t, badMap), func(c *join.Config) { c.Resynced = carolEvents.resynced }},
		}, nil)
	alice, bob, carol := ps[0], ps[1], ps[2]
	at := carolBad.from(every)

	var detected join.DesyncEvent
	testkit.WaitFor(t, "Bob to hear of Carol's desync", func() bool {
		var ok bool
		detected, ok = bobEvents.find(join.DesyncDetected)
		return ok
	})
	if detected.Name != "Carol" || !slices.Equal(detected.Maps, []int32{badMap}) || detected.Tick < at {
		t.Fatalf("desync event %+v, want Carol's map %d at tick %d or later", detected, badMap, at)
	}
	const want = "majority 2 of 3 players"
	if !strings.Contains(logs.String(), fmt.Sprintf("reference=%q", want)) {
		t.Fatalf("the host's log does not say the reference was the %s:\n%s", want, logs.String())
	}
	notice := fmt.Sprintf("Carol's map %d diverged from the other players' (%s) at tick %d; the repair waits for an arbiter.", badMap, want, detected.Tick)
	testkit.WaitFor(t, "Bob's notice of the desync", func() bool {
		bobEvents.mu.Lock()
		defer bobEvents.mu.Unlock()
		return slices.Contains(bobEvents.notices, notice)
	})
	var rec host.DesyncRecord
	for _, r := range h.Server.Overview().Desyncs {
		if r.Event == host.DesyncDetected {
			rec = r
		}
	}
	if rec.Name != "Carol" || rec.Reference != want {
		t.Fatalf("the status page's desync record %+v, want Carol's with reference %q", rec, want)
	}
	var reports []desync.Entry
	testkit.WaitFor(t, "the desync report file", func() bool {
		var err error
		reports, err = desync.List(dir)
		return err == nil && len(reports) > 0
	})
	if r := reports[0].Report; r == nil || r.Player != "Carol" || r.Reference != want || !slices.Equal(r.MapIDs, []int32{badMap}) {
		t.Fatalf("the desync report %+v (%v), want Carol's map %d with reference %q", r, reports[0].Err, badMap, want)
	}
	if st := h.Server.Overview().Stats; st.MajorityCheckpoints == 0 || st.Repaired != 0 {
		t.Fatalf("stats %+v: want checkpoints decided by the majority and no repair yet (no arbiter)", st)
	}

	// An arbiter joins: once active, it is asked for Carol's map, and its
	// upload repairs her.
	arb := joinRelay(t, h.Addr, "Arbiter2", true)
	testkit.WaitFor(t, "Carol's repair", func() bool {
		_, ok := bobEvents.find(join.DesyncRepaired)
		return ok
	})
	if !strings.Contains(logs.String(), "from=arbiter") {
		t.Fatalf("the repair did not come from the arbiter's upload:\n%s", logs.String())
	}
	carolEvents.mu.Lock()
	rs := slices.Clone(carolEvents.resyncs)
	carolEvents.mu.Unlock()
	if len(rs) != 1 || rs[0].Full || !slices.Equal(rs[0].Maps, []int32{badMap}) {
		t.Fatalf("Carol's repairs: %+v, want one of map %d", rs, badMap)
	}
	k := bob.sendAdd(t, 0, 4)
	var cmdAt uint64
	testkit.WaitFor(t, "the arbiter to apply Bob's command", func() bool {
		var ok bool
		cmdAt, ok = arb.log.cmdTick(k)
		return ok
	})
	checkSameHashes(t, &testHost{log: arb.log}, cmdAt+every, alice.joiner(), bob.joiner(), carol.joiner())
}

// TestRelayNoMajority: two players and no arbiter. While they agree each
// checkpoint is decided by "majority 2 of 2 players"; once one corrupts a
// map they are one against one: the checkpoint has no majority, the host
// logs it with the counts, and nobody is found desynced or repaired.
func TestRelayNoMajority(t *testing.T) {
	var logs syncbuf.Buffer
	const every = 30
	bobBad := newCorrupter()
	var aliceEvents, bobEvents eventLog
	h, _ := relayWithoutArbiter(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, &logs,
		[]string{"Alice", "Bob"}, map[string][]func(*join.Config){
			"Alice": {func(c *join.Config) { c.Desync = aliceEvents.desync }},
			"Bob":   {bobBad.player(t, 1), func(c *join.Config) { c.Resynced = bobEvents.resynced }},
		}, nil)
	testkit.WaitFor(t, "a checkpoint the two players agree on", func() bool {
		return strings.Contains(logs.String(), `reference="majority 2 of 2 players"`)
	})
	at := bobBad.from(every)
	line := regexp.MustCompile(fmt.Sprintf(`msg="checkpoint without a majority: no reference, nobody compared" tick=%d host_tick=\d+ reporters=2 largest=1`, at))
	testkit.WaitFor(t, "the host to log the checkpoint without a majority", func() bool {
		return line.MatchString(logs.String())
	})
	// The checkpoint was decided (without a reference) before that line
	// was written: a desync found at it would have been recorded by now.
	ov := h.Server.Overview()
	if ov.Stats.Desyncs != 0 || len(ov.Desyncs) != 0 || ov.Stats.NoMajority == 0 {
		t.Fatalf("stats %+v, desyncs %+v: want no desync and a checkpoint without a majority", ov.Stats, ov.Desyncs)
	}
	if _, ok := aliceEvents.find(join.DesyncDetected); ok {
		t.Fatal("Alice heard of a desync: one player against one is no majority")
	}
	bobEvents.mu.Lock()
	defer bobEvents.mu.Unlock()
	if len(bobEvents.resyncs) != 0 {
		t.Fatalf("Bob was repaired: %+v", bobEvents.resyncs)
	}
}

// TestRelayMajorityWaitBound: three players and no arbiter, one of which
// never reports its hashes. The two that do agree; each checkpoint is
// decided once the wait has passed (the host's tick at least two hash
// intervals plus the lag limit past it), with "majority 2 of 2 players",
// not held for the silent player.
func TestRelayMajorityWaitBound(t *testing.T) {
	var logs syncbuf.Buffer
	const every, maxLag = 30, 40
	h, _ := relayWithoutArbiter(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}, Lag: host.LagConfig{MaxLag: maxLag}}, &logs,
		[]string{"Alice", "Bob"}, nil, nil)

	ctx, cancel := context.WithCancel(jointest.With(context.Background(), jointest.Options{NoHashReports: true}))
	s, err := join.Join(ctx, joinCfg(h.Addr, "Silent", newHashLog()))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-errc })
	ready := s.Timings().ReadyTick

	decided := regexp.MustCompile(`msg="checkpoint decided by the players" tick=(\d+) host_tick=(\d+) reference="majority 2 of 2 players"`)
	var tick, at uint64
	testkit.WaitFor(t, "a checkpoint after the silent player's join, decided without it", func() bool {
		for _, m := range decided.FindAllStringSubmatch(logs.String(), -1) {
			tick, _ = strconv.ParseUint(m[1], 10, 64)
			at, _ = strconv.ParseUint(m[2], 10, 64)
			if tick > ready {
				return true
			}
		}
		return false
	})
	if wait := uint64(2*every + maxLag); at < tick+wait {
		t.Fatalf("checkpoint %d was decided at host tick %d, before the silent player's wait (%d ticks) passed", tick, at, wait)
	}
	if strings.Contains(logs.String(), "checkpoint without a majority") {
		t.Fatalf("a checkpoint had no majority though the two reporters agree:\n%s", logs.String())
	}
}

// liars are two relay players that corrupt map 1 at the same tick, the
// same way, so that they report the same wrong hashes from then on.
type liars struct{ a, b *corrupter }

func newLiars() *liars { return &liars{newCorrupter(), newCorrupter()} }

// from sets both corruptions at the second checkpoint tick after the
// first liar's tick now, and returns that checkpoint.
func (l *liars) from(every uint64) uint64 {
	at := l.a.from(every)
	l.b.at.Store(at)
	return at
}

// checkpointAt matches the host's log line deciding the checkpoint of
// tick, with a majority (its reference is the first group) or without.
func checkpointAt(tick uint64) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`msg="checkpoint decided by the players" tick=%d host_tick=\d+ reference="([^"]+)"|msg="checkpoint without a majority: no reference, nobody compared" tick=%d `, tick, tick))
}

// TestRelayMajorityOneNetwork: three players and no arbiter; two of them
// come from one /24 and report the same wrong hashes. Their reports are
// one vote, against the third player's: the checkpoint has no majority,
// and the honest player is not found desynced.
func TestRelayMajorityOneNetwork(t *testing.T) {
	var logs syncbuf.Buffer
	const every = 30
	l := newLiars()
	var aliceEvents eventLog
	h, _ := relayWithoutArbiter(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, &logs,
		[]string{"Alice", "Mallory", "Mallet"}, map[string][]func(*join.Config){
			"Alice":   {func(c *join.Config) { c.Desync = aliceEvents.desync }},
			"Mallory": {l.a.player(t, 1)},
			"Mallet":  {l.b.player(t, 1)},
		}, map[string]net.IP{"Mallory": net.IPv4(127, 77, 7, 1), "Mallet": net.IPv4(127, 77, 7, 2)})
	at := l.from(every)
	line := checkpointAt(at)
	var m []string
	testkit.WaitFor(t, fmt.Sprintf("the checkpoint of tick %d decided", at), func() bool {
		m = line.FindStringSubmatch(logs.String())
		return m != nil
	})
	if m[1] != "" {
		t.Fatalf("checkpoint %d decided by %q: two players of one network made a majority against the third", at, m[1])
	}
	ov := h.Server.Overview()
	if ov.Stats.Desyncs != 0 || len(ov.Desyncs) != 0 {
		t.Fatalf("stats %+v, desyncs %+v: want nobody found desynced", ov.Stats, ov.Desyncs)
	}
	if _, ok := aliceEvents.find(join.DesyncDetected); ok {
		t.Fatal("Alice heard of a desync")
	}
}

// TestRelayMajorityKeepsRepairVote: three players of three networks and
// no arbiter; two report the same wrong hashes and find the third
// desynced ("majority 2 of 3 players"). Its repair waits for an arbiter,
// and it keeps its vote meanwhile: the next checkpoint is decided by 2
// of 3 again, not by the two alone (2 of 2), and the player is not
// compared (it is not found desynced twice).
func TestRelayMajorityKeepsRepairVote(t *testing.T) {
	var logs syncbuf.Buffer
	const every = 30
	l := newLiars()
	h, _ := relayWithoutArbiter(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, &logs,
		[]string{"Alice", "Mallory", "Mallet"}, map[string][]func(*join.Config){
			"Mallory": {l.a.player(t, 1)},
			"Mallet":  {l.b.player(t, 1)},
		}, nil)
	at := l.from(every)
	var m []string
	testkit.WaitFor(t, fmt.Sprintf("the checkpoint of tick %d decided", at), func() bool {
		m = checkpointAt(at).FindStringSubmatch(logs.String())
		return m != nil
	})
	if m[1] != "majority 2 of 3 players" {
		t.Fatalf("checkpoint %d decided by %q, want the two liars' majority of three", at, m[1])
	}
	next := at + every
	testkit.WaitFor(t, fmt.Sprintf("the checkpoint of tick %d decided", next), func() bool {
		m = checkpointAt(next).FindStringSubmatch(logs.String())
		return m != nil
	})
	if m[1] != "majority 2 of 3 players" {
		t.Fatalf("checkpoint %d, after Alice was found desynced, decided by %q: want her vote counted (2 of 3)", next, m[1])
	}
	if st := h.Server.Overview().Stats; st.Desyncs != 1 {
		t.Fatalf("%d desyncs found, want Alice's once (not compared while her repair waits)", st.Desyncs)
	}
}
