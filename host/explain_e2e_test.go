package host_test

import (
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestExplainDesyncEndToEnd plants a fault on a joiner over loopback TCP,
// with the real join code: at a known tick, outside any step, a steel
// stack appears in the joiner's map 1 (as memory changed behind the
// simulation's back would). The host detects the desync at the next
// checkpoint, asks the joiner for its side of the window, and the report
// it writes names the planted tick and the fields the change touched;
// the status page's history and the notice carry it too.
func TestExplainDesyncEndToEnd(t *testing.T) {
	content, set, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(content, colony.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := host.Config{TickRate: 60, Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	cfg.Desync.HashEvery = 30
	cfg.Desync.Dir = dir
	h := hosttest.Start(t, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()}, world)

	var armed atomic.Bool
	var planted atomic.Uint64 // the tick the fault went in (0: not yet)
	var at uint64             // the simulation goroutine's own
	notices := make(chan string, 64)
	j := hosttest.Join(t, join.Config{
		Addr: h.Addr, Name: "Alice", Databases: set.Summary(), MapLoader: colony.MapLoader(content), Logger: testkit.Quiet(),
		OnStep: func(sim lockstep.Sim) {
			if !armed.Load() {
				return
			}
			if at == 0 {
				at = sim.Tick() + 45
			}
			if sim.Tick() == at && planted.Load() == 0 {
				c := colony.SpawnThing(1, "Steel", 10, 12, 25)
				c.Tick = sim.Tick()
				if err := sim.Apply(c); err != nil {
					t.Errorf("plant the fault: %v", err)
				}
				planted.Store(at)
			}
		},
		Notice: func(text string) {
			select {
			case notices <- text:
			default:
			}
		},
	})
	_ = j
	armed.Store(true)
	var rep *desync.Report
	testkit.WaitFor(t, "an explained desync report", func() bool {
		entries, _ := desync.List(dir)
		for _, e := range entries {
			if e.Err == nil && e.Report.Explanation != nil {
				rep = e.Report
				return true
			}
		}
		return false
	})
	ex := rep.Explanation
	t.Logf("planted at tick %d; report at checkpoint %d:\n%s", planted.Load(), rep.Tick, ex)
	if ex.FirstTick != planted.Load() || !ex.Exact || ex.Kind != desync.KindOutside {
		t.Errorf("first differing tick %d (exact %v, kind %q), want %d exactly, %q", ex.FirstTick, ex.Exact, ex.Kind, planted.Load(), desync.KindOutside)
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
		for _, d := range h.Server.Overview().Desyncs {
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
			case n := <-notices:
				if strings.Contains(n, "desync explained: tick ") {
					return true
				}
			default:
				return false
			}
		}
	})
}
