package host_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// explainRig is a colony host that writes desync reports, and a joiner
// that plants a fault in its own world at a known tick.
type explainRig struct {
	h       *hosttest.Host
	dir     string
	planted atomic.Uint64 // the tick the fault went in (0: not yet)
	notices chan string
}

// explainGame is the game of an explainRig: the host's world, what a
// joiner needs to load it, and the fault the joiner plants.
type explainGame struct {
	sim     lockstep.Sim
	content host.Content
	join    join.Config // Addr, Name, OnStep and Notice are set by the rig
	plant   func(sim lockstep.Sim) error
}

// colonyGame is the colony's default world; its fault: outside any step,
// a steel stack appears in the joiner's map 1, as memory changed behind
// the simulation's back would.
func colonyGame(t *testing.T) explainGame {
	content, set, world := defaultColony(t)
	return explainGame{
		sim:     world,
		content: host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()},
		join:    join.Config{Databases: set.Summary(), MapLoader: colony.MapLoader(content), Logger: testkit.Quiet()},
		plant: func(sim lockstep.Sim) error {
			c := colony.SpawnThing(1, "Steel", 10, 12, 25)
			c.Tick = sim.Tick()
			return sim.Apply(c)
		},
	}
}

// startExplainRig starts the host and the joiner (with opt), which plants
// the game's fault 45 ticks after its first step.
func startExplainRig(t *testing.T, opt jointest.Options, game explainGame) *explainRig {
	r := &explainRig{dir: t.TempDir(), notices: make(chan string, 64)}
	cfg := host.Config{TickRate: 60}
	cfg.Desync.HashEvery = 30
	cfg.Desync.Dir = r.dir
	r.h = hosttest.Start(t, cfg, game.content, game.sim)
	var armed atomic.Bool
	var at uint64 // the simulation goroutine's own
	ctx, cancel := context.WithCancel(jointest.With(context.Background(), opt))
	t.Cleanup(cancel)
	jc := game.join
	jc.Addr, jc.Name = r.h.Addr, "Alice"
	jc.OnStep = func(sim lockstep.Sim) {
		if !armed.Load() || r.planted.Load() != 0 {
			return
		}
		if at == 0 {
			at = sim.Tick() + 45
		}
		if sim.Tick() == at {
			if err := game.plant(sim); err != nil {
				t.Errorf("plant the fault: %v", err)
			}
			r.planted.Store(at)
		}
	}
	jc.Notice = func(text string) {
		select {
		case r.notices <- text:
		default:
		}
	}
	s, err := join.Join(ctx, jc)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	armed.Store(true)
	return r
}

// report waits for a desync report that satisfies ok.
func (r *explainRig) report(t *testing.T, what string, ok func(*desync.Report) bool) *desync.Report {
	t.Helper()
	var rep *desync.Report
	testkit.WaitFor(t, what, func() bool {
		entries, _ := desync.List(r.dir)
		for _, e := range entries {
			if e.Err == nil && ok(e.Report) {
				rep = e.Report
				return true
			}
		}
		return false
	})
	return rep
}

// TestExplainDesyncEndToEnd plants a fault on a joiner over loopback
// TCP, with the real join code. The host detects the desync at the next
// checkpoint, asks the joiner for its side of the window, and the report
// it writes names the planted tick and the fields the change touched;
// the status page's history and the notice carry it too.
func TestExplainDesyncEndToEnd(t *testing.T) {
	r := startExplainRig(t, jointest.Options{}, colonyGame(t))
	rep := r.report(t, "an explained desync report", func(rep *desync.Report) bool { return rep.Explanation != nil })
	ex := rep.Explanation
	t.Logf("planted at tick %d; report at checkpoint %d:\n%s", r.planted.Load(), rep.Tick, ex)
	if ex.FirstTick != r.planted.Load() || !ex.Exact || ex.Kind != desync.KindOutside {
		t.Errorf("first differing tick %d (exact %v, kind %q), want %d exactly, %q", ex.FirstTick, ex.Exact, ex.Kind, r.planted.Load(), desync.KindOutside)
	}
	named := false
	for _, d := range ex.Differences {
		if d.Path == "map 1 / next ID" || d.Path == "map 1 / things" {
			named = true
		}
	}
	if !named {
		t.Errorf("the differences do not name map 1's things or next ID: %+v", ex.Differences)
	}
	var took time.Duration
	testkit.WaitFor(t, "the explanation on the status page", func() bool {
		for _, d := range r.h.Server.Overview().Desyncs {
			if d.Event == host.DesyncExplained && strings.HasPrefix(d.Explanation, "tick ") {
				took = d.Explain
				return true
			}
		}
		return false
	})
	t.Logf("time to explain (detected to stored): %v", took)
	testkit.WaitFor(t, "the explanation's notice", func() bool {
		for {
			select {
			case n := <-r.notices:
				if strings.Contains(n, "desync explained: tick ") {
					return true
				}
			default:
				return false
			}
		}
	})
}

// TestExplainSilentPlayer has the joiner leave the host's request
// unanswered: the session ticks on meanwhile, the repair goes through,
// and once the host gives up the report is written without an
// explanation.
func TestExplainSilentPlayer(t *testing.T) {
	r := startExplainRig(t, jointest.Options{SilentExplain: true}, colonyGame(t))
	var detected uint64
	testkit.WaitFor(t, "the desync", func() bool {
		o := r.h.Server.Overview()
		detected = o.Tick
		return o.Stats.Desyncs > 0
	})
	// A second of ticks and the repair, well before the host gives up on
	// the answer (10 s): a session that stalled waiting for it would get
	// there only after. Not a tight wall-clock bound: a loaded machine
	// under the race detector still ticks in real time.
	from := time.Now()
	testkit.WaitFor(t, "a second of ticks and the repair after the desync", func() bool {
		o := r.h.Server.Overview()
		return o.Tick >= detected+60 && o.Stats.Repaired > 0
	})
	if took := time.Since(from); took >= 8*time.Second {
		t.Errorf("60 ticks and the repair took %v after the desync at host tick %d: the session stalled waiting for the answer", took, detected)
	}
	rep := r.report(t, "the report, once the host gives up", func(*desync.Report) bool { return true })
	if rep.Explanation != nil || r.h.Server.Overview().Stats.Explained != 0 {
		t.Errorf("an explanation without the player's answer: %v", rep.Explanation)
	}
}

// TestExplainWithoutDiffer explains a desync of a game that neither
// traces nor diffs its state (the counter game): the host still bounds
// the tick and names the map whose hash differs. The fault: map 1's
// counter changes outside any step.
func TestExplainWithoutDiffer(t *testing.T) {
	game := explainGame{
		sim:     locksteptest.New(3, 16),
		content: host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: testDefs},
		join:    join.Config{Databases: testDefs, Loader: locksteptest.Load, Logger: testkit.Quiet()},
		plant:   func(sim lockstep.Sim) error { return sim.(*locksteptest.Counters).Perturb(1) },
	}
	r := startExplainRig(t, jointest.Options{}, game)
	rep := r.report(t, "an explained desync report", func(rep *desync.Report) bool { return rep.Explanation != nil })
	ex := rep.Explanation
	t.Logf("planted at tick %d; report at checkpoint %d:\n%s", r.planted.Load(), rep.Tick, ex)
	if ex.Exact || ex.From > r.planted.Load() || ex.FirstTick < r.planted.Load() || ex.FirstTick >= rep.Tick {
		t.Errorf("window %d..%d (exact %v) does not bound the planted tick %d below checkpoint %d", ex.From, ex.FirstTick, ex.Exact, r.planted.Load(), rep.Tick)
	}
	if len(ex.Differences) != 1 || ex.Differences[0].Path != "map 1 / hash" {
		t.Errorf("differences %+v, want map 1's hash", ex.Differences)
	}
}
