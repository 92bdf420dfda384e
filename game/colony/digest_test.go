package colony

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

func TestMapPartNames(t *testing.T) {
	w := mustNew(t, testContent(t), smallConfig(1))
	names := w.MapPartNames()
	want := []string{"meta", "terrain", "things", "pawns",
		"things rows q1", "things rows q2", "things rows q3", "things rows q4",
		"pawns rows q1", "pawns rows q2", "pawns rows q3", "pawns rows q4"}
	if !slices.Equal(names, want) {
		t.Fatalf("MapPartNames = %q, want %q", names, want)
	}
	if len(names) > lockstep.MaxMapParts {
		t.Fatalf("%d parts, at most %d allowed", len(names), lockstep.MaxMapParts)
	}
	names[0] = "changed"
	if w.MapPartNames()[0] != "meta" {
		t.Fatal("MapPartNames returns a slice the caller can change under it")
	}
}

// TestMapDigestHash checks MapDigest's whole-map hash against MapHash on
// every map of the default world, and that it appends to parts.
func TestMapDigestHash(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{})
	s := newScript(3, c)
	for round := range 3 {
		run(t, w, s, 150)
		for _, id := range w.MapIDs() {
			prefix := []uint64{1, 2, 3}
			h, out, ok := w.MapDigest(id, prefix)
			want, _ := w.MapHash(id)
			if !ok || h != want {
				t.Fatalf("round %d, map %d: MapDigest %016x %v, MapHash %016x", round, id, h, ok, want)
			}
			if len(out) != 3+len(partNames) || !slices.Equal(out[:3], []uint64{1, 2, 3}) {
				t.Fatalf("map %d: MapDigest returned %d values, want the 3 given and %d parts", id, len(out), len(partNames))
			}
		}
	}
	for _, id := range []int32{-1, int32(len(w.maps)), 1 << 30} {
		prefix := []uint64{7}
		if h, out, ok := w.MapDigest(id, prefix); ok || h != 0 || !slices.Equal(out, prefix) {
			t.Fatalf("unknown map %d: MapDigest = %x, %v, %v", id, h, out, ok)
		}
	}
}

// TestCheckpointWorldHash: a checkpoint builds the world hash from the map
// hashes it took (WorldHashOf) and gets exactly WorldHash, perturbed map
// or not; a wrong map hash gives another world hash.
func TestCheckpointWorldHash(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, Config{})
	run(t, w, newScript(3, c), 120)
	for round := range 2 {
		var h lockstep.Hasher
		cp := h.Take(w)
		if cp.World != w.WorldHash() {
			t.Fatalf("round %d: checkpoint world %016x, WorldHash %016x", round, cp.World, w.WorldHash())
		}
		hs := make([]uint64, len(cp.Maps))
		for i, m := range cp.Maps {
			hs[i] = m.Hash
		}
		hs[1] ^= 1
		if w.WorldHashOf(hs) == w.WorldHash() {
			t.Fatal("a different map hash gave the same world hash")
		}
		if err := w.Perturb(1); err != nil {
			t.Fatal(err)
		}
	}
}

// refParts computes the part hashes of map id from its definition
// (MapPartNames), independently of MapDigest's single pass.
func refParts(tb testing.TB, w *World, id int32) []uint64 {
	tb.Helper()
	m := w.maps[id]
	enc, err := w.MarshalMap(id)
	if err != nil {
		tb.Fatal(err)
	}
	// The same map without pawns ends its encoding with a pawn count of 0:
	// everything before that byte is meta, terrain and things.
	np := *m
	np.Pawns = nil
	e := encoder{}
	w.encodeMap(&np, &e)
	pawnsAt := len(e.buf) - 1
	terrainAt := pawnsAt
	for i := range m.Things {
		if !m.Things[i].dead {
			terrainAt = -1
		}
	}
	// meta: header and six fields, re-encoded here.
	meta := []byte(mapMagic)
	meta = append(meta, codecVersion)
	meta = binary.LittleEndian.AppendUint64(meta, w.r.fingerprint)
	for _, v := range []int32{m.ID, m.W, m.H} {
		meta = binary.AppendUvarint(meta, uint64(v))
	}
	meta = binary.LittleEndian.AppendUint64(meta, m.RNG.s)
	meta = binary.AppendUvarint(meta, uint64(m.NextID))
	meta = binary.AppendUvarint(meta, uint64(m.WildTarget))
	thingsAt := len(meta) + m.Terrain.len()
	if terrainAt >= 0 && terrainAt != thingsAt {
		tb.Fatalf("sections do not add up")
	}
	out := []uint64{
		xxhash.Sum64(enc[:len(meta)]),
		xxhash.Sum64(enc[len(meta):thingsAt]),
		xxhash.Sum64(enc[thingsAt:pawnsAt]),
		xxhash.Sum64(enc[pawnsAt:]),
	}
	if string(enc[:len(meta)]) != string(meta) || string(enc[len(meta):thingsAt]) != string(m.Terrain.unpack(make([]byte, m.Terrain.len()), 0)) {
		tb.Fatalf("map %d: meta or terrain not where expected", id)
	}
	var tq, pq [4][]byte
	for i := range m.Things {
		t := &m.Things[i]
		b := &tq[t.Y*4/m.H]
		for _, v := range []int32{t.ID, t.Def, t.X, t.Y, t.Count, t.HP, t.Growth, int32(t.Flags), t.Reserved} {
			*b = binary.AppendUvarint(*b, uint64(v))
		}
	}
	for i := range m.Pawns {
		p := &m.Pawns[i]
		b := &pq[p.Y*4/m.H]
		for _, v := range []int32{p.ID, p.Kind, p.X, p.Y, p.Hunger, p.Health, p.Cool, p.MoveCool,
			int32(p.Job.Kind), p.Job.Target, p.Job.X, p.Job.Y, p.Job.Progress, p.Ignore, p.Carry.Def + 1} {
			*b = binary.AppendUvarint(*b, uint64(v))
		}
		if p.Carry.Def >= 0 {
			*b = binary.AppendUvarint(*b, uint64(p.Carry.Count))
			*b = binary.AppendUvarint(*b, uint64(p.Carry.HP))
		}
		*b = binary.AppendUvarint(*b, uint64(len(p.Path)))
		for _, c := range p.Path {
			*b = binary.AppendUvarint(*b, uint64(c))
		}
	}
	for _, b := range tq {
		out = append(out, xxhash.Sum64(b))
	}
	for _, b := range pq {
		out = append(out, xxhash.Sum64(b))
	}
	return out
}

// TestMapDigestParts checks every part hash against its definition, on
// busy maps, an idle map and maps with several quarters empty.
func TestMapDigestParts(t *testing.T) {
	c := testContent(t)
	for _, cfg := range []Config{
		{Maps: 3, Width: 70, Height: 50, Seed: 5, PawnsPerMap: 15, ThingsPerMap: 300, IdleMaps: 1},
		{Maps: 1, Width: 16, Height: 12, Seed: 6, PawnsPerMap: 2, ThingsPerMap: 3},
		{Maps: 1, Width: 300, Height: 9, Seed: 7, PawnsPerMap: 30, ThingsPerMap: 500},
	} {
		w := mustNew(t, c, cfg)
		check := func(round int) {
			t.Helper()
			for _, id := range w.MapIDs() {
				h, got, ok := w.MapDigest(id, nil)
				want := refParts(t, w, id)
				if hm, _ := w.MapHash(id); !ok || h != hm {
					t.Fatalf("%dx%d round %d map %d: hash %016x, MapHash %016x", cfg.Width, cfg.Height, round, id, h, hm)
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%dx%d round %d map %d: part %q %016x, want %016x", cfg.Width, cfg.Height, round, id, partNames[i], got[i], want[i])
					}
				}
			}
		}
		s := newScript(cfg.Seed, c)
		for round := range 3 {
			check(round)
			run(t, w, s, 200)
		}
		// A pawn whose record is longer than MapDigest's scratch buffer.
		p := &w.maps[0].Pawns[0]
		p.Path = make([]int32, 300)
		for i := range p.Path {
			p.Path[i] = int32(i * 7 % (cfg.Width * cfg.Height))
		}
		check(3)
	}
}

// changedParts names the parts whose hashes differ.
func changedParts(a, b []uint64) []string {
	var out []string
	for i := range a {
		if a[i] != b[i] {
			out = append(out, partNames[i])
		}
	}
	return out
}

// TestMapDigestLocatesChanges changes a map in known ways and checks that
// exactly the parts covering the change hash differently, on that map
// only.
func TestMapDigestLocatesChanges(t *testing.T) {
	c := testContent(t)
	base := mustNew(t, c, Config{Maps: 2, Seed: 9})
	run(t, base, newScript(9, c), 200)
	quarter := func(m *gameMap, y int32) string { return []string{"q1", "q2", "q3", "q4"}[y*4/m.H] }

	tests := []struct {
		name    string
		id      int32
		prepare func(w *World) // before the first digest
		// change changes map id and returns the parts that must change.
		change func(t *testing.T, w *World, m *gameMap) []string
	}{
		{"perturb a stack", 0, nil, func(t *testing.T, w *World, m *gameMap) []string {
			i := m.perturbTarget(w.r)
			if i < 0 {
				t.Fatal("no stack to perturb")
			}
			want := []string{"things", "things rows " + quarter(m, m.Things[i].Y)}
			mustPerturb(t, w, m.ID)
			return want
		}},
		{"perturb the PRNG", 1, func(w *World) { removeStacks(w, w.maps[1]) }, func(t *testing.T, w *World, m *gameMap) []string {
			mustPerturb(t, w, m.ID)
			return []string{"meta"}
		}},
		{"spawn a stack", 0, nil, func(t *testing.T, w *World, m *gameMap) []string {
			m.derive(w.r)
			for y := m.H - 1; y >= 0; y-- {
				for x := range m.W {
					if _, busy := m.cells[m.idx(x, y)]; busy || !m.passable(w.r, m.idx(x, y)) {
						continue
					}
					cmd := SpawnThing(m.ID, "Steel", int(x), int(y), 5)
					cmd.Tick = w.Tick()
					if err := w.Apply(cmd); err != nil {
						t.Fatal(err)
					}
					return []string{"meta", "things", "things rows " + quarter(m, y)}
				}
			}
			t.Fatal("no free cell")
			return nil
		}},
		{"pawn hunger", 1, nil, func(t *testing.T, w *World, m *gameMap) []string {
			p := &m.Pawns[len(m.Pawns)/2]
			if p.Hunger > 0 {
				p.Hunger--
			} else {
				p.Hunger++
			}
			m.changed = true
			m.settle()
			return []string{"pawns", "pawns rows " + quarter(m, p.Y)}
		}},
		{"nothing", 0, nil, func(t *testing.T, w *World, m *gameMap) []string { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := base.clone()
			if tt.prepare != nil {
				tt.prepare(w)
			}
			before := make([][]uint64, len(w.maps))
			for i := range w.maps {
				_, before[i], _ = w.MapDigest(int32(i), nil)
			}
			want := tt.change(t, w, w.maps[tt.id])
			for i := range w.maps {
				_, after, _ := w.MapDigest(int32(i), nil)
				got := changedParts(before[i], after)
				if int32(i) != tt.id {
					if got != nil {
						t.Fatalf("map %d changed parts %q", i, got)
					}
					continue
				}
				if !slices.Equal(got, want) {
					t.Fatalf("map %d changed parts %q, want %q", i, got, want)
				}
			}
		})
	}
}

// TestMapDigestTerrainShared: the terrain's part hash, worked out once
// and shared by a map and its clones, follows a terrain written through
// ownTerrain on one of them and stays right on the other, and every part
// still matches the hashes of the encoding (refParts).
func TestMapDigestTerrainShared(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(3))
	cl := w.Clone().(*World)
	for _, x := range []*World{w, cl} {
		if _, got, _ := x.MapDigest(0, nil); !slices.Equal(got, refParts(t, x, 0)) {
			t.Fatal("parts differ from the encoding's before any write")
		}
	}
	_, before, _ := cl.MapDigest(0, nil)
	terrain := w.maps[0].ownTerrain()
	cells := terrain.unpack(make([]byte, terrain.len()), 0)
	for i := range cells {
		cells[i] = (cells[i] + 1) % uint8(len(w.r.terrains))
	}
	terrain.setRange(0, cells)
	w.maps[0].changed = true
	w.maps[0].settle()
	_, got, _ := w.MapDigest(0, nil)
	if !slices.Equal(got, refParts(t, w, 0)) {
		t.Fatal("after writing the terrain, the parts differ from the encoding's")
	}
	if got[partTerrain] == before[partTerrain] {
		t.Fatal("terrain part unchanged after writing the terrain")
	}
	if _, after, _ := cl.MapDigest(0, nil); !slices.Equal(after, before) || !slices.Equal(after, refParts(t, cl, 0)) {
		t.Fatal("writing the original's terrain changed the clone's parts")
	}
	// A clone of the written map shares its new hash.
	cl2 := w.Clone().(*World)
	if _, got2, _ := cl2.MapDigest(0, nil); !slices.Equal(got2, got) {
		t.Fatal("a clone of the written map hashes differently")
	}
}
