package colony

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// mapHashes returns MapHash of every map in ID order.
func mapHashes(w *World) []uint64 {
	out := make([]uint64, len(w.maps))
	for i := range w.maps {
		out[i], _ = w.MapHash(int32(i))
	}
	return out
}

// mapVersions returns MapVersion of every map in ID order.
func mapVersions(w *World) []uint64 {
	out := make([]uint64, len(w.maps))
	for i := range w.maps {
		out[i] = w.MapVersion(int32(i))
	}
	return out
}

// sameEvolution steps every world n ticks, each with its own copy of the
// script state s, and fails unless all of them have the same map hashes
// and world hash every `every` ticks.
func sameEvolution(t *testing.T, s *script, n, every int, ws ...*World) {
	t.Helper()
	scripts := make([]script, len(ws))
	for i := range scripts {
		scripts[i] = *s
	}
	for done := 0; done < n; done += every {
		for i, w := range ws {
			run(t, w, &scripts[i], every)
		}
		want, wantAll := mapHashes(ws[0]), ws[0].WorldHash()
		for i, w := range ws[1:] {
			if w.Tick() != ws[0].Tick() {
				t.Fatalf("world %d at tick %d, world 0 at %d", i+1, w.Tick(), ws[0].Tick())
			}
			got := mapHashes(w)
			for id := range want {
				if got[id] != want[id] {
					t.Fatalf("tick %d: world %d: map %d hash %016x, want %016x", w.Tick(), i+1, id, got[id], want[id])
				}
			}
			if h := w.WorldHash(); h != wantAll {
				t.Fatalf("tick %d: world %d: WorldHash %016x, want %016x", w.Tick(), i+1, h, wantAll)
			}
		}
	}
}

// TestReplaceMapRepairs makes world B diverge from world A in several
// ways, repairs every diverged map of B with A's encoding of it at the
// same tick, and checks that B then equals A and evolves exactly like A
// and like a world loaded from A's encodings.
func TestReplaceMapRepairs(t *testing.T) {
	c := testContent(t)
	cfg := Config{Maps: 3, Width: 70, Height: 50, Seed: 23, PawnsPerMap: 15, ThingsPerMap: 300, IdleMaps: 1}
	tests := []struct {
		name string
		// diverge steps a (already 200 ticks in, driven by sa) to tick
		// 300 and returns b at the same tick, differing from a in some maps.
		diverge func(t *testing.T, a *World, sa *script) *World
		// want lists maps that must differ (more may); none means b
		// equals a and map 0 is replaced anyway.
		want []int32
	}{
		{"perturbed clone", func(t *testing.T, a *World, sa *script) *World {
			run(t, a, sa, 100)
			b := a.clone()
			mustPerturb(t, b, 1)
			return b
		}, []int32{1}},
		{"perturbed then stepped", func(t *testing.T, a *World, sa *script) *World {
			run(t, a, sa, 50)
			b := a.clone()
			mustPerturb(t, b, 0)
			sb := *sa
			run(t, a, sa, 50)
			run(t, b, &sb, 50)
			return b
		}, []int32{0}},
		{"idle map perturbed", func(t *testing.T, a *World, sa *script) *World {
			run(t, a, sa, 100)
			b := a.clone()
			mustPerturb(t, b, 2)
			return b
		}, []int32{2}},
		{"earlier clone, other commands", func(t *testing.T, a *World, sa *script) *World {
			b := a.clone()
			run(t, a, sa, 100)
			run(t, b, newScript(99, c), 100)
			return b
		}, []int32{0, 1}},
		{"loaded copy, perturbed", func(t *testing.T, a *World, sa *script) *World {
			run(t, a, sa, 40)
			world, maps := snapshot(t, a)
			b, err := Load(c, world, maps)
			if err != nil {
				t.Fatal(err)
			}
			mustPerturb(t, b, 1)
			mustPerturb(t, b, 2)
			sb := *sa
			run(t, a, sa, 60)
			run(t, b, &sb, 60)
			return b
		}, []int32{1, 2}},
		{"same state", func(t *testing.T, a *World, sa *script) *World {
			run(t, a, sa, 100)
			return a.clone()
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustNew(t, c, cfg)
			sa := newScript(23, c)
			run(t, a, sa, 200)
			b := tt.diverge(t, a, sa)
			if a.Tick() != 300 || b.Tick() != 300 {
				t.Fatalf("ticks %d and %d, want 300", a.Tick(), b.Tick())
			}
			ha, hb := mapHashes(a), mapHashes(b)
			var replace []int32
			for id := range ha {
				if ha[id] != hb[id] {
					replace = append(replace, int32(id))
				}
			}
			for _, id := range tt.want {
				if ha[id] == hb[id] {
					t.Fatalf("map %d did not diverge", id)
				}
			}
			if tt.want == nil {
				if len(replace) != 0 {
					t.Fatalf("maps %v differ", replace)
				}
				replace = []int32{0}
			}
			aHash := a.WorldHash()
			for _, id := range replace {
				data, err := a.MarshalMap(id)
				if err != nil {
					t.Fatal(err)
				}
				before, aVers := mapVersions(b), mapVersions(a)
				if err := b.ReplaceMap(lockstep.MapBlob{ID: id, Data: data}); err != nil {
					t.Fatalf("ReplaceMap(%d): %v", id, err)
				}
				after := mapVersions(b)
				for i := range after {
					switch {
					case int32(i) != id && after[i] != before[i]:
						t.Fatalf("replacing map %d changed map %d's version", id, i)
					case int32(i) == id && (after[i] == before[i] || after[i] == aVers[i] || after[i] == 0):
						t.Fatalf("replaced map %d: version %d, was %d (A has %d)", id, after[i], before[i], aVers[i])
					}
				}
				if h, _ := b.MapHash(id); h != ha[id] {
					t.Fatalf("replaced map %d hashes %016x, want %016x", id, h, ha[id])
				}
			}
			sameState(t, a, b)
			if a.WorldHash() != aHash {
				t.Fatal("replacing B's maps changed A")
			}
			world, maps := snapshot(t, a)
			l, err := Load(c, world, maps)
			if err != nil {
				t.Fatal(err)
			}
			sameEvolution(t, sa, 500, 100, a, b, l)
		})
	}
}

func mustPerturb(tb testing.TB, w *World, id int32) {
	tb.Helper()
	if err := w.Perturb(id); err != nil {
		tb.Fatalf("Perturb(%d): %v", id, err)
	}
}

// TestReplaceMapAnotherSize replaces a map with a map of another size
// (from another world with the same content): the world takes it and
// evolves like a world loaded with it.
func TestReplaceMapAnotherSize(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(41))
	other := mustNew(t, c, Config{Maps: 2, Width: 40, Height: 70, Seed: 42, PawnsPerMap: 5, ThingsPerMap: 90})
	s := newScript(41, c)
	run(t, w, s, 120)
	run(t, other, newScript(42, c), 120)
	data, _ := other.MarshalMap(1)
	if err := w.ReplaceMap(lockstep.MapBlob{ID: 1, Data: data}); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats()[1]; st.Width != 40 || st.Height != 70 {
		t.Fatalf("replaced map is %dx%d", st.Width, st.Height)
	}
	world, maps := snapshot(t, w)
	l, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	sameEvolution(t, s, 300, 100, w, l)
}

// TestReplaceMapRefusals feeds ReplaceMap bad input: each attempt must
// fail and leave the world exactly as it was.
func TestReplaceMapRefusals(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(8))
	run(t, w, newScript(8, c), 150)
	m0, _ := w.MarshalMap(0)
	m1, _ := w.MarshalMap(1)
	ow := mustNew(t, handContent(), smallConfig(8))
	om0, _ := ow.MarshalMap(0)

	// A map whose thing is reserved by a pawn that does not exist:
	// refused only after the whole blob decoded.
	bad := w.clone()
	bad.maps[0].Things[0].Reserved = bad.maps[0].NextID - 1
	for bad.maps[0].findPawn(bad.maps[0].Things[0].Reserved) >= 0 {
		bad.maps[0].Things[0].Reserved--
	}
	reserved, _ := bad.MarshalMap(0)

	g := rng{s: 8}
	garbage := make([]byte, 300)
	for i := range garbage {
		garbage[i] = byte(g.next())
	}
	withHeader := append(bytes.Clone(m0[:13]), garbage...)

	type attempt struct {
		name string
		blob lockstep.MapBlob
		want string
	}
	tests := []attempt{
		{"unknown ID -1", lockstep.MapBlob{ID: -1, Data: m0}, "world has maps 0..1"},
		{"unknown ID 2", lockstep.MapBlob{ID: 2, Data: m0}, "world has maps 0..1"},
		{"unknown ID max", lockstep.MapBlob{ID: 1<<31 - 1, Data: m0}, "world has maps 0..1"},
		{"ID mismatch 0", lockstep.MapBlob{ID: 0, Data: m1}, "blob holds map 1"},
		{"ID mismatch 1", lockstep.MapBlob{ID: 1, Data: m0}, "blob holds map 0"},
		{"nil", lockstep.MapBlob{ID: 0}, "header"},
		{"other content", lockstep.MapBlob{ID: 0, Data: om0}, "other content"},
		{"bad magic", lockstep.MapBlob{ID: 0, Data: append([]byte("LHCW"), m0[4:]...)}, "not a colony"},
		{"bad version", lockstep.MapBlob{ID: 0, Data: append(append([]byte("LHCM"), 7), m0[5:]...)}, "version 7"},
		{"trailing byte", lockstep.MapBlob{ID: 0, Data: append(bytes.Clone(m0), 0)}, "trailing"},
		{"garbage", lockstep.MapBlob{ID: 0, Data: garbage}, "not a colony"},
		{"garbage after header", lockstep.MapBlob{ID: 0, Data: withHeader}, "load map 0"},
		{"reserved by unknown pawn", lockstep.MapBlob{ID: 0, Data: reserved}, "reserved by unknown pawn"},
	}
	for n := range len(m1) {
		tests = append(tests, attempt{"truncated", lockstep.MapBlob{ID: 1, Data: m1[:n]}, "load map 1"})
	}

	hash, vers := w.WorldHash(), mapVersions(w)
	world, _ := w.MarshalWorld()
	for _, tt := range tests {
		err := w.ReplaceMap(tt.blob)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("%s (%d bytes): error %v, want one containing %q", tt.name, len(tt.blob.Data), err, tt.want)
		}
		if w.WorldHash() != hash {
			t.Fatalf("%s (%d bytes): WorldHash changed", tt.name, len(tt.blob.Data))
		}
		got := mapVersions(w)
		for id := range got {
			if got[id] != vers[id] {
				t.Fatalf("%s: map %d's version changed", tt.name, id)
			}
		}
	}
	if w2, _ := w.MarshalWorld(); !bytes.Equal(w2, world) {
		t.Fatal("world-level encoding changed")
	}
	// And the world still takes a good blob.
	if err := w.ReplaceMap(lockstep.MapBlob{ID: 1, Data: m1}); err != nil {
		t.Fatal(err)
	}
	if w.WorldHash() != hash {
		t.Fatal("replacing a map with its own encoding changed the world's hash")
	}
}

// FuzzReplaceMap replaces map id of a small world with arbitrary bytes.
// It must never panic; a refusal leaves the world unchanged; an accepted
// map leaves the world-level state and the other map alone, and the world
// then equals, and evolves like, a world loaded with that map.
func FuzzReplaceMap(f *testing.F) {
	world, maps := fuzzSeed(f)
	f.Add(int32(0), maps[0].Data)
	f.Add(int32(1), maps[1].Data)
	f.Add(int32(0), maps[1].Data)
	f.Add(int32(1), maps[1].Data[:60])
	f.Add(int32(2), maps[0].Data)
	f.Add(int32(-1), []byte("LHCM"))
	c := testContent(f)
	base, err := Load(c, world, maps)
	if err != nil {
		f.Fatal(err)
	}
	run(f, base, newScript(6, c), 20) // derived data built and changed since the load
	baseWorld, baseMaps := snapshot(f, base)
	baseHashes, baseVers, baseHash := mapHashes(base), mapVersions(base), base.WorldHash()
	f.Fuzz(func(t *testing.T, id int32, data []byte) {
		w := base.clone()
		err := w.ReplaceMap(lockstep.MapBlob{ID: id, Data: data})
		if err != nil {
			if w.WorldHash() != baseHash {
				t.Fatalf("refused (%v), but the world changed", err)
			}
			got := mapVersions(w)
			for i := range got {
				if got[i] != baseVers[i] {
					t.Fatalf("refused (%v), but map %d's version changed", err, i)
				}
			}
			return
		}
		if wb, _ := w.MarshalWorld(); !bytes.Equal(wb, baseWorld) {
			t.Fatal("world-level state changed")
		}
		hs, vs := mapHashes(w), mapVersions(w)
		for i := range hs {
			if int32(i) != id && (hs[i] != baseHashes[i] || vs[i] != baseVers[i]) {
				t.Fatalf("replacing map %d changed map %d", id, i)
			}
		}
		if vs[id] == baseVers[id] {
			t.Fatal("replaced map kept its version")
		}
		lm := make([]lockstep.MapBlob, len(baseMaps))
		copy(lm, baseMaps)
		lm[id] = lockstep.MapBlob{ID: id, Data: data}
		l, err := Load(c, baseWorld, lm)
		if err != nil {
			t.Fatalf("ReplaceMap accepted a map that Load refuses: %v", err)
		}
		sameState(t, w, l)
		s := newScript(7, c)
		sameEvolution(t, s, 30, 10, w, l)
	})
}
