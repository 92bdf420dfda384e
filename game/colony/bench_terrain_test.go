package colony

import "testing"

// BenchmarkPathSearch measures path searches (without the memory of
// failures) between passable cells of one region on the first map of the
// warmed-up default world, 20 to 60 cells apart: the search's inner loop
// reads a cell's terrain for every neighbour it looks at.
func BenchmarkPathSearch(b *testing.B) {
	w := benchWorld(b)
	m, r := w.maps[0], w.r
	type pair struct{ sx, sy, tx, ty int32 }
	var pairs []pair
	g := rng{s: 99}
	for len(pairs) < 64 {
		sx, sy := g.intn(m.W), g.intn(m.H)
		tx, ty := sx+g.intn(81)-40, sy+g.intn(81)-40
		if !m.in(tx, ty) || max(absI32(sx-tx), absI32(sy-ty)) < 20 {
			continue
		}
		if s := m.regionOf(r, m.idx(sx, sy)); s != 0 && s == m.regionOf(r, m.idx(tx, ty)) {
			pairs = append(pairs, pair{sx, sy, tx, ty})
		}
	}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		p := pairs[i%len(pairs)]
		i++
		w.search(m, 6, p.sx, p.sy, p.tx, p.ty)
	}
}

// BenchmarkRegionScan measures building the region map of a map of
// 2000x2000 from scratch, as a load does: a scan of every row's terrain.
func BenchmarkRegionScan(b *testing.B) {
	w := mustNew(b, testContent(b), Config{Maps: 1, Width: 2000, Height: 2000, PawnsPerMap: 10, ThingsPerMap: 1000})
	m, r := w.maps[0], w.r
	b.ResetTimer()
	for b.Loop() {
		m.reg = nil
		m.regions(r)
	}
}
