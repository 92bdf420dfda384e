package colony

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	d := Config{}.withDefaults()
	if d.Maps != DefaultMaps || d.Width != DefaultWidth || d.Height != DefaultHeight ||
		d.PawnsPerMap != DefaultPawnsPerMap || d.ThingsPerMap != DefaultThingsPerMap || d.Seed != 0 {
		t.Fatalf("defaults = %+v", d)
	}
	bad := []struct {
		cfg  Config
		want string
	}{
		{Config{Maps: -1}, "maps"},
		{Config{Maps: MaxMaps + 1}, "maps"},
		{Config{Width: 7}, "width"},
		{Config{Height: MaxSide + 1}, "height"},
		{Config{PawnsPerMap: -3}, "pawns"},
		{Config{PawnsPerMap: MaxPawnsPerMap + 1}, "pawns"},
		{Config{Width: 8, Height: 8, PawnsPerMap: 17}, "pawns"},
		{Config{ThingsPerMap: MaxThingsPerMap}, "things"},
		{Config{Width: 8, Height: 8, PawnsPerMap: 2, ThingsPerMap: 33}, "things"},
	}
	for _, b := range bad {
		err := b.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want it to mention %q", b.cfg, err, b.want)
		}
		if _, err := New(handContent(), b.cfg); err == nil {
			t.Errorf("%+v: New accepted it", b.cfg)
		}
	}
	if _, err := New(&Content{}, Config{}); err == nil {
		t.Error("New accepted empty content")
	}
}

func TestNewDefaultWorld(t *testing.T) {
	w := mustNew(t, testContent(t), Config{})
	if !slices.Equal(w.MapIDs(), []int32{0, 1, 2, 3}) {
		t.Fatalf("map IDs %v", w.MapIDs())
	}
	if w.Tick() != 0 {
		t.Fatalf("tick %d", w.Tick())
	}
	for _, s := range w.Stats() {
		if s.Width != DefaultWidth || s.Height != DefaultHeight || s.Pawns != DefaultPawnsPerMap {
			t.Errorf("map %+v", s)
		}
		if s.Things < DefaultThingsPerMap/2 || s.Plants < 100 {
			t.Errorf("map %d: %d things, %d plants", s.ID, s.Things, s.Plants)
		}
	}
	if _, ok := w.MapHash(4); ok {
		t.Error("hash of unknown map")
	}
	if _, err := w.MarshalMap(-1); err == nil {
		t.Error("marshal of unknown map")
	}
}

func TestHandContentWorld(t *testing.T) {
	c := handContent()
	w := mustNew(t, c, smallConfig(5))
	s := newScript(99, c)
	run(t, w, s, 3000)
	for _, st := range w.Stats() {
		if st.Pawns == 0 || st.Things == 0 {
			t.Errorf("map %+v emptied", st)
		}
	}
	// round trip on hand-built content too
	world, maps := snapshot(t, w)
	w2, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	if w2.WorldHash() != w.WorldHash() {
		t.Fatal("hash differs after load")
	}
}

// TestDeterminism runs two worlds from the same seed with the same
// commands and compares every map hash every 60 ticks.
func TestDeterminism(t *testing.T) {
	c := testContent(t)
	a := mustNew(t, c, smallConfig(42))
	b := mustNew(t, c, smallConfig(42))
	sa, sb := newScript(7, c), newScript(7, c)
	if a.WorldHash() != b.WorldHash() {
		t.Fatal("fresh worlds differ")
	}
	accepted := 0
	for round := range 40 {
		accepted += run(t, a, sa, 60)
		run(t, b, sb, 60)
		for _, id := range a.MapIDs() {
			ha, _ := a.MapHash(id)
			hb, _ := b.MapHash(id)
			if ha != hb {
				t.Fatalf("round %d map %d: %016x != %016x", round, id, ha, hb)
			}
		}
	}
	if a.WorldHash() != b.WorldHash() {
		t.Fatal("world hashes differ")
	}
	if accepted < 20 {
		t.Fatalf("only %d commands accepted; the script should exercise Apply", accepted)
	}
	t.Logf("%d ticks, %d commands accepted, stats %+v", a.Tick(), accepted, a.Stats())
}

// TestDeterminismDefaultWorld checks the full-size default world too.
func TestDeterminismDefaultWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	c := testContent(t)
	a := mustNew(t, c, Config{})
	b := mustNew(t, c, Config{})
	sa, sb := newScript(3, c), newScript(3, c)
	run(t, a, sa, 1200)
	run(t, b, sb, 1200)
	if a.WorldHash() != b.WorldHash() {
		t.Fatal("default worlds diverged")
	}
}

func TestSeedsDiffer(t *testing.T) {
	c := testContent(t)
	a := mustNew(t, c, smallConfig(1))
	b := mustNew(t, c, smallConfig(2))
	if a.WorldHash() == b.WorldHash() {
		t.Fatal("different seeds, same world hash")
	}
	for _, id := range a.MapIDs() {
		ha, _ := a.MapHash(id)
		hb, _ := b.MapHash(id)
		if ha == hb {
			t.Fatalf("map %d equal across seeds", id)
		}
	}
	// maps of one world differ from each other as well
	h0, _ := a.MapHash(0)
	h1, _ := a.MapHash(1)
	if h0 == h1 {
		t.Fatal("maps 0 and 1 are equal")
	}
}

func TestCommandChangesHash(t *testing.T) {
	c := testContent(t)
	a := mustNew(t, c, smallConfig(11))
	b := mustNew(t, c, smallConfig(11))
	run(t, a, newScript(0, c), 100)
	run(t, b, newScript(0, c), 100)
	if a.WorldHash() != b.WorldHash() {
		t.Fatal("diverged before the command")
	}
	m := a.maps[1]
	x, y := findCell(t, a, m, func(ci int32) bool { return m.passable(a.r, ci) && m.cells[ci].buildings == 0 })
	if err := a.Apply(SpawnThing(1, "Steel", int(x), int(y), 5)); err != nil {
		t.Fatal(err)
	}
	h0a, _ := a.MapHash(0)
	h0b, _ := b.MapHash(0)
	h1a, _ := a.MapHash(1)
	h1b, _ := b.MapHash(1)
	if h0a != h0b {
		t.Fatal("a command on map 1 changed map 0")
	}
	if h1a == h1b || a.WorldHash() == b.WorldHash() {
		t.Fatal("command did not change the hashes")
	}
	a.Step()
	b.Step()
	if a.WorldHash() == b.WorldHash() {
		t.Fatal("hashes converged again")
	}
}

// findCell returns the first cell of m (row-major) that ok accepts.
func findCell(tb testing.TB, w *World, m *gameMap, ok func(c int32) bool) (int32, int32) {
	tb.Helper()
	for c := int32(0); c < m.W*m.H; c++ {
		if ok(c) {
			return c % m.W, c / m.W
		}
	}
	tb.Fatal("no such cell")
	return 0, 0
}

// TestSimulationActivity checks that the colony actually does things:
// pawns eat, haul to storage, sow and harvest, plants grow.
func TestSimulationActivity(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 1, Width: 120, Height: 120, Seed: 9, PawnsPerMap: 20, ThingsPerMap: 500})
	m := w.maps[0]
	stored := func() int {
		n := 0
		for _, th := range m.Things {
			if tr := &w.r.things[th.Def]; (tr.cat == catItem || tr.cat == catFood) && m.cells[m.idx(th.X, th.Y)].storage > 0 {
				n++
			}
		}
		return n
	}
	seen := map[uint8]bool{}
	before := stored()
	for range 6000 {
		w.Step()
		for _, p := range m.Pawns {
			seen[p.Job.Kind] = true
		}
	}
	for _, k := range []uint8{jobWander, jobEat, jobHarvest, jobSow, jobHaul, jobDeliver} {
		if !seen[k] {
			t.Errorf("no pawn ever had job kind %d", k)
		}
	}
	if after := stored(); after <= before {
		t.Errorf("stacks in storage: %d before, %d after", before, after)
	}
	// full pawns do not stay hungry: most pawns are below their threshold
	if s := w.Stats()[0]; s.Hungry > s.Pawns/2 {
		t.Errorf("%d of %d pawns hungry", s.Hungry, s.Pawns)
	}
	// derived data matches a rebuild from the encoded state
	cells := maps.Clone(m.cells)
	blocked := blockSet{pages: make([]*[blockWords]uint64, len(m.blocked.pages))}
	for i, p := range m.blocked.pages {
		if p != nil {
			cp := *p
			blocked.pages[i] = &cp
		}
	}
	plants := m.plantCount
	m.rebuildDerived(w.r)
	if !maps.Equal(cells, m.cells) || !blocked.equal(&m.blocked) || plants != m.plantCount {
		t.Fatal("incremental derived data differs from a rebuild")
	}
}

func TestPathFinder(t *testing.T) {
	c := handContent()
	w := mustNew(t, c, Config{Maps: 1, Width: 20, Height: 20, PawnsPerMap: 1, ThingsPerMap: 1})
	m := w.maps[0]
	soil := uint8(1)
	terrain := m.ownTerrain()
	terrain.setRange(0, bytes.Repeat([]byte{soil}, terrain.len()))
	m.Things = nil
	m.rebuildDerived(w.r)
	// a wall with one gap at y=19
	wall := int32(4)
	for y := int32(0); y < 19; y++ {
		m.addThing(w.r, w.r.newThing(wall, 10, y, 1))
	}
	path, ok := w.findPath(m, 6, 2, 2, 17, 2)
	if !ok {
		t.Fatal("no path through the gap")
	}
	last := path[len(path)-1]
	if last != m.idx(17, 2) {
		t.Fatalf("path ends at %d", last)
	}
	px, py := int32(2), int32(2)
	for _, c := range path {
		x, y := c%m.W, c/m.W
		if absI32(x-px) > 1 || absI32(y-py) > 1 || !m.passable(w.r, c) {
			t.Fatalf("bad step %d,%d -> %d,%d", px, py, x, y)
		}
		px, py = x, y
	}
	if len(path) < 30 {
		t.Fatalf("path of %d steps cannot detour through the gap", len(path))
	}
	// close the gap: different regions, and the search fails
	m.addThing(w.r, w.r.newThing(wall, 10, 19, 1))
	if m.regionAt(w.r, 2, 2) == m.regionAt(w.r, 17, 2) {
		t.Fatal("walled-off halves share a region")
	}
	if _, ok := w.findPath(m, 6, 2, 2, 17, 2); ok {
		t.Fatal("path through a closed wall")
	}
}
