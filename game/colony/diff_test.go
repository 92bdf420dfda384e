package colony

import (
	"fmt"
	"slices"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// TestDiffMapNamesFields diffs a map against a copy with a few fields
// changed and checks that exactly those are named, host value first.
func TestDiffMapNamesFields(t *testing.T) {
	c := testContent(t)
	host := mustNew(t, c, smallConfig(5))
	for range 30 {
		host.Step()
	}
	player := host.clone()
	m := player.maps[1]
	p := &m.Pawns[2]
	p.X++
	i := m.perturbTarget(player.r)
	if err := player.Perturb(1); err != nil { // tops up thing i by one
		t.Fatal(err)
	}
	if i < 0 || i == len(m.Things)-1 {
		t.Fatalf("perturbed thing %d of %d: pick another world", i, len(m.Things))
	}
	gone := m.Things[len(m.Things)-1]
	m.Things = m.Things[:len(m.Things)-1]
	player.temp += 3

	h, _ := host.MarshalMap(1)
	pl, _ := player.MarshalMap(1)
	ds, err := host.DiffMap(1, h, pl)
	if err != nil {
		t.Fatal(err)
	}
	ht := host.maps[1].Things[i]
	def := func(d int32) string { return c.Things[d].Name }
	want := []lockstep.Difference{
		{Path: fmt.Sprintf("map 1 / thing %d (%s) / count", ht.ID, def(ht.Def)), Host: fmt.Sprint(ht.Count), Player: fmt.Sprint(ht.Count + 1)},
		{Path: fmt.Sprintf("map 1 / thing %d (%s)", gone.ID, def(gone.Def)), Host: "present", Player: "absent"},
		{Path: fmt.Sprintf("map 1 / pawn %d / x", p.ID), Host: fmt.Sprint(p.X - 1), Player: fmt.Sprint(p.X)},
	}
	if !slices.Equal(ds, want) {
		t.Errorf("differences\n%v\nwant\n%v", ds, want)
	}
	hw, _ := host.MarshalWorld()
	pw, _ := player.MarshalWorld()
	ds, err = host.DiffMap(lockstep.WorldScope, hw, pw)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Path != "world / temperature" {
		t.Errorf("world differences %v, want the temperature", ds)
	}
	if ds, err := host.DiffMap(1, h, h); err != nil || len(ds) != 0 {
		t.Errorf("a map against itself: %v, %v", ds, err)
	}
	if _, err := host.DiffMap(1, h, pl[:len(pl)/2]); err == nil {
		t.Error("a truncated encoding was diffed")
	}
	if _, err := host.DiffTrace(1, []byte{1, 2}, nil); err == nil {
		t.Error("a truncated trace was diffed")
	}
}
