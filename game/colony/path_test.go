package colony

import "testing"

// TestFailedSearchMemory checks that remembering failed searches is only a
// shortcut: a world that forgets them before every tick (as a clone or a
// loaded world starts out) evolves exactly like one that keeps them,
// commands building and removing walls included.
func TestFailedSearchMemory(t *testing.T) {
	c := testContent(t)
	hits := 0
	for _, cfg := range []Config{smallConfig(7), {Seed: 1, Maps: 1}} {
		a, b := mustNew(t, c, cfg), mustNew(t, c, cfg)
		sa, sb := newScript(3, c), newScript(3, c)
		for i := range 1500 {
			for _, m := range b.maps {
				clear(m.noPath)
			}
			run(t, a, sa, 1)
			run(t, b, sb, 1)
			for _, m := range a.maps {
				hits += len(m.noPath)
			}
			if i%50 == 49 && a.WorldHash() != b.WorldHash() {
				t.Fatalf("%+v: tick %d: hashes differ with and without the memory", cfg, a.Tick())
			}
		}
	}
	if hits == 0 {
		t.Error("no failed search remembered: the test does not exercise the memory")
	}
}

// TestFailedSearchMemoryForgets checks that a change of passability
// clears the memory.
func TestFailedSearchMemoryForgets(t *testing.T) {
	w := mustNew(t, testContent(t), smallConfig(1))
	m := w.maps[0]
	m.derive(w.r)
	m.noPath = map[pathKey]bool{{start: 1, goal: 2, moveTicks: 3}: true}
	if _, ok := w.findPath(m, 3, 1, 0, 2, 0); ok {
		t.Fatal("a remembered failure was searched again")
	}
	if w.r.wallType < 0 {
		t.Skip("no wall in the content")
	}
	m.addThing(w.r, w.r.newThing(w.r.wallType, 10, 10, 1))
	if len(m.noPath) != 0 {
		t.Fatalf("building a wall left %d remembered failures", len(m.noPath))
	}
}
