package colony

import (
	"testing"
)

// floodRegions labels cells as regions did first: a flood fill over the
// eight neighbours that does not cut corners, in cell order.
func floodRegions(m *gameMap, r *rules) []int32 {
	n := int32(m.Terrain.len())
	reg := make([]int32, n)
	var queue []int32
	label := int32(0)
	for c := range n {
		if reg[c] != 0 || !m.passable(r, c) {
			continue
		}
		label++
		reg[c] = label
		queue = append(queue[:0], c)
		for len(queue) > 0 {
			cur := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			x, y := cur%m.W, cur/m.W
			for d := range 8 {
				nx, ny := x+dirX[d], y+dirY[d]
				if !m.in(nx, ny) {
					continue
				}
				nc := m.idx(nx, ny)
				if reg[nc] != 0 || !m.passable(r, nc) {
					continue
				}
				if d >= 4 && (!m.passable(r, m.idx(nx, y)) || !m.passable(r, m.idx(x, ny))) {
					continue
				}
				reg[nc] = label
				queue = append(queue, nc)
			}
		}
	}
	return reg
}

// samePartition fails unless regionOf splits the cells exactly as the
// flood fill does (labels may differ, the partition may not).
func samePartition(tb testing.TB, m *gameMap, r *rules) {
	tb.Helper()
	ref := floodRegions(m, r)
	fwd, back := map[int32]int32{}, map[int32]int32{}
	for c := range int32(len(ref)) {
		got := m.regionOf(r, c)
		if (got == 0) != (ref[c] == 0) {
			tb.Fatalf("cell %d,%d: region %d, flood fill %d", c%m.W, c/m.W, got, ref[c])
		}
		if got == 0 {
			continue
		}
		if l, ok := fwd[ref[c]]; ok && l != got {
			tb.Fatalf("cell %d,%d: flood region %d split into %d and %d", c%m.W, c/m.W, ref[c], l, got)
		}
		if l, ok := back[got]; ok && l != ref[c] {
			tb.Fatalf("cell %d,%d: region %d joins flood regions %d and %d", c%m.W, c/m.W, got, l, ref[c])
		}
		fwd[ref[c]], back[got] = got, ref[c]
	}
}

// TestRegionsMatchFloodFill builds and removes walls at random and
// compares the span regions with a flood fill after every change.
func TestRegionsMatchFloodFill(t *testing.T) {
	for _, c := range []*Content{testContent(t), handContent()} {
		w := mustNew(t, c, Config{Maps: 1, Width: 67, Height: 45, Seed: 5, PawnsPerMap: 1, ThingsPerMap: 100})
		m, r := w.maps[0], w.r
		samePartition(t, m, r)
		wall := r.wallType
		g := rng{s: 77}
		for range 120 {
			if g.chance(2, 3) {
				x, y := g.intn(m.W), g.intn(m.H)
				// lines of wall split regions; single cells rarely do
				for range g.between(1, 12) {
					if m.in(x, y) && m.cells[m.idx(x, y)].buildings == 0 {
						m.addThing(r, r.newThing(wall, x, y, 1))
					}
					if g.chance(1, 2) {
						x++
					} else {
						y++
					}
				}
			} else {
				for i := range m.Things {
					if m.Things[i].Def == wall && g.chance(1, 3) {
						m.removeThing(r, i)
					}
				}
				m.compact()
			}
			samePartition(t, m, r)
		}
	}
}

// TestHashedPathSearch runs the same world with the dense and the hashed
// search memory: the paths, and so the states, must be identical.
func TestHashedPathSearch(t *testing.T) {
	c := testContent(t)
	cfg := Config{Maps: 2, Width: 90, Height: 70, Seed: 19, PawnsPerMap: 20, ThingsPerMap: 400}
	a, b := mustNew(t, c, cfg), mustNew(t, c, cfg)
	sa, sb := newScript(19, c), newScript(19, c)
	defer func(n int) { pathDenseCells = n }(pathDenseCells)
	for round := range 4 {
		pathDenseCells = denseCells
		run(t, a, sa, 100)
		pathDenseCells = 0
		run(t, b, sb, 100)
		if a.WorldHash() != b.WorldHash() {
			t.Fatalf("round %d: hashed search diverged", round)
		}
	}
	// and direct searches on one map, long ones included
	m := a.maps[0]
	g := rng{s: 3}
	for range 150 {
		sx, sy, tx, ty := g.intn(m.W), g.intn(m.H), g.intn(m.W), g.intn(m.H)
		pathDenseCells = denseCells
		p1, ok1 := a.findPath(m, 12, sx, sy, tx, ty)
		pathDenseCells = 0
		p2, ok2 := a.findPath(m, 12, sx, sy, tx, ty)
		if ok1 != ok2 || len(p1) != len(p2) {
			t.Fatalf("%d,%d -> %d,%d: dense %v %d cells, hashed %v %d cells", sx, sy, tx, ty, ok1, len(p1), ok2, len(p2))
		}
		for i := range p1 {
			if p1[i] != p2[i] {
				t.Fatalf("%d,%d -> %d,%d: paths differ at step %d", sx, sy, tx, ty, i)
			}
		}
	}
}

// TestRegionScanAllocatesItsResult: once a scan has warmed the scratch
// buffer, scanning a map allocates its result (the spans, exact, and the
// row starts) and one row's scratch, not the copies of a growing slice.
func TestRegionScanAllocatesItsResult(t *testing.T) {
	w := mustNew(t, testContent(t), Config{Maps: 1, Width: 500, Height: 400, Seed: 3, PawnsPerMap: 1, ThingsPerMap: 2000})
	m, r := w.maps[0], w.r
	m.scanRows(r, nil, nil, nil) // warms the scratch
	var spans []span
	allocs := testing.AllocsPerRun(5, func() { spans, _ = m.scanRows(r, nil, nil, nil) })
	if len(spans) < 2*int(m.H) {
		t.Fatalf("%d spans in %d rows: the terrain is too plain to show growth", len(spans), m.H)
	}
	// spans, start, one row's passable bits and one row's bytes.
	if allocs > 4 {
		t.Fatalf("%v allocations per scan of %d spans, want 4", allocs, len(spans))
	}
}
