package colony

import (
	"bytes"
	"slices"
	"sync"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// sameState fails unless a and b encode and hash identically.
func sameState(tb testing.TB, a, b *World) {
	tb.Helper()
	wa, ma := snapshot(tb, a)
	wb, mb := snapshot(tb, b)
	if !bytes.Equal(wa, wb) || len(ma) != len(mb) {
		tb.Fatalf("world encodings differ")
	}
	for i := range ma {
		if ma[i].ID != mb[i].ID || !bytes.Equal(ma[i].Data, mb[i].Data) {
			tb.Fatalf("map %d encodings differ", ma[i].ID)
		}
	}
	if a.WorldHash() != b.WorldHash() || a.Tick() != b.Tick() {
		tb.Fatalf("hash or tick differs")
	}
}

// TestCloneEvolvesLikeOriginal clones a busy world at several ticks: the
// clone encodes like the original, has its versions, and under the same
// commands evolves exactly like the original and like a loaded copy.
func TestCloneEvolvesLikeOriginal(t *testing.T) {
	c := testContent(t)
	orig := mustNew(t, c, Config{Maps: 3, Width: 70, Height: 50, Seed: 17, PawnsPerMap: 15, ThingsPerMap: 300, IdleMaps: 1})
	so := newScript(17, c)
	for k := range 6 {
		run(t, orig, so, 131)
		cl := orig.Clone().(*World)
		sameState(t, orig, cl)
		for _, id := range orig.MapIDs() {
			if cl.MapVersion(id) != orig.MapVersion(id) {
				t.Fatalf("clone %d: map %d version %d, original %d", k, id, cl.MapVersion(id), orig.MapVersion(id))
			}
		}
		world, maps := snapshot(t, orig)
		ld, err := Load(c, world, maps)
		if err != nil {
			t.Fatal(err)
		}
		sc, sl := *so, *so
		run(t, orig, so, 60)
		run(t, cl, &sc, 60)
		run(t, ld, &sl, 60)
		sameState(t, orig, cl)
		sameState(t, orig, ld)
	}
}

// TestCloneSharesNoMutableMemory steps a world on one goroutine while
// others read its clone, and the other way round (run with -race). The
// clone keeps encoding what the original encoded at clone time.
func TestCloneSharesNoMutableMemory(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 2, Width: 64, Height: 48, Seed: 23, PawnsPerMap: 12, ThingsPerMap: 200})
	s := newScript(23, c)
	run(t, w, s, 300)

	check := func(name string, steps *World, reads lockstep.Sim) {
		wantWorld, wantMaps := snapshot(t, reads.(*World))
		wantHash := reads.WorldHash()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := *s
			for range 200 {
				for _, cmd := range sc.next(steps) {
					cmd.Tick = steps.Tick()
					_ = steps.Apply(cmd)
				}
				steps.Step()
			}
		}()
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if b, _ := reads.MarshalWorld(); !bytes.Equal(b, wantWorld) {
						t.Errorf("%s: world encoding changed", name)
						return
					}
					for _, m := range wantMaps {
						b, err := reads.MarshalMap(m.ID)
						if err != nil || !bytes.Equal(b, m.Data) {
							t.Errorf("%s: map %d encoding changed", name, m.ID)
							return
						}
					}
					if reads.WorldHash() != wantHash {
						t.Errorf("%s: world hash changed", name)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	// The host's way: step the original, encode the clone elsewhere.
	check("clone read while the original steps", w, w.Clone())
	// And the other way round.
	cl := w.Clone().(*World)
	check("original read while the clone steps", cl, w)
}

// TestMapVersionTracksEncoding records every map's version and encoding
// on every tick of a run with commands: an unchanged version must mean
// unchanged bytes. Maps without pawns keep their version on most ticks.
// With the default content, decay and wild plants change idle maps on
// many of the ticks where plants grow; a content without either shows
// whether growth alone changes the version.
func TestMapVersionTracksEncoding(t *testing.T) {
	still := *testContent(t)
	still.Things = slices.Clone(still.Things)
	for i := range still.Things {
		still.Things[i].Decay, still.Things[i].WildCommonality = 0, 0
	}
	for _, tc := range []struct {
		name string
		c    *Content
	}{{"default", testContent(t)}, {"no decay, no wild plants", &still}} {
		t.Run(tc.name, func(t *testing.T) { checkVersions(t, tc.c) })
	}
}

func checkVersions(t *testing.T, c *Content) {
	w := mustNew(t, c, Config{Maps: 3, Width: 64, Height: 48, Seed: 13, PawnsPerMap: 10, ThingsPerMap: 150, IdleMaps: 2})
	if w.MapVersion(3) != 0 || w.MapVersion(-1) != 0 {
		t.Fatal("unknown map has a version")
	}
	ids := w.MapIDs()
	vers := make([]uint64, len(ids))
	data := make([][]byte, len(ids))
	for i, id := range ids {
		vers[i] = w.MapVersion(id)
		data[i], _ = w.MarshalMap(id)
	}
	s := newScript(13, c)
	const ticks = 1200
	kept, changed := make([]int, len(ids)), make([]int, len(ids))
	for range ticks {
		run(t, w, s, 1)
		for i, id := range ids {
			v := w.MapVersion(id)
			b, _ := w.MarshalMap(id)
			same := bytes.Equal(b, data[i])
			if v == vers[i] {
				kept[i]++
				if !same {
					t.Fatalf("tick %d: map %d changed but kept version %d", w.Tick(), id, v)
				}
			}
			if !same {
				changed[i]++
			}
			vers[i], data[i] = v, b
		}
	}
	t.Logf("of %d ticks, each map kept its version on %v and changed on %v", ticks, kept, changed)
	if kept[0] != 0 {
		t.Errorf("map 0 has pawns but kept its version on %d ticks", kept[0])
	}
	for i := 1; i < len(ids); i++ {
		if kept[i] < ticks*7/10 || changed[i] == 0 {
			t.Errorf("map %d has no pawns: kept its version on %d of %d ticks, changed on %d", ids[i], kept[i], ticks, changed[i])
		}
	}

	// Commands: a refused one keeps the version, an accepted one changes it.
	m := w.maps[1]
	v := w.MapVersion(1)
	if err := w.Apply(SpawnThing(1, "Steel", -1, 0, 1)); err == nil || w.MapVersion(1) != v {
		t.Fatalf("refused command: err %v, version %d -> %d", err, v, w.MapVersion(1))
	}
	x, y := findCell(t, w, m, func(ci int32) bool { return m.passable(w.r, ci) && m.cells[ci].buildings == 0 })
	if err := w.Apply(SpawnThing(1, "Steel", int(x), int(y), 3)); err != nil || w.MapVersion(1) == v {
		t.Fatalf("accepted command: err %v, version %d -> %d", err, v, w.MapVersion(1))
	}
}

// TestMapVersionsNeverRepeat: a clone stepped on its own and a loaded
// copy never report a version the original had or has for another state.
func TestMapVersionsNeverRepeat(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(31))
	run(t, w, newScript(31, c), 50)
	seen := map[uint64]bool{}
	for _, id := range w.MapIDs() {
		seen[w.MapVersion(id)] = true
	}
	cl := w.Clone().(*World)
	world, maps := snapshot(t, w)
	ld, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range w.MapIDs() {
		if seen[ld.MapVersion(id)] {
			t.Fatalf("loaded map %d reuses version %d", id, ld.MapVersion(id))
		}
	}
	w.Step()
	cl.Step()
	if err := cl.Apply(MovePawn(0, cl.maps[0].Pawns[0].ID, int(cl.maps[0].Pawns[0].X), int(cl.maps[0].Pawns[0].Y))); err != nil {
		t.Fatal(err)
	}
	for _, id := range w.MapIDs() {
		vw, vc := w.MapVersion(id), cl.MapVersion(id)
		if vw == vc || seen[vw] || seen[vc] {
			t.Fatalf("map %d: versions %d (original) and %d (clone) after stepping apart", id, vw, vc)
		}
	}
}

// TestCloneTerrainCopyOnWrite: a clone shares the terrain, which nothing
// writes; a map that does write it gets its own copy first.
func TestCloneTerrainCopyOnWrite(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(3))
	cl := w.Clone().(*World)
	want, _ := cl.MarshalMap(0)
	terrain := w.maps[0].ownTerrain()
	terrain.setRange(0, make([]byte, terrain.len()))
	if got, _ := cl.MarshalMap(0); !bytes.Equal(got, want) {
		t.Fatal("writing the original's terrain changed the clone")
	}
	if &cl.maps[0].Terrain.b[0] == &w.maps[0].Terrain.b[0] {
		t.Fatal("terrain still shared after ownTerrain")
	}
}
