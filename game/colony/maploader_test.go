package colony

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// loadByMaps rebuilds a world with MapLoader, adding the maps in the order
// given by perm (indexes into maps). Each map's bytes are copied into one
// scratch buffer that is overwritten with garbage right after AddMap, so
// a loaded map that kept a reference to its input would show it.
func loadByMaps(tb testing.TB, c *Content, world []byte, maps []lockstep.MapBlob, perm []int) (*World, error) {
	tb.Helper()
	a, err := MapLoader(c).Begin(world, len(maps))
	if err != nil {
		return nil, err
	}
	var buf []byte
	for _, i := range perm {
		buf = append(buf[:0], maps[i].Data...)
		if err := a.AddMap(lockstep.MapBlob{ID: maps[i].ID, Data: buf}); err != nil {
			return nil, err
		}
		for j := range buf {
			buf[j] = byte(j*7 + 0xA5)
		}
	}
	sim, err := a.Finish()
	if err != nil {
		return nil, err
	}
	return sim.(*World), nil
}

// shuffled is a permutation of 0..n-1 drawn from g.
func shuffled(g *rng, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := g.intn(int32(i + 1))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// TestMapLoaderMatchesLoad rebuilds evolved worlds with Load and with
// MapLoader (maps in shuffled order, input overwritten after each AddMap)
// and checks that both copies hash alike, encode alike and evolve alike
// under the same commands, and like the original.
func TestMapLoaderMatchesLoad(t *testing.T) {
	c := testContent(t)
	cfgs := []Config{
		smallConfig(41),
		{Maps: 1, Width: 40, Height: 30, Seed: 42, PawnsPerMap: 8, ThingsPerMap: 100},
		{Maps: 6, Width: 48, Height: 40, Seed: 43, PawnsPerMap: 10, ThingsPerMap: 150, IdleMaps: 2},
		{Maps: 5, Width: 33, Height: 57, Seed: 44, PawnsPerMap: 6, ThingsPerMap: 120},
	}
	g := rng{s: 99}
	for _, cfg := range cfgs {
		orig := mustNew(t, c, cfg)
		so := newScript(cfg.Seed, c)
		run(t, orig, so, 250)
		world, maps := snapshot(t, orig)
		byLoad, err := Load(c, world, maps)
		if err != nil {
			t.Fatal(err)
		}
		perm := shuffled(&g, len(maps))
		byMaps, err := loadByMaps(t, c, world, maps, perm)
		if err != nil {
			t.Fatalf("seed %d, order %v: %v", cfg.Seed, perm, err)
		}
		if byMaps.Tick() != byLoad.Tick() || byMaps.WorldHash() != byLoad.WorldHash() || byMaps.WorldHash() != orig.WorldHash() {
			t.Fatalf("seed %d, order %v: world hash %016x, Load %016x, original %016x",
				cfg.Seed, perm, byMaps.WorldHash(), byLoad.WorldHash(), orig.WorldHash())
		}
		world2, maps2 := snapshot(t, byMaps)
		if !bytes.Equal(world, world2) {
			t.Fatalf("seed %d: world re-encodes differently", cfg.Seed)
		}
		for i := range maps {
			if !bytes.Equal(maps[i].Data, maps2[i].Data) {
				t.Fatalf("seed %d: map %d re-encodes differently", cfg.Seed, i)
			}
		}
		sl, sm := *so, *so
		accepted := 0
		for round := range 6 {
			accepted += run(t, orig, so, 50)
			run(t, byLoad, &sl, 50)
			run(t, byMaps, &sm, 50)
			for _, id := range orig.MapIDs() {
				ho, _ := orig.MapHash(id)
				hl, _ := byLoad.MapHash(id)
				hm, ok := byMaps.MapHash(id)
				if !ok || hm != hl || hm != ho {
					t.Fatalf("seed %d, round %d: map %d: MapLoader %016x, Load %016x, original %016x", cfg.Seed, round, id, hm, hl, ho)
				}
			}
			if byMaps.WorldHash() != byLoad.WorldHash() || byMaps.WorldHash() != orig.WorldHash() {
				t.Fatalf("seed %d, round %d: world diverged", cfg.Seed, round)
			}
		}
		if accepted == 0 {
			t.Fatalf("seed %d: no command accepted during the replay", cfg.Seed)
		}
	}
}

// TestMapLoaderDoesNotRetain adds every map from buffers scribbled over
// after the load (as the join tool's decoder reuses one for every map),
// and compares with a clean load; it also checks that no loaded map's
// terrain lies in the caller's memory, with terrain packed or at one
// byte a cell.
func TestMapLoaderDoesNotRetain(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Content
	}{
		{"default content, packed", testContent(t)},
		{"17 more terrains, one byte a cell", manyTerrains(t)},
	} {
		t.Run(tc.name, func(t *testing.T) { testMapLoaderDoesNotRetain(t, tc.c) })
	}
}

func testMapLoaderDoesNotRetain(t *testing.T, c *Content) {
	w := mustNew(t, c, Config{Maps: 3, Width: 50, Height: 40, Seed: 8, PawnsPerMap: 10, ThingsPerMap: 150})
	run(t, w, newScript(8, c), 300)
	world, maps := snapshot(t, w)
	clean, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	a, err := MapLoader(c).Begin(bytes.Clone(world), len(maps))
	if err != nil {
		t.Fatal(err)
	}
	var inputs [][]byte
	for i := len(maps) - 1; i >= 0; i-- {
		in := bytes.Clone(maps[i].Data)
		if err := a.AddMap(lockstep.MapBlob{ID: maps[i].ID, Data: in}); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, in)
	}
	sim, err := a.Finish()
	if err != nil {
		t.Fatal(err)
	}
	got := sim.(*World)
	for _, m := range got.maps {
		for _, in := range inputs {
			if overlaps(m.Terrain.b, in) {
				t.Fatalf("map %d's terrain lies in an input buffer", m.ID)
			}
		}
	}
	for _, in := range inputs {
		for j := range in {
			in[j] = 0xFF
		}
	}
	if got.WorldHash() != clean.WorldHash() {
		t.Fatal("overwriting the input after AddMap changed the loaded world")
	}
	s1, s2 := newScript(9, c), newScript(9, c)
	run(t, got, s1, 200)
	run(t, clean, s2, 200)
	if got.WorldHash() != clean.WorldHash() {
		t.Fatal("world loaded from overwritten input evolves differently")
	}
}

// overlaps tells whether a and b share memory.
func overlaps(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := &a[0], &b[0]
	for i := range b {
		if &b[i] == a0 {
			return true
		}
	}
	for i := range a {
		if &a[i] == b0 {
			return true
		}
	}
	return false
}

func TestMapLoaderErrors(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(21))
	run(t, w, newScript(21, c), 300)
	world, maps := snapshot(t, w) // two maps
	ow := mustNew(t, handContent(), smallConfig(21))
	oworld, omaps := snapshot(t, ow)
	bad := bytes.Clone(maps[1].Data)
	bad[terrainOffset(t, bad)+3] = 222

	type step struct {
		id   int32
		data []byte
	}
	blob := func(i int) step { return step{maps[i].ID, maps[i].Data} }
	tests := []struct {
		name   string
		world  []byte
		count  int
		adds   []step
		finish bool   // call Finish after the adds
		want   string // error of the first failing call
	}{
		{"ok", world, 2, []step{blob(1), blob(0)}, true, ""},
		{"announced too few", world, 1, nil, false, "2 maps, 1 given"},
		{"announced too many", world, 3, nil, false, "2 maps, 3 given"},
		{"announced negative", world, -1, nil, false, "2 maps, -1 given"},
		{"other content world", oworld, 2, nil, false, "other content"},
		{"truncated world", world[:len(world)-2], 2, nil, false, "truncated"},
		{"trailing world", append(bytes.Clone(world), 0), 2, nil, false, "trailing"},
		{"duplicate", world, 2, []step{blob(0), blob(0)}, false, "map 0 given twice"},
		{"duplicate of a later map", world, 2, []step{blob(1), blob(1), blob(0)}, false, "map 1 given twice"},
		{"unknown ID", world, 2, []step{blob(0), {2, maps[1].Data}}, false, "map ID 2"},
		{"negative ID", world, 2, []step{{-1, maps[0].Data}}, false, "map ID -1"},
		{"too many", world, 2, []step{blob(0), blob(1), blob(1)}, false, "after all 2 maps"},
		{"missing", world, 2, []step{blob(1)}, true, "1 of 2 maps missing (map 0 the first)"},
		{"none", world, 2, nil, true, "2 of 2 maps missing"},
		{"blob of another map", world, 2, []step{{0, maps[1].Data}}, false, "holds map 1"},
		{"other content map", world, 2, []step{{1, omaps[1].Data}}, false, "other content"},
		{"empty map", world, 2, []step{{0, nil}}, false, "map 0: header"},
		{"truncated map", world, 2, []step{{0, maps[0].Data[:len(maps[0].Data)-1]}}, false, "map 0"},
		{"trailing map", world, 2, []step{{0, append(bytes.Clone(maps[0].Data), 0)}}, false, "trailing"},
		{"bad terrain", world, 2, []step{blob(0), {1, bad}}, false, "terrain 222"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := MapLoader(c).Begin(tt.world, tt.count)
			if err == nil {
				for _, s := range tt.adds {
					if err = a.AddMap(lockstep.MapBlob{ID: s.id, Data: s.data}); err != nil {
						break
					}
				}
			}
			if err == nil && tt.finish {
				var sim lockstep.Sim
				sim, err = a.Finish()
				if err == nil && sim.WorldHash() != w.WorldHash() {
					t.Fatal("assembled world hashes differently")
				}
			}
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to mention %q", err, tt.want)
			}
			if a == nil {
				return
			}
			// A failed assembly is spent.
			if err2 := a.AddMap(maps[0]); err2 == nil {
				t.Fatal("AddMap after an error succeeded")
			}
			if sim, err2 := a.Finish(); err2 == nil || sim != nil {
				t.Fatal("Finish after an error succeeded")
			}
		})
	}

	t.Run("finished", func(t *testing.T) {
		a, err := MapLoader(c).Begin(world, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range maps {
			if err := a.AddMap(m); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Finish(); err != nil {
			t.Fatal(err)
		}
		if err := a.AddMap(maps[0]); err == nil || !strings.Contains(err.Error(), "finished") {
			t.Fatalf("AddMap after Finish: %v", err)
		}
		if _, err := a.Finish(); err == nil || !strings.Contains(err.Error(), "finished") {
			t.Fatalf("second Finish: %v", err)
		}
	})
	t.Run("invalid content", func(t *testing.T) {
		if _, err := MapLoader(&Content{}).Begin(world, 2); err == nil {
			t.Fatal("map loader with invalid content began a world")
		}
	})
}

// TestMapLoaderOwned: a map handed over (MapBlob.Owned) keeps its terrain
// in the buffer it came in instead of copying it when the terrain is kept
// at one byte a cell (more than 16 terrain types), packs it to four bits
// a cell and keeps none of the buffer otherwise, and either way the world
// it builds is the same, and evolves the same, as Load's.
func TestMapLoaderOwned(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Content
		nib  bool
	}{
		{"default content, packed", testContent(t), true},
		{"17 more terrains, one byte a cell", manyTerrains(t), false},
	} {
		t.Run(tc.name, func(t *testing.T) { testMapLoaderOwned(t, tc.c, tc.nib) })
	}
}

func testMapLoaderOwned(t *testing.T, c *Content, nib bool) {
	w := mustNew(t, c, Config{Maps: 3, Width: 50, Height: 40, Seed: 8, PawnsPerMap: 10, ThingsPerMap: 150})
	run(t, w, newScript(8, c), 300)
	world, maps := snapshot(t, w)
	clean, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	a, err := MapLoader(c).Begin(bytes.Clone(world), len(maps))
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([][]byte, len(maps))
	for i := range maps {
		inputs[i] = bytes.Clone(maps[i].Data)
		if err := a.AddMap(lockstep.MapBlob{ID: maps[i].ID, Data: inputs[i], Owned: true}); err != nil {
			t.Fatal(err)
		}
	}
	sim, err := a.Finish()
	if err != nil {
		t.Fatal(err)
	}
	got := sim.(*World)
	for i, m := range got.maps {
		switch {
		case m.Terrain.nib != nib:
			t.Fatalf("map %d: terrain packed %v, want %v", m.ID, m.Terrain.nib, nib)
		case nib && overlaps(m.Terrain.b, inputs[i]):
			t.Fatalf("map %d's packed terrain lies in the buffer handed over", m.ID)
		case !nib && !overlaps(m.Terrain.b, inputs[i]):
			t.Fatalf("map %d's terrain was copied out of the buffer handed over", m.ID)
		}
	}
	if got.WorldHash() != clean.WorldHash() {
		t.Fatal("a world loaded from handed-over buffers differs from Load's")
	}
	run(t, got, newScript(9, c), 200)
	run(t, clean, newScript(9, c), 200)
	if got.WorldHash() != clean.WorldHash() {
		t.Fatal("a world loaded from handed-over buffers evolves differently")
	}
}

// TestMapLoaderConcurrent: AddMap runs on several goroutines at once
// (lockstep.ConcurrentMapAssembly), as the join tool calls it, and the
// world is the one Load builds; a map given twice at once fails the
// assembly, whichever call comes second.
func TestMapLoaderConcurrent(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 8, Width: 60, Height: 50, Seed: 4, PawnsPerMap: 6, ThingsPerMap: 120})
	run(t, w, newScript(4, c), 200)
	world, maps := snapshot(t, w)
	clean, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	begin := func() lockstep.MapAssembly {
		a, err := MapLoader(c).Begin(bytes.Clone(world), len(maps))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a.(lockstep.ConcurrentMapAssembly); !ok {
			t.Fatal("colony's assembly does not say its AddMap calls may overlap")
		}
		return a
	}
	a := begin()
	var wg sync.WaitGroup
	for _, m := range maps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.AddMap(lockstep.MapBlob{ID: m.ID, Data: bytes.Clone(m.Data)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	sim, err := a.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if sim.WorldHash() != clean.WorldHash() {
		t.Fatal("a world loaded map by map on several goroutines differs from Load's")
	}

	a = begin()
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = a.AddMap(lockstep.MapBlob{ID: maps[3].ID, Data: bytes.Clone(maps[3].Data)})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("map 3 given twice at once: %v, want \"given twice\"", err)
	}
	if _, err := a.Finish(); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("Finish after a map given twice: %v, want its error", err)
	}
}

// TestLoadedHashIsTheEncodingHash: the hash a map is loaded with is the
// hash of its encoding, and it is not used once the map has changed.
func TestLoadedHashIsTheEncodingHash(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 3, Width: 50, Height: 40, Seed: 2, PawnsPerMap: 5, ThingsPerMap: 100})
	run(t, w, newScript(2, c), 100)
	world, maps := snapshot(t, w)
	got, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got.maps {
		if m.loadedHash.version != m.version || m.loadedHash.hash != got.encodeHash(m) {
			t.Fatalf("map %d loaded with hash %016x at version %d; its encoding hashes to %016x at version %d",
				m.ID, m.loadedHash.hash, m.loadedHash.version, got.encodeHash(m), m.version)
		}
	}
	run(t, got, newScript(3, c), 50)
	run(t, w, newScript(3, c), 50)
	for _, m := range got.maps {
		h, _ := got.MapHash(m.ID)
		if h != got.encodeHash(m) {
			t.Fatalf("map %d: MapHash %016x after 50 ticks, its encoding hashes to %016x", m.ID, h, got.encodeHash(m))
		}
		if want, _ := w.MapHash(m.ID); h != want {
			t.Fatalf("map %d: loaded world's hash %016x after 50 ticks, original's %016x", m.ID, h, want)
		}
	}
}
