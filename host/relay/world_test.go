package relay

import (
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// TestWorldCuts: a World steps its tick, takes commands without reading
// them, and cuts at the tick and the applied count its counter gives
// (the session's, engine commands included), handing each cut to ask.
func TestWorldCuts(t *testing.T) {
	var asked []*Cut
	applied := uint32(0)
	w := NewWorld(func(c *Cut) { asked = append(asked, c) }, func() uint32 { return applied }, 0)
	if w.HasWorld() {
		t.Fatal("a new World has a world")
	}
	w.Start(&snapshot.Point{Tick: 40, Maps: []snapshot.MapPoint{{ID: 3}, {ID: 1}}})
	if !w.HasWorld() || w.Tick() != 40 || len(w.MapIDs()) != 2 {
		t.Fatalf("after Start: has %v, tick %d, maps %v", w.HasWorld(), w.Tick(), w.MapIDs())
	}
	w.Step()
	if err := w.Apply(lockstep.Command{Kind: 1}); err != nil {
		t.Fatal(err)
	}
	applied = 3 // the session applied three at tick 41; the World saw one
	c, ok := w.Clone().(*Cut)
	if !ok || len(asked) != 1 || asked[0] != c {
		t.Fatalf("Clone gave %T, asked %d", c, len(asked))
	}
	if c.Tick() != 41 || c.Applied() != 3 {
		t.Errorf("cut at (%d, %d), want (41, 3)", c.Tick(), c.Applied())
	}
	w.Resume(90)
	if w.Tick() != 90 {
		t.Errorf("after Resume(90): tick %d", w.Tick())
	}
}
