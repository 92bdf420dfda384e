package colony

import (
	"testing"
)

// valueNoiseRef and fractalRef are the noise formulas cell by cell, as
// generation first computed them; noiseField must give the same values.
func valueNoiseRef(seed uint64, x, y, s int32) int32 {
	x0, y0 := x/s, y/s
	fx, fy := x%s, y%s
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

func fractalRef(seed uint64, x, y int32) int32 {
	v := 4*valueNoiseRef(seed, x, y, 40) + 2*valueNoiseRef(seed+1, x, y, 13) + valueNoiseRef(seed+2, x, y, 5)
	v /= 7
	v = noiseMax/2 + (v-noiseMax/2)*2
	return max(0, min(noiseMax, v))
}

// TestRecipExact checks the reciprocal division on every dividend an
// octave can produce.
func TestRecipExact(t *testing.T) {
	for _, s := range octaveSpacing {
		d := int64(s) * int64(s)
		m := recip(d)
		for n := int64(0); n <= noiseMax*d; n++ {
			if got := int64(uint64(n) * m >> recipShift); got != n/d {
				t.Fatalf("%d/%d: got %d", n, d, got)
			}
		}
	}
}

func TestNoiseRowsMatchFormula(t *testing.T) {
	g := rng{s: 99}
	for _, w := range []int{1, 5, 13, 40, 41, 97, 333} {
		seed := g.next()
		f := newNoiseField(seed, w)
		for y := range int32(130) {
			row := f.row(y)
			for x := range int32(w) {
				if want := fractalRef(seed, x, y); row[x] != want {
					t.Fatalf("width %d, cell %d,%d: %d, want %d", w, x, y, row[x], want)
				}
			}
		}
	}
	// rows far from the origin, skipping rows as generation never does
	f := newNoiseField(7, 4096)
	for _, y := range []int32{4095, 2000, 39, 40, 41} {
		row := f.row(y)
		for x := int32(0); x < 4096; x += 7 {
			if want := fractalRef(7, x, y); row[x] != want {
				t.Fatalf("cell %d,%d: %d, want %d", x, y, row[x], want)
			}
		}
	}
}

func TestTerrainTable(t *testing.T) {
	for _, c := range []*Content{testContent(t), handContent()} {
		r, err := compile(c)
		if err != nil {
			t.Fatal(err)
		}
		tt := newTerrainTable(r)
		for e := range int32(noiseMax + 1) {
			for mo := int32(0); mo <= noiseMax; mo += 3 {
				if got, want := tt.tabs[tt.band[e]][mo], r.pickTerrain(e, mo); got != want {
					t.Fatalf("elevation %d, moisture %d: %d, want %d", e, mo, got, want)
				}
			}
		}
	}
}

// TestGenerationUnchanged pins the hashes of freshly generated worlds,
// recorded when generation computed terrain cell by cell: generation is
// the same on every machine and does not change by accident.
func TestGenerationUnchanged(t *testing.T) {
	c := testContent(t)
	for _, g := range []struct {
		c    *Content
		cfg  Config
		want uint64
	}{
		{c, Config{}, 0x7350268ea5b3366f},
		{c, smallConfig(42), 0x69ad4e8bb6c0a2a9},
		{c, Config{Maps: 1, Width: 1000, Height: 777, Seed: 9}, 0xc76bc890205d5332},
		{c, Config{Maps: 3, Width: 8, Height: 300, Seed: 123456789, PawnsPerMap: 2, ThingsPerMap: 5}, 0xe3b814e66eb27533},
		{handContent(), smallConfig(5), 0x4e4b3a4d5ff65098},
	} {
		if h := mustNew(t, g.c, g.cfg).WorldHash(); h != g.want {
			t.Errorf("%+v: world hash %016x, want %016x", g.cfg, h, g.want)
		}
	}
}

func TestIdleMapsAndSizedConfig(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 4, Width: 40, Height: 40, Seed: 2, PawnsPerMap: 5, ThingsPerMap: 50, IdleMaps: 3})
	for _, s := range w.Stats() {
		if want := map[bool]int{true: 5, false: 0}[s.ID == 0]; s.Pawns != want {
			t.Errorf("map %d: %d pawns, want %d", s.ID, s.Pawns, want)
		}
	}
	for _, bad := range []Config{{IdleMaps: -1}, {Maps: 2, IdleMaps: 3}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := (Config{Maps: 2, IdleMaps: 2}).Validate(); err != nil {
		t.Errorf("all maps idle: %v", err)
	}

	for _, raw := range []int64{0, 1 << 10, 300 << 10, 64 << 20, 512 << 20, 1 << 40} {
		cfg := SizedConfig(raw, 1)
		if err := cfg.Validate(); err != nil {
			t.Errorf("SizedConfig(%d) = %+v: %v", raw, cfg, err)
		}
	}
	if cfg := SizedConfig(64<<20, 1); cfg.Maps != 16 || cfg.Width != 1973 || cfg.ThingsPerMap != 25000 {
		t.Errorf("SizedConfig(64 MiB) = %+v", cfg)
	}
	// a small target, generated: within 10%
	const target = 300 << 10
	sw := mustNew(t, c, SizedConfig(target, 1))
	world, maps := snapshot(t, sw)
	n := len(world)
	for _, m := range maps {
		n += len(m.Data)
	}
	if n < target*9/10 || n > target*11/10 {
		t.Errorf("SizedConfig(%d) encodes to %d bytes", target, n)
	}
}

// TestLimits builds worlds at the edges of the limits: MaxMaps maps, and
// maps MaxSide wide or high; they step, take commands at far cells and
// round-trip.
func TestLimits(t *testing.T) {
	c := testContent(t)
	for _, cfg := range []Config{
		{Maps: MaxMaps, Width: MinSide, Height: MinSide, Seed: 1, PawnsPerMap: 1, ThingsPerMap: 4},
		{Maps: 2, Width: MaxSide, Height: MinSide + 4, Seed: 2, PawnsPerMap: 8, ThingsPerMap: 300},
		{Maps: 1, Width: MinSide + 4, Height: MaxSide, Seed: 3, PawnsPerMap: 8, ThingsPerMap: 300},
	} {
		w := mustNew(t, c, cfg)
		m := w.maps[len(w.maps)-1]
		x, y := findCell(t, w, m, func(ci int32) bool {
			return m.passable(w.r, ci) && m.cells[ci].buildings == 0 && (ci%m.W > MaxSide/2 || ci/m.W > MaxSide/2 || m.W < 100 && m.H < 100)
		})
		if err := w.Apply(SpawnThing(m.ID, "Wall", int(x), int(y), 1)); err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		if err := w.Apply(MovePawn(m.ID, m.Pawns[0].ID, int(x), int(y))); err == nil {
			t.Fatalf("%+v: move into a wall accepted", cfg)
		}
		run(t, w, newScript(cfg.Seed, c), 100)
		world, maps := snapshot(t, w)
		w2, err := Load(c, world, maps)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		sameState(t, w, w2)
	}
}

// TestRawEstimate: a generated world's encoding is within a tenth of what
// its config estimates, for SizedConfig worlds and the default one (the
// zero config).
func TestRawEstimate(t *testing.T) {
	c := testContent(t)
	for _, cfg := range []Config{SizedConfig(4<<20, 1), SizedConfig(16<<20, 2), {Seed: 3}} {
		w := mustNew(t, c, cfg)
		world, maps := snapshot(t, w)
		raw := int64(len(world))
		for _, m := range maps {
			raw += int64(len(m.Data))
		}
		if est := cfg.RawEstimate(); est < raw*9/10 || est > raw*11/10 {
			t.Errorf("%d maps of %dx%d: estimate %d bytes, encoding %d", cfg.Maps, cfg.Width, cfg.Height, est, raw)
		}
	}
}
