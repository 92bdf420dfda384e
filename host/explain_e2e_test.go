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

// startExplainRig starts the host and the joiner (with opt), and plants
// the fault 45 ticks after the joiner's first step: outside any step, a
// steel stack appears in the joiner's map 1, as memory changed behind
// the simulation's back would.
func startExplainRig(t *testing.T, opt jointest.Options) *explainRig {
	content, set, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(content, colony.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	r := &explainRig{dir: t.TempDir(), notices: make(chan string, 64)}
	cfg := host.Config{TickRate: 60}
	cfg.Desync.HashEvery = 30
	cfg.Desync.Dir = r.dir
	r.h = hosttest.Start(t, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()}, world)
	var armed atomic.Bool
	var at uint64 // the simulation goroutine's own
	ctx, cancel := context.WithCancel(jointest.With(context.Background(), opt))
	t.Cleanup(cancel)
	s, err := join.Join(ctx, join.Config{
		Addr: r.h.Addr, Name: "Alice", Databases: set.Summary(), MapLoader: colony.MapLoader(content), Logger: testkit.Quiet(),
		OnStep: func(sim lockstep.Sim) {
			if !armed.Load() || r.planted.Load() != 0 {
				return
			}
			if at == 0 {
				at = sim.Tick() + 45
			}
			if sim.Tick() == at {
				c := colony.SpawnThing(1, "Steel", 10, 12, 25)
				c.Tick = sim.Tick()
				if err := sim.Apply(c); err != nil {
					t.Errorf("plant the fault: %v", err)
				}
				r.planted.Store(at)
			}
		},
		Notice: func(text string) {
			select {
			case r.notices <- text:
			default:
			}
		},
	})
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
	r := startExplainRig(t, jointest.Options{})
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
	r := startExplainRig(t, jointest.Options{SilentExplain: true})
	var detected uint64
	testkit.WaitFor(t, "the desync", func() bool {
		o := r.h.Server.Overview()
		detected = o.Tick
		return o.Stats.Desyncs > 0
	})
	time.Sleep(2 * time.Second)
	o := r.h.Server.Overview()
	if o.Tick < detected+60 || o.Stats.Repaired == 0 {
		t.Errorf("2 s after the desync at host tick %d: tick %d, %d repaired; the session stalled waiting for the answer", detected, o.Tick, o.Stats.Repaired)
	}
	rep := r.report(t, "the report, once the host gives up", func(*desync.Report) bool { return true })
	if rep.Explanation != nil || r.h.Server.Overview().Stats.Explained != 0 {
		t.Errorf("an explanation without the player's answer: %v", rep.Explanation)
	}
}
