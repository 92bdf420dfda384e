package colony

import (
	"math"
	"runtime"
	"testing"
)

// TestParallelStepMatchesSequential: stepping the maps of a world at once
// (on every core) ends every tick in the state stepping them one after
// the other in ID order does, map by map, with commands, pawns busy,
// wild plants and the rare ticks' growth and decay, and with more maps
// than workers.
func TestParallelStepMatchesSequential(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	c := testContent(t)
	cfg := Config{Maps: 7, Width: 70, Height: 60, Seed: 11, PawnsPerMap: 12, ThingsPerMap: 200, IdleMaps: 2}
	par, seq := mustNew(t, c, cfg), mustNew(t, c, cfg)
	par.splitFrom, seq.splitFrom = 1, math.MaxInt
	sp, ss := newScript(5, c), newScript(5, c)
	for tick := range 600 {
		run(t, par, sp, 1)
		run(t, seq, ss, 1)
		if tick%50 != 49 {
			continue
		}
		for _, m := range seq.maps {
			want, _ := seq.MapHash(m.ID)
			if got, _ := par.MapHash(m.ID); got != want {
				t.Fatalf("tick %d: map %d stepped at once hashes %016x, one after the other %016x", par.Tick(), m.ID, got, want)
			}
		}
	}
	if len(par.views) == 0 {
		t.Fatal("the parallel world never stepped maps at once")
	}
	if par.WorldHash() != seq.WorldHash() {
		t.Fatal("world hashes differ")
	}
}

// TestOnlyBigWorldsSplitTheirStep: the default world steps on the
// caller's goroutine alone, where a second one costs more than it saves,
// and a 16 MiB world on every core.
func TestOnlyBigWorldsSplitTheirStep(t *testing.T) {
	c := testContent(t)
	if w := mustNew(t, c, Config{}); w.bigEnoughToSplit() {
		t.Error("the default world steps its maps at once")
	}
	if w := mustNew(t, c, SizedConfig(16<<20, 1)); !w.bigEnoughToSplit() {
		t.Error("a 16 MiB world steps its maps one after the other")
	}
}
