package host_test

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/testkit"
)

// eventLog collects a joiner's desync events and notices.
type eventLog struct {
	mu      sync.Mutex
	events  []join.DesyncEvent
	notices []string
	resyncs []join.Resync
}

func (e *eventLog) desync(d join.DesyncEvent) {
	e.mu.Lock()
	e.events = append(e.events, d)
	e.mu.Unlock()
}

func (e *eventLog) notice(text string) {
	e.mu.Lock()
	e.notices = append(e.notices, text)
	e.mu.Unlock()
}

func (e *eventLog) resynced(r join.Resync) {
	e.mu.Lock()
	e.resyncs = append(e.resyncs, r)
	e.mu.Unlock()
}

// find returns the first event of kind k, if any.
func (e *eventLog) find(k join.DesyncKind) (join.DesyncEvent, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.events {
		if d.Kind == k {
			return d, true
		}
	}
	return join.DesyncEvent{}, false
}

func (e *eventLog) noticeWith(sub string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.ContainsFunc(e.notices, func(n string) bool { return strings.Contains(n, sub) })
}

// holdUntil blocks until at least n more ticks than now have been seen
// through tick, or 20 s pass, and returns how many it saw. It holds a
// client still while the test watches the others go on.
func holdUntil(tick *atomic.Uint64, n uint64) uint64 {
	from := tick.Load()
	deadline := time.Now().Add(20 * time.Second)
	for tick.Load() < from+n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return tick.Load() - from
}

// everyNth records a joiner's hashes only at checkpoint ticks: hashing
// every map at every tick would slow its catch-up below the host's rate
// on a loaded machine, and the test compares checkpoints only.
func everyNth(n uint64) func(*join.Config) {
	return func(c *join.Config) {
		rec := c.OnStep
		c.OnStep = func(sim lockstep.Sim) {
			if sim.Tick()%n == 0 {
				rec(sim)
			}
		}
	}
}

// TestDesyncRepairOneMap corrupts one map of one joiner of the default
// colony world at a tick. The host must detect it at the first checkpoint
// after, tell the other player (event and notice), send that map alone,
// and see the joiner's hashes match again, while the other player's ticks
// keep coming.
func TestDesyncRepairOneMap(t *testing.T) {
	content, _, world := defaultColony(t)
	const every = 30
	const badMap = 2
	dir := t.TempDir()
	h := startHost(t, host.Config{TickRate: 60, Desync: host.DesyncConfig{HashEvery: every, Dir: dir}, Lag: host.LagConfig{MaxLag: 60}}, world)
	colonyCfg := func(c *join.Config) {
		c.Loader, c.MapLoader = nil, colony.MapLoader(content)
	}

	// Bob watches.
	var bobEvents eventLog
	var bobTick atomic.Uint64
	bob := startJoiner(t, h.addr, "Bob", colonyCfg, everyNth(every), func(c *join.Config) {
		c.Desync, c.Notice = bobEvents.desync, bobEvents.notice
		rec := c.OnStep
		c.OnStep = func(sim lockstep.Sim) { rec(sim); bobTick.Store(sim.Tick()) }
	})

	// Alice's map 2 is corrupted once, at a tick set after she joins.
	var aliceEvents eventLog
	var corruptAt, corrupted atomic.Uint64
	corruptAt.Store(math.MaxUint64)
	// When Alice hears of her own desync she holds still until Bob has
	// made more ticks than the lag limit: the repair is hers alone, and a
	// host that froze the session for it, or let her lag hold time, would
	// never let Bob's ticks come.
	const ahead = 90
	var held atomic.Bool
	bobDuringRepair := make(chan uint64, 1)
	alice := startJoiner(t, h.addr, "Alice", colonyCfg, everyNth(every), func(c *join.Config) {
		c.Resynced = aliceEvents.resynced
		c.Desync = func(d join.DesyncEvent) {
			aliceEvents.desync(d)
			if d.Kind == join.DesyncDetected && d.Name == "Alice" && !held.Swap(true) {
				bobDuringRepair <- holdUntil(&bobTick, ahead)
			}
		}
		rec := c.OnStep
		c.OnStep = func(sim lockstep.Sim) {
			if sim.Tick() >= corruptAt.Load() && corrupted.Load() == 0 {
				if err := sim.(*colony.World).Perturb(badMap); err != nil {
					t.Error(err)
				}
				corrupted.Store(sim.Tick())
			}
			rec(sim)
		}
	})
	worldBytes := alice.sess.Timings().Bytes
	corruptAt.Store(alice.sess.Timings().ReadyTick + 45)

	var detected join.DesyncEvent
	testkit.WaitFor(t, "Bob to hear of the desync", func() bool {
		var ok bool
		detected, ok = bobEvents.find(join.DesyncDetected)
		return ok
	})
	bad := corrupted.Load()
	if detected.PlayerID != alice.sess.Info().PlayerID || detected.Name != "Alice" || !slices.Equal(detected.Maps, []int32{badMap}) {
		t.Fatalf("desync event %+v, want Alice's map %d", detected, badMap)
	}
	if detected.Tick < bad || detected.Tick-bad > every {
		t.Fatalf("corrupted at tick %d, detected at checkpoint %d: not within one interval of %d ticks", bad, detected.Tick, every)
	}
	t.Logf("corrupted map %d at tick %d; detected at checkpoint %d (%d ticks later)", badMap, bad, detected.Tick, detected.Tick-bad)

	var repaired join.DesyncEvent
	testkit.WaitFor(t, "the repair", func() bool {
		var ok bool
		repaired, ok = bobEvents.find(join.DesyncRepaired)
		return ok
	})
	if !bobEvents.noticeWith("Alice's map 2 diverged") || !bobEvents.noticeWith("Alice is in sync again") {
		t.Errorf("Bob's notices %q lack the desync or the repair", bobEvents.notices)
	}
	// Only the one map was sent.
	st := h.srv.Overview().Stats
	if st.MapResyncs != 1 || st.WorldResyncs != 0 || st.Repaired != 1 {
		t.Fatalf("stats %+v: want one map repair, no world repair, one repaired", st)
	}
	if st.LastResyncBytes*2 > worldBytes || st.LastResyncBytes*10 < worldBytes {
		t.Fatalf("repair of %d bytes for a world of %d in %d maps: not about one map", st.LastResyncBytes, worldBytes, colony.DefaultMaps)
	}
	aliceEvents.mu.Lock()
	rs := slices.Clone(aliceEvents.resyncs)
	aliceEvents.mu.Unlock()
	if len(rs) != 1 || rs[0].Full || !slices.Equal(rs[0].Maps, []int32{badMap}) || rs[0].Bytes != st.LastResyncBytes {
		t.Fatalf("Alice's repairs %+v, want map %d alone in %d bytes", rs, badMap, st.LastResyncBytes)
	}
	t.Logf("repair: %d bytes (world payload %d), detection to matching hashes %d ms, Alice waited %v at tick %d",
		st.LastResyncBytes, worldBytes, repaired.Repair.Milliseconds(), rs[0].Wait, rs[0].Tick)

	// Bob never stopped: he went on while Alice's repair was held.
	if n := <-bobDuringRepair; n < ahead {
		t.Fatalf("Bob made %d ticks while Alice's repair was held, want %d", n, ahead)
	}

	// Alice and Bob agree with the host at later ticks, map by map.
	next := (h.log.latest()/every + 2) * every
	checkSameHashes(t, h, next, alice, bob)

	// The report names the map and the part that differs.
	entries, err := desync.List(dir)
	if err != nil || len(entries) != 1 || entries[0].Err != nil {
		t.Fatalf("reports: %v %+v", err, entries)
	}
	r := entries[0].Report
	if r.Player != "Alice" || r.Tick != detected.Tick || !slices.Equal(r.MapIDs, []int32{badMap}) || r.Repair != "map" {
		t.Fatalf("report %+v", r)
	}
	if diff := strings.Join(r.DiffParts(), "; "); !strings.Contains(diff, "things") || strings.Contains(diff, "terrain") {
		t.Fatalf("report's differing parts %q: want things, not terrain", diff)
	}
	select {
	case err := <-alice.errc:
		t.Fatalf("Alice left: %v", err)
	default:
	}
}
