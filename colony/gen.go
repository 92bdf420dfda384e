package colony

// New generates a world deterministically from content and cfg: the same
// content, config and seed give the same world on every machine.
func New(content *Content, cfg Config) (*World, error) {
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
	for id := 0; id < cfg.Maps; id++ {
		w.maps = append(w.maps, generateMap(r, cfg, int32(id)))
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

// valueNoise is smooth integer value noise with lattice spacing s.
func valueNoise(seed uint64, x, y, s int32) int32 {
	x0, y0 := x/s, y/s
	fx, fy := x%s, y%s
	// integer smoothstep: f*f*(3s-2f)/s^2, in 0..s
	fx = fx * fx * (3*s - 2*fx) / (s * s)
	fy = fy * fy * (3*s - 2*fy) / (s * s)
	v00 := int64(lattice(seed, x0, y0))
	v10 := int64(lattice(seed, x0+1, y0))
	v01 := int64(lattice(seed, x0, y0+1))
	v11 := int64(lattice(seed, x0+1, y0+1))
	S, X, Y := int64(s), int64(fx), int64(fy)
	v := v00*(S-X)*(S-Y) + v10*X*(S-Y) + v01*(S-X)*Y + v11*X*Y
	return int32(v / (S * S))
}

// fractal sums three octaves and stretches the result back over 0..noiseMax.
func fractal(seed uint64, x, y int32) int32 {
	v := 4*valueNoise(seed, x, y, 40) + 2*valueNoise(seed+1, x, y, 13) + valueNoise(seed+2, x, y, 5)
	v /= 7
	// octave sums cluster around the middle: stretch by 2
	v = noiseMax/2 + (v-noiseMax/2)*2
	return max(0, min(noiseMax, v))
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

func generateMap(r *rules, cfg Config, id int32) *gameMap {
	W, H := int32(cfg.Width), int32(cfg.Height)
	mapSeed := mix64(cfg.Seed + 0x1000*uint64(id+1))
	m := &gameMap{
		ID:      id,
		W:       W,
		H:       H,
		RNG:     rng{s: mapSeed},
		NextID:  1,
		Terrain: make([]uint8, int(W)*int(H)),
		cells:   make([]cellInfo, int(W)*int(H)),
	}
	elevSeed, moistSeed := mix64(mapSeed^1), mix64(mapSeed^2)
	for y := int32(0); y < H; y++ {
		for x := int32(0); x < W; x++ {
			m.Terrain[m.idx(x, y)] = r.pickTerrain(fractal(elevSeed, x, y), fractal(moistSeed, x, y))
		}
	}
	g := &m.RNG

	// The colony base: the passable cell nearest the centre with an open
	// 5x5 area around it, else any passable cell, else the centre.
	cx, cy := W/2, H/2
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

	// Storage shelves in two rows north of the base, a wall beyond them.
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

	// Scattered things.
	for n := 0; n < cfg.ThingsPerMap; n++ {
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
	m.WildTarget = m.plantCount + m.plantCount/4 + 8

	// Pawns near the base.
	for n := 0; n < cfg.PawnsPerMap; n++ {
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
	return m
}
