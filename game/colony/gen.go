package colony

// New generates a world deterministically from content and cfg: the same
// content, config and seed give the same world on every machine.
func New(content *Content, cfg Config) (*World, error) {
	return NewWithProgress(content, cfg, nil)
}

// NewWithProgress is New that calls progress, if not nil, after each map
// is generated with the maps done and the maps in all, so a tool can show
// how a big world's generation goes.
func NewWithProgress(content *Content, cfg Config, progress func(done, total int)) (*World, error) {
	r, err := compile(content)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &World{
		r:    r,
		seed: cfg.Seed,
		rng:  rng{s: mix64(cfg.Seed ^ 0x5EED0000C0101E5)},
		temp: seasonalTemp(0),
	}
	tt := newTerrainTable(r)
	for id := 0; id < cfg.Maps; id++ {
		w.maps = append(w.maps, generateMap(r, tt, cfg, int32(id)))
		if progress != nil {
			progress(id+1, cfg.Maps)
		}
	}
	return w, nil
}

// Noise constants.
const (
	noiseMax = 1000
)

// lattice returns a pseudo-random value in 0..noiseMax for a lattice point.
func lattice(seed uint64, x, y int32) int32 {
	h := mix64(seed ^ uint64(uint32(x))*0x9E3779B97F4A7C15 ^ uint64(uint32(y))*0xC2B2AE3D27D4EB4F)
	return int32(h % (noiseMax + 1))
}

// Terrain noise: three octaves of smooth integer value noise, with
// lattice spacings 40, 13 and 5, summed with weights 4, 2, 1 and stretched
// back over 0..noiseMax. One octave at cell x, y is the bilinear blend,
// with integer smoothstep weights, of the lattice values at the corners of
// the lattice square holding the cell:
//
//	X = smooth(x mod s), Y = smooth(y mod s), smooth(f) = f*f*(3s-2f)/s^2
//	v = (v00*(s-X)*(s-Y) + v10*X*(s-Y) + v01*(s-X)*Y + v11*X*Y) / s^2
//
// noiseField computes it a row at a time: the lattice values of a lattice
// row are fetched once, the blend along y once per lattice column, and the
// division uses an exact reciprocal (gen_test.go checks every dividend).
// The values are exactly those of the formula above.

var (
	octaveSpacing = [3]int32{40, 13, 5}
	octaveWeight  = [3]int32{4, 2, 1}
)

// recipShift is the shift of the reciprocal multiplication: with
// m = 2^40/d + 1, floor(n*m / 2^40) = floor(n/d) for 0 <= n < 2^40/d.
const recipShift = 40

func recip(d int64) uint64 { return uint64(1<<recipShift/d + 1) }

// smoothStep is the integer smoothstep of f in 0..s-1, in 0..s.
func smoothStep(f, s int32) int32 { return f * f * (3*s - 2*f) / (s * s) }

// stretched maps a sum of weighted octaves, 4a+2b+c, to the fractal noise:
// octave sums cluster around the middle, so their mean is stretched by 2
// around it and clamped to 0..noiseMax.
var stretched = func() (t [7*noiseMax + 1]int16) {
	for sum := range t {
		v := int32(sum) / 7
		v = noiseMax/2 + (v-noiseMax/2)*2
		t[sum] = int16(max(0, min(noiseMax, v)))
	}
	return t
}()

type octave struct {
	seed       uint64
	s          int64
	magic      int64   // recip(s*s)
	smooth     []int64 // smoothStep of 0..s-1
	y0         int32   // lattice row held in lat0 (lat1 is the next), -1 for none
	lat0, lat1 []int32 // lattice values, x0 = 0..(w-1)/s+1
	col        []int64 // lat0*(s-Y) + lat1*Y for the current row
}

func newOctave(seed uint64, s int32, w int) *octave {
	n := (w-1)/int(s) + 2
	o := &octave{seed: seed, s: int64(s), magic: int64(recip(int64(s) * int64(s))), y0: -1,
		smooth: make([]int64, s), lat0: make([]int32, n), lat1: make([]int32, n), col: make([]int64, n)}
	for f := range s {
		o.smooth[f] = int64(smoothStep(f, s))
	}
	return o
}

// addRow adds weight times the octave at every x of row y to sum. Along
// a lattice square the blend is (s-X)*a + X*b = s*a + X*(b-a), a and b the
// blends along y at its left and right lattice columns; times the
// reciprocal that is s*a*m + X*(b-a)*m, at most noiseMax*s*s*m < 2^57.
func (o *octave) addRow(y, weight int32, sum []int32) {
	s := o.s
	y0 := y / int32(s)
	if y0 != o.y0 {
		for x0 := range o.lat0 {
			o.lat0[x0] = lattice(o.seed, int32(x0), y0)
			o.lat1[x0] = lattice(o.seed, int32(x0), y0+1)
		}
		o.y0 = y0
	}
	Y := o.smooth[int64(y)%s]
	for i := range o.col {
		o.col[i] = int64(o.lat0[i])*(s-Y) + int64(o.lat1[i])*Y
	}
	magic := o.magic
	out := sum
	for x0 := 0; len(out) > 0; x0++ {
		a, b := o.col[x0], o.col[x0+1]
		base, step := s*a*magic, (b-a)*magic
		blk := out[:min(len(out), int(s))]
		sm := o.smooth[:len(blk)]
		for i, X := range sm {
			blk[i] += weight * int32((base+X*step)>>recipShift)
		}
		out = out[len(blk):]
	}
}

// noiseField is fractal noise over a map's rows for one seed.
type noiseField struct {
	oct [3]*octave
	sum []int32
}

func newNoiseField(seed uint64, w int) *noiseField {
	f := &noiseField{sum: make([]int32, w)}
	for i, s := range octaveSpacing {
		f.oct[i] = newOctave(seed+uint64(i), s, w)
	}
	return f
}

// sums returns the weighted octave sums, 0..7*noiseMax, at every x of
// row y; stretched turns them into the noise.
func (f *noiseField) sums(y int32) []int32 {
	clear(f.sum)
	for i, o := range f.oct {
		o.addRow(y, octaveWeight[i], f.sum)
	}
	return f.sum
}

// row returns the fractal noise, 0..noiseMax, at every x of row y.
func (f *noiseField) row(y int32) []int32 {
	out := f.sums(y)
	for x, v := range out {
		out[x] = int32(stretched[v])
	}
	return out
}

// terrainTable is pickTerrain tabulated: the terrain of an elevation and a
// moisture is tabs[band[elevation]][moisture]. sumBand is band of the
// elevation an octave sum stretches to.
type terrainTable struct {
	band    [noiseMax + 1]uint8
	sumBand [7*noiseMax + 1]uint8
	tabs    [][noiseMax + 1]uint8
}

func newTerrainTable(r *rules) *terrainTable {
	tt := &terrainTable{}
	// pickTerrain depends on the elevation only through the band it falls
	// in: the index of the first generated terrain reaching it.
	bandStart := func(elev int32) int {
		g := r.genOrder
		i := 0
		for i < len(g)-1 && int32(r.content.Terrains[g[i]].GenElevation) < elev {
			i++
		}
		return i
	}
	index := map[int]uint8{}
	for e := range int32(noiseMax + 1) {
		i := bandStart(e)
		b, ok := index[i]
		if !ok {
			b = uint8(len(tt.tabs))
			index[i] = b
			var tab [noiseMax + 1]uint8
			for mo := range int32(noiseMax + 1) {
				tab[mo] = r.pickTerrain(e, mo)
			}
			tt.tabs = append(tt.tabs, tab)
		}
		tt.band[e] = b
	}
	for sum, e := range stretched {
		tt.sumBand[sum] = tt.band[e]
	}
	return tt
}

// pickTerrain maps elevation and moisture to a terrain index.
func (r *rules) pickTerrain(elev, moist int32) uint8 {
	g := r.genOrder
	if len(g) == 0 {
		return uint8(r.firstPassable)
	}
	// first band whose upper bound is >= elev, else the highest band
	i := 0
	for i < len(g)-1 && int32(r.content.Terrains[g[i]].GenElevation) < elev {
		i++
	}
	band := r.content.Terrains[g[i]].GenElevation
	// band members are sorted by moisture, highest first: take the first
	// whose minimum is met, else the driest
	last := g[i]
	for ; i < len(g) && r.content.Terrains[g[i]].GenElevation == band; i++ {
		last = g[i]
		if int32(r.content.Terrains[g[i]].GenMoisture) <= moist {
			return uint8(g[i])
		}
	}
	return uint8(last)
}

// ring calls fn for every cell at Chebyshev distance d from (cx, cy), in a
// fixed order, until fn returns true; it reports whether fn did.
func ring(cx, cy, d int32, fn func(x, y int32) bool) bool {
	if d == 0 {
		return fn(cx, cy)
	}
	for dx := -d; dx <= d; dx++ {
		if fn(cx+dx, cy-d) || fn(cx+dx, cy+d) {
			return true
		}
	}
	for dy := -d + 1; dy <= d-1; dy++ {
		if fn(cx-d, cy+dy) || fn(cx+d, cy+dy) {
			return true
		}
	}
	return false
}

func generateMap(r *rules, tt *terrainTable, cfg Config, id int32) *gameMap {
	m := newGameMap(r, tt, cfg, id)
	cx, cy := m.baseSite(r)
	m.buildBase(r, cx, cy)
	m.scatterThings(r, cfg.ThingsPerMap)
	m.WildTarget = m.plantCount + m.plantCount/4 + 8

	// Pawns near the base.
	pawns := cfg.PawnsPerMap
	if int(id) >= cfg.Maps-cfg.IdleMaps {
		pawns = 0
	}
	m.placePawns(r, pawns, cx, cy)
	if len(m.Pawns) > 0 {
		m.regions(r) // now rather than on the first ticks: big maps take milliseconds
	}
	m.version, m.changed = newVersion(), false
	m.terrainSum = new(terrainSum) // the terrain is final
	return m
}

// newGameMap returns map id with its terrain generated from the map's
// seed and its derived state built, before anything is placed on it.
func newGameMap(r *rules, tt *terrainTable, cfg Config, id int32) *gameMap {
	W, H := int32(cfg.Width), int32(cfg.Height)
	seed := mapSeed(cfg.Seed, id)
	m := &gameMap{
		ID:      id,
		W:       W,
		H:       H,
		RNG:     rng{s: seed},
		NextID:  1,
		Terrain: newTerrain(int(W)*int(H), len(r.terrains)),
		// room for the scattered things, the base, some wild plants and
		// a thirty-second more for the things to come (as a loaded map
		// gets: codec.go), not a quarter: on a 204 MiB world a quarter
		// was 16 MiB the host held and never used
		Things: make([]thing, 0, cfg.ThingsPerMap+cfg.ThingsPerMap/32+64),
	}
	// one row at a time: the packed terrain is never unpacked whole
	terrainRows(tt, seed, W, H, func(y int32, row []uint8) bool { m.Terrain.setRange(int(y)*int(W), row); return true })
	m.rebuildDerived(r)
	return m
}

// mapSeed is the seed of map id's terrain and RNG in a world of seed.
func mapSeed(seed uint64, id int32) uint64 { return mix64(seed + 0x1000*uint64(id+1)) }

// terrainRows generates the terrain of a W x H map whose seed is seed,
// handing each row y (one byte a cell) to emit, which must not keep it;
// it stops after a row emit returns false for.
func terrainRows(tt *terrainTable, seed uint64, W, H int32, emit func(y int32, row []uint8) bool) {
	elev := newNoiseField(mix64(seed^1), int(W))
	moist := newNoiseField(mix64(seed^2), int(W))
	row := make([]uint8, W)
	for y := range H {
		e, mo := elev.sums(y), moist.sums(y)
		e, mo = e[:len(row)], mo[:len(row)]
		for x := range row {
			row[x] = tt.tabs[tt.sumBand[e[x]]][stretched[mo[x]]]
		}
		if !emit(y, row) {
			return
		}
	}
}

// baseSite is where the colony base goes: the passable cell nearest the
// centre with an open 5x5 area around it, else any passable cell, else
// the centre.
func (m *gameMap) baseSite(r *rules) (cx, cy int32) {
	W, H := m.W, m.H
	cx, cy = W/2, H/2
	open := func(x, y, rad int32) bool {
		for dy := -rad; dy <= rad; dy++ {
			for dx := -rad; dx <= rad; dx++ {
				if !m.in(x+dx, y+dy) || !m.passable(r, m.idx(x+dx, y+dy)) {
					return false
				}
			}
		}
		return true
	}
	found := false
	for _, rad := range []int32{2, 0} {
		for d := int32(0); d < max(W, H) && !found; d++ {
			found = ring(W/2, H/2, d, func(x, y int32) bool {
				if m.in(x, y) && open(x, y, rad) {
					cx, cy = x, y
					return true
				}
				return false
			})
		}
		if found {
			break
		}
	}
	return cx, cy
}

// buildBase places storage shelves in two rows north of the base at
// cx, cy, and a wall beyond them.
func (m *gameMap) buildBase(r *rules, cx, cy int32) {
	place := func(def, x, y int32) {
		if def < 0 || !m.in(x, y) {
			return
		}
		c := m.idx(x, y)
		if !m.passable(r, c) || m.cells[c].buildings > 0 || m.cells[c].plants > 0 || m.cells[c].items > 0 {
			return
		}
		m.addThing(r, r.newThing(def, x, y, 1))
	}
	for dy := int32(-3); dy <= -2; dy++ {
		for dx := int32(-5); dx <= 5; dx++ {
			place(r.storageType, cx+dx, cy+dy)
		}
	}
	for dx := int32(-6); dx <= 6; dx++ {
		place(r.wallType, cx+dx, cy-5)
	}
}

// scatterThings scatters n things (items, food, plants) over the map,
// drawing from the map's RNG.
func (m *gameMap) scatterThings(r *rules, n int) {
	W, H := m.W, m.H
	g := &m.RNG
	for range n {
		def := r.pickScatter(g)
		if def < 0 {
			break
		}
		tr := &r.things[def]
		for try := 0; try < 30; try++ {
			x, y := g.intn(W), g.intn(H)
			c := m.idx(x, y)
			if !m.passable(r, c) || m.cells[c].buildings > 0 {
				continue
			}
			t := r.newThing(def, x, y, 1)
			if tr.cat == catPlant {
				if m.cells[c].plants > 0 || m.fertility(r, c) < max(tr.minFertility, 1) {
					continue
				}
				t.Growth = g.intn(tr.growTicks + 1)
				if tr.sowable && g.chance(1, 5) {
					t.Growth, t.Flags = 0, flagUnsown
				}
			} else {
				t.Count = g.between(1, max(1, tr.stackLimit/2))
			}
			m.addThing(r, t)
			break
		}
	}
}

// placePawns places n pawns near the base at cx, cy, drawing from the
// map's RNG.
func (m *gameMap) placePawns(r *rules, n int, cx, cy int32) {
	g := &m.RNG
	for range n {
		kind := r.pickKind(g)
		k := &r.kinds[kind]
		x, y := cx, cy
		for try := 0; try < 50; try++ {
			tx, ty := cx+g.between(-20, 20), cy+g.between(-20, 20)
			if m.in(tx, ty) && m.passable(r, m.idx(tx, ty)) {
				x, y = tx, ty
				break
			}
		}
		m.Pawns = append(m.Pawns, pawn{
			ID:     m.NextID,
			Kind:   kind,
			X:      x,
			Y:      y,
			Hunger: min(g.intn(k.hungryAt+k.hungryAt/2), k.starveAt),
			Health: k.maxHealth,
			Cool:   g.intn(60),
			Carry:  carried{Def: -1},
		})
		m.NextID++
	}
}
