package colony

import (
	"bytes"
	"testing"
)

// removeStacks removes every item and food stack from m, as if pawns had
// eaten and hauled them off the map.
func removeStacks(w *World, m *gameMap) {
	m.derive(w.r)
	for i := range m.Pawns {
		m.endJob(w.r, &m.Pawns[i], 0)
		m.Pawns[i].Carry = carried{Def: -1}
	}
	for i := range m.Things {
		if cat := w.r.things[m.Things[i].Def].cat; cat == catItem || cat == catFood {
			m.removeThing(w.r, i)
		}
	}
	m.changed = true
	m.settle()
}

// TestPerturb perturbs each map of a world in turn: the map's hash and
// version change, the world hash changes, nothing else does, the result is
// deterministic and a legal state (it loads and steps like the original).
func TestPerturb(t *testing.T) {
	c := testContent(t)
	base := mustNew(t, c, Config{Maps: 3, Width: 70, Height: 50, Seed: 13, PawnsPerMap: 15, ThingsPerMap: 300, IdleMaps: 1})
	s := newScript(13, c)
	run(t, base, s, 250)
	noStacks := base.clone()
	removeStacks(noStacks, noStacks.maps[1])
	if noStacks.maps[1].perturbTarget(noStacks.r) >= 0 {
		t.Fatal("removeStacks left a stack")
	}

	tests := []struct {
		name  string
		w     *World
		id    int32
		stack bool // tops up a stack, else advances the PRNG
	}{
		{"busy map 0", base, 0, true},
		{"busy map 1", base, 1, true},
		{"idle map", base, 2, true},
		{"map without stacks", noStacks, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.w.clone()
			hashes, vers, whash := mapHashes(w), mapVersions(w), w.WorldHash()
			world, _ := w.MarshalWorld()
			m := w.maps[tt.id]
			i, rngBefore := m.perturbTarget(w.r), m.RNG
			var count int32
			if i >= 0 {
				count = m.Things[i].Count
			}
			mustPerturb(t, w, tt.id)
			switch {
			case tt.stack && (i < 0 || m.Things[i].Count != count+1 || m.RNG != rngBefore):
				t.Fatal("Perturb did not top up the first stack with room")
			case !tt.stack && m.RNG == rngBefore:
				t.Fatal("Perturb did not advance the PRNG")
			}
			if w.WorldHash() == whash {
				t.Fatal("WorldHash did not change")
			}
			if wb, _ := w.MarshalWorld(); !bytes.Equal(wb, world) {
				t.Fatal("world-level state changed")
			}
			hs, vs := mapHashes(w), mapVersions(w)
			for id := range hs {
				same := hs[id] == hashes[id] && vs[id] == vers[id]
				switch {
				case int32(id) == tt.id && (hs[id] == hashes[id] || vs[id] == vers[id]):
					t.Fatalf("map %d: hash or version unchanged", id)
				case int32(id) != tt.id && !same:
					t.Fatalf("perturbing map %d changed map %d", tt.id, id)
				}
			}
			if h, _ := tt.w.MapHash(tt.id); h != hashes[tt.id] {
				t.Fatal("perturbing a clone changed the original")
			}

			// Deterministic: a second clone perturbed the same way matches.
			w2 := tt.w.clone()
			mustPerturb(t, w2, tt.id)
			sameState(t, w, w2)

			// Legal: it loads, and the copy evolves like the perturbed world.
			wb, maps := snapshot(t, w)
			l, err := Load(c, wb, maps)
			if err != nil {
				t.Fatalf("perturbed world does not load: %v", err)
			}
			sameEvolution(t, s, 200, 50, w, l, w2)
		})
	}
}

func TestPerturbUnknownMap(t *testing.T) {
	w := mustNew(t, testContent(t), smallConfig(2))
	h := w.WorldHash()
	for _, id := range []int32{-1, 2, 1 << 30} {
		if err := w.Perturb(id); err == nil {
			t.Fatalf("Perturb(%d) succeeded", id)
		}
	}
	if w.WorldHash() != h {
		t.Fatal("failed Perturb changed the world")
	}
}
