package colony

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

func TestMapHashIsHashOfEncoding(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 2, Seed: 4})
	run(t, w, newScript(4, c), 300)
	for _, id := range w.MapIDs() {
		b, err := w.MarshalMap(id)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := w.MapHash(id)
		if !ok || h != xxhash.Sum64(b) {
			t.Fatalf("map %d: MapHash %016x, hash of MarshalMap %016x", id, h, xxhash.Sum64(b))
		}
	}
}

// TestRoundTrip loads a snapshot and checks that the copy has the same
// hashes, re-encodes to the same bytes and keeps evolving identically
// under the same commands.
func TestRoundTrip(t *testing.T) {
	c := testContent(t)
	for _, cfg := range []Config{smallConfig(77), {Maps: 1, Seed: 78}} {
		orig := mustNew(t, c, cfg)
		so := newScript(5, c)
		run(t, orig, so, 300)
		world, maps := snapshot(t, orig)
		sim, err := Loader(c)(world, maps)
		if err != nil {
			t.Fatal(err)
		}
		cp := sim.(*World)
		if cp.Tick() != orig.Tick() || cp.WorldHash() != orig.WorldHash() {
			t.Fatalf("loaded: tick %d hash %016x, want tick %d hash %016x", cp.Tick(), cp.WorldHash(), orig.Tick(), orig.WorldHash())
		}
		world2, maps2 := snapshot(t, cp)
		if !bytes.Equal(world, world2) {
			t.Fatal("world re-encodes differently")
		}
		for i := range maps {
			if !bytes.Equal(maps[i].Data, maps2[i].Data) {
				t.Fatalf("map %d re-encodes differently", i)
			}
		}
		// same script state for both from here on
		sc := *so
		accepted := 0
		for round := range 10 {
			accepted += run(t, orig, so, 60)
			run(t, cp, &sc, 60)
			for _, id := range orig.MapIDs() {
				ho, _ := orig.MapHash(id)
				hc, _ := cp.MapHash(id)
				if ho != hc {
					t.Fatalf("round %d: map %d diverged after load", round, id)
				}
			}
		}
		if orig.WorldHash() != cp.WorldHash() {
			t.Fatal("world diverged after load")
		}
		if accepted == 0 {
			t.Fatal("no command was accepted during the replay")
		}
	}
}

// TestLoadMapOrder accepts map blobs in any order.
func TestLoadMapOrder(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(3))
	world, maps := snapshot(t, w)
	maps[0], maps[1] = maps[1], maps[0]
	w2, err := Load(c, world, maps)
	if err != nil || w2.WorldHash() != w.WorldHash() {
		t.Fatalf("reordered blobs: %v", err)
	}
}

func TestLoadRefusals(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(12))
	run(t, w, newScript(12, c), 400)
	world, maps := snapshot(t, w)
	other := handContent()
	ow := mustNew(t, other, smallConfig(12))
	oworld, omaps := snapshot(t, ow)

	cloneMaps := func() []lockstep.MapBlob {
		out := make([]lockstep.MapBlob, len(maps))
		for i, m := range maps {
			out[i] = lockstep.MapBlob{ID: m.ID, Data: bytes.Clone(m.Data)}
		}
		return out
	}
	tests := []struct {
		name  string
		world []byte
		maps  func() []lockstep.MapBlob
		want  string
	}{
		{"other content world", oworld, func() []lockstep.MapBlob { return omaps }, "other content"},
		{"other content map", world, func() []lockstep.MapBlob { m := cloneMaps(); m[1] = omaps[1]; return m }, "other content"},
		{"empty world", nil, cloneMaps, "header"},
		{"bad magic", append([]byte("XXXX"), world[4:]...), cloneMaps, "not a colony"},
		{"bad version", append(append([]byte("LHCW"), 9), world[5:]...), cloneMaps, "version 9"},
		{"truncated world", world[:len(world)-1], cloneMaps, "truncated"},
		{"trailing world", append(bytes.Clone(world), 0), cloneMaps, "trailing"},
		{"missing map", world, func() []lockstep.MapBlob { return cloneMaps()[:1] }, "2 maps, 1 given"},
		{"duplicate map", world, func() []lockstep.MapBlob { m := cloneMaps(); m[1].ID = 0; return m }, "given twice"},
		{"unknown map ID", world, func() []lockstep.MapBlob { m := cloneMaps(); m[1].ID = 7; return m }, "map ID 7"},
		{"wrong map ID", world, func() []lockstep.MapBlob {
			m := cloneMaps()
			m[0], m[1] = m[1], m[0]
			m[0].ID, m[1].ID = 0, 1
			return m
		}, "holds map"},
		{"truncated map", world, func() []lockstep.MapBlob { m := cloneMaps(); m[0].Data = m[0].Data[:len(m[0].Data)/2]; return m }, "map 0"},
		{"trailing map", world, func() []lockstep.MapBlob { m := cloneMaps(); m[1].Data = append(m[1].Data, 1); return m }, "trailing"},
		{"bad terrain", world, func() []lockstep.MapBlob {
			m := cloneMaps()
			m[0].Data[terrainOffset(t, m[0].Data)+5] = 200
			return m
		}, "terrain 200"},
		{"lying thing count", world, func() []lockstep.MapBlob {
			m := cloneMaps()
			off := terrainOffset(t, m[0].Data) + 64*48
			d := append(bytes.Clone(m[0].Data[:off]), binary.AppendUvarint(nil, MaxThingsPerMap)...)
			m[0].Data = append(d, 0, 0, 0)
			return m
		}, "does not fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Loader(c)(tt.world, tt.maps())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := Loader(&Content{})(world, maps); err == nil {
		t.Fatal("loader with invalid content accepted a world")
	}
}

// terrainOffset finds where the terrain starts in a map blob.
func terrainOffset(tb testing.TB, b []byte) int {
	off := 5 + 8
	for range 3 { // id, width, height
		_, n := binary.Uvarint(b[off:])
		off += n
	}
	off += 8      // rng
	for range 2 { // next ID, wild target
		_, n := binary.Uvarint(b[off:])
		off += n
	}
	return off
}

// fuzzSeed is a small evolved world: pawns with jobs, paths and carried
// stacks, so mutations reach every part of the decoder.
func fuzzSeed(tb testing.TB) ([]byte, []lockstep.MapBlob) {
	c := testContent(tb)
	w := mustNew(tb, c, Config{Maps: 2, Width: 16, Height: 12, Seed: 5, PawnsPerMap: 6, ThingsPerMap: 40})
	run(tb, w, newScript(5, c), 500)
	return snapshot(tb, w)
}

// FuzzLoad feeds mutated snapshots to the loader, and map by map to
// MapLoader in both orders: both must accept exactly the same inputs and
// build the same world. Whatever they accept must step without panicking
// and survive another round trip.
func FuzzLoad(f *testing.F) {
	world, maps := fuzzSeed(f)
	f.Add(world, maps[0].Data, maps[1].Data)
	f.Add(world, maps[0].Data, maps[0].Data)
	f.Add(world[:7], maps[1].Data[:40], []byte{})
	c := testContent(f)
	load := Loader(c)
	f.Fuzz(func(t *testing.T, world, m0, m1 []byte) {
		blobs := []lockstep.MapBlob{{ID: 0, Data: m0}, {ID: 1, Data: m1}}
		sim, err := load(world, blobs)
		for _, perm := range [][]int{{0, 1}, {1, 0}} {
			bm, errm := loadByMaps(t, c, world, blobs, perm)
			switch {
			case (err == nil) != (errm == nil):
				t.Fatalf("order %v: Load error %v, MapLoader error %v", perm, err, errm)
			case err == nil && bm.WorldHash() != sim.WorldHash():
				t.Fatalf("order %v: MapLoader built another world than Load", perm)
			}
		}
		if err != nil {
			return
		}
		w := sim.(*World)
		for range 30 {
			w.Step()
		}
		h := w.WorldHash()
		wb, mb := snapshot(t, w)
		w2, err := load(wb, mb)
		if err != nil {
			t.Fatalf("re-load of an accepted world failed: %v", err)
		}
		if w2.WorldHash() != h {
			t.Fatal("re-loaded world hashes differently")
		}
	})
}

// TestRoundTripEverywhere snapshots a busy world at many ticks and checks
// that each copy evolves exactly like the original: any derived state that
// a load would rebuild differently shows up here.
func TestRoundTripEverywhere(t *testing.T) {
	c := testContent(t)
	cfg := Config{Maps: 2, Width: 80, Height: 60, Seed: 31, PawnsPerMap: 25, ThingsPerMap: 400}
	orig := mustNew(t, c, cfg)
	so := newScript(31, c)
	for k := range 25 {
		run(t, orig, so, 97)
		world, maps := snapshot(t, orig)
		cp, err := Load(c, world, maps)
		if err != nil {
			t.Fatal(err)
		}
		sc := *so
		run(t, orig, so, 40)
		run(t, cp, &sc, 40)
		if orig.WorldHash() != cp.WorldHash() {
			t.Fatalf("snapshot %d at tick %d: copy diverged", k, cp.Tick()-40)
		}
	}
}

// TestLoadSmallestEncoding round-trips things and pawns whose fields all
// encode in one byte: the count-versus-bytes checks must not refuse them.
func TestLoadSmallestEncoding(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 1, Width: 8, Height: 8, PawnsPerMap: 3, ThingsPerMap: 1})
	m := w.maps[0]
	m.Things = m.Things[:0]
	m.rebuildDerived(w.r)
	for i := range m.Pawns {
		p := &m.Pawns[i]
		p.Hunger, p.Health, p.Cool, p.MoveCool, p.Job, p.Path = 0, 1, 0, 0, job{}, nil
	}
	world, maps := snapshot(t, w)
	if want := m.Terrain.len() + 2 + 16*len(m.Pawns); len(maps[0].Data) != terrainOffset(t, maps[0].Data)+want {
		t.Fatalf("map blob of %d bytes; expected pawns of 16 bytes", len(maps[0].Data))
	}
	w2, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	if w2.WorldHash() != w.WorldHash() {
		t.Fatal("hash differs")
	}
}

func TestPawnsAndPassable(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(6))
	run(t, w, newScript(6, c), 500)
	ps := w.Pawns(0)
	if len(ps) != len(w.maps[0].Pawns) || len(ps) == 0 {
		t.Fatalf("%d pawns listed", len(ps))
	}
	for i, p := range ps {
		if i > 0 && p.ID <= ps[i-1].ID {
			t.Fatal("pawns not in ID order")
		}
		if p.Kind == "" || p.Job == "" || p.Health <= 0 {
			t.Fatalf("pawn %+v", p)
		}
		if err := w.Apply(MovePawn(0, p.ID, p.X, p.Y)); err != nil && w.Passable(0, p.X, p.Y) {
			t.Fatalf("move to own passable cell refused: %v", err)
		}
	}
	if w.Pawns(9) != nil || w.Passable(9, 0, 0) || w.Passable(0, -1, 0) || w.Passable(0, 64, 0) {
		t.Fatal("unknown map or cell reported")
	}
}

// TestBadTerrain compares the eight-bytes-at-once terrain check with a
// plain loop.
func TestBadTerrain(t *testing.T) {
	g := rng{s: 5}
	for range 3000 {
		n := int(g.between(1, 255))
		b := make([]byte, g.intn(40))
		for i := range b {
			b[i] = byte(g.intn(int32(n)))
		}
		if len(b) > 0 && g.chance(2, 3) {
			b[g.intn(int32(len(b)))] = byte(g.between(int32(n), 255))
		}
		want := -1
		for i, v := range b {
			if int(v) >= n {
				want = i
				break
			}
		}
		if got := badTerrain(b, n); got != want {
			t.Fatalf("n %d, %x: %d, want %d", n, b, got, want)
		}
	}
}
