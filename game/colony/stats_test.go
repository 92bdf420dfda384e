package colony

import (
	"math/rand/v2"
	"testing"
)

// countPlants counts the live plants of every map by walking its things.
func countPlants(w *World) []int {
	out := make([]int, len(w.maps))
	for i, m := range w.maps {
		for j := range m.Things {
			if t := &m.Things[j]; !t.dead && w.r.things[t.Def].cat == catPlant {
				out[i]++
			}
		}
	}
	return out
}

// checkPlants fails the test unless Stats reports the counted plants.
func checkPlants(t *testing.T, what string, w *World) {
	t.Helper()
	want := countPlants(w)
	for i, s := range w.Stats() {
		if s.Plants != want[i] {
			t.Fatalf("%s: map %d: Stats reports %d plants, counted %d", what, s.ID, s.Plants, want[i])
		}
	}
}

// TestStatsPlantsMatchCount: the plant count Stats reports (the maintained
// one once the derived data is built) equals a full count, through
// commands, steps, clones and a reload.
func TestStatsPlantsMatchCount(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 6, Width: 48, Height: 40, Seed: 21, PawnsPerMap: 6, ThingsPerMap: 150, IdleMaps: 2})
	rng := rand.New(rand.NewPCG(4, 5))
	plants := 0
	for i := 0; i < 1500; i++ {
		if cmd, ok := RandomCommand(w, rng); ok {
			cmd.Tick = w.Tick()
			if err := w.Apply(cmd); err != nil {
				t.Fatalf("command %d refused: %v", i, err)
			}
		}
		w.Step()
		checkPlants(t, "stepped", w)
		if i%250 == 0 {
			cl := w.clone()
			checkPlants(t, "fresh clone", cl)
			cl.Step()
			checkPlants(t, "stepped clone", cl)
		}
	}
	for _, s := range w.Stats() {
		plants += s.Plants
	}
	if plants == 0 {
		t.Fatal("no plants anywhere: the test checks nothing")
	}
	world, maps := snapshot(t, w)
	loaded, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	checkPlants(t, "reloaded", loaded)
}
