package colony

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTerrainLayouts: both layouts read back, at every cell and through
// unpack and chunks from any offset, what setRange wrote from any offset,
// and hash as the plain bytes do.
func TestTerrainLayouts(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name  string
		types int
		n     int
		nib   bool
	}{
		{"packed, even", 16, 1000, true},
		{"packed, odd", 3, 999, true},
		{"packed, one cell", 16, 1, true},
		{"packed, over a chunk", 16, terrainChunk*2 + 3, true},
		{"bytes, odd", 17, 999, false},
		{"bytes, all types", MaxTerrains, 1001, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := make([]byte, tc.n)
			tr := newTerrain(tc.n, tc.types)
			if tr.nib != tc.nib || tr.len() != tc.n {
				t.Fatalf("newTerrain: nib %v, len %d", tr.nib, tr.len())
			}
			for range 50 { // writes of random pieces at random offsets
				c := rnd.IntN(tc.n)
				src := make([]byte, rnd.IntN(tc.n-c+1))
				for i := range src {
					src[i] = byte(rnd.IntN(tc.types))
				}
				copy(want[c:], src)
				tr.setRange(c, src)
			}
			for c := range tc.n {
				if got := tr.at(int32(c)); got != want[c] {
					t.Fatalf("cell %d: %d, want %d", c, got, want[c])
				}
			}
			for range 50 {
				c := rnd.IntN(tc.n)
				k := rnd.IntN(tc.n - c + 1)
				if got := tr.unpack(make([]byte, k), c); !bytes.Equal(got, want[c:c+k]) {
					t.Fatalf("unpack(%d cells from %d) differs", k, c)
				}
			}
			pt := &passTables{}
			for i := range pt.one {
				pt.one[i] = uint64(i % 2) // odd terrains passable
			}
			for i := range pt.two {
				pt.two[i] = pt.one[i&0xf] | pt.one[i>>4]<<1
			}
			for range 50 {
				c := rnd.IntN(tc.n)
				w := rnd.IntN(min(tc.n-c, 300)) + 1
				pb := make([]uint64, (w+63)/64)
				for i := range pb {
					pb[i] = ^uint64(0) // must all be overwritten
				}
				tr.passBits(pb, c, w, pt, make([]byte, w))
				for i := range len(pb) * 64 {
					want := i < w && want[c+i]%2 == 1
					if got := pb[i/64]>>(i%64)&1 == 1; got != want {
						t.Fatalf("passBits(%d cells from %d): cell %d passable %v", w, c, i, got)
					}
				}
			}
			var all []byte
			tr.chunks(func(b []byte) { all = append(all, b...) })
			if !bytes.Equal(all, want) {
				t.Fatal("chunks differ from the cells")
			}
			if p := packTerrain(want, tc.types, false); p.nib != tc.nib || p.hash() != tr.hash() {
				t.Fatal("packTerrain differs from the terrain written cell by cell")
			}
			if cl := tr.clone(); len(tr.b) > 0 && &cl.b[0] == &tr.b[0] {
				t.Fatal("clone shares memory")
			}
		})
	}
}

// TestTerrainLayoutInvisible: the same world with its terrain held in the
// other layout encodes, hashes and evolves bit for bit the same.
func TestTerrainLayoutInvisible(t *testing.T) {
	c := testContent(t)
	cfg := Config{Maps: 2, Width: 67, Height: 41, Seed: 5, PawnsPerMap: 12, ThingsPerMap: 200}
	a, b := mustNew(t, c, cfg), mustNew(t, c, cfg)
	for _, m := range b.maps {
		if !m.Terrain.nib {
			t.Fatal("default content's terrain not packed")
		}
		m.Terrain = packTerrain(m.Terrain.unpack(make([]byte, m.Terrain.len()), 0), MaxTerrains, true)
		m.terrainSum = new(terrainSum)
	}
	same := func(when string) {
		t.Helper()
		if a.WorldHash() != b.WorldHash() {
			t.Fatalf("%s: world hashes differ", when)
		}
		wa, _ := a.MarshalWorld()
		wb, _ := b.MarshalWorld()
		if !bytes.Equal(wa, wb) {
			t.Fatalf("%s: world encodings differ", when)
		}
		for _, id := range a.MapIDs() {
			ma, _ := a.MarshalMap(id)
			mb, _ := b.MarshalMap(id)
			ha, _ := a.MapHash(id)
			hb, _ := b.MapHash(id)
			sa, pa, _ := a.MapDigest(id, nil)
			sb, pb, _ := b.MapDigest(id, nil)
			if !bytes.Equal(ma, mb) || ha != hb || sa != sb || !slices.Equal(pa, pb) || a.MapHashOf(ma) != ha {
				t.Fatalf("%s: map %d encodes or hashes differently", when, id)
			}
		}
	}
	same("at start")
	run(t, a, newScript(3, c), 400)
	run(t, b, newScript(3, c), 400)
	same("after 400 ticks")
}

// BenchmarkTerrainUnpack measures unpacking a packed terrain of 2000x2000
// cells, as encoding and hashing a map do.
func BenchmarkTerrainUnpack(b *testing.B) {
	const n = 2000 * 2000
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i*7/5) % 10
	}
	tr := packTerrain(raw, 10, false)
	b.SetBytes(n)
	for b.Loop() {
		tr.chunks(func([]byte) {})
	}
}

// BenchmarkTerrainPack measures packing 2000x2000 cells, as loading a map
// does.
func BenchmarkTerrainPack(b *testing.B) {
	const n = 2000 * 2000
	raw := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i*7/5) % 10
	}
	b.SetBytes(n)
	for b.Loop() {
		packTerrain(raw, 10, false)
	}
}
