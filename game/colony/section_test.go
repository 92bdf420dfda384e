package colony

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

// checkSections asserts that every map of w has a section whose bytes,
// at the offset it names in the map's encoding, are exactly what the
// content's SectionBuilder makes from its recipe, and hash to its hash.
func checkSections(t *testing.T, c *Content, w *World) {
	t.Helper()
	build := SectionBuilder(c)
	for _, id := range w.MapIDs() {
		sec, ok := w.MapSection(id)
		if !ok {
			t.Fatalf("map %d: no section", id)
		}
		enc, err := w.MarshalMap(id)
		if err != nil {
			t.Fatal(err)
		}
		if sec.Offset+sec.Len > uint64(len(enc)) {
			t.Fatalf("map %d: section %d+%d past an encoding of %d", id, sec.Offset, sec.Len, len(enc))
		}
		want := enc[sec.Offset : sec.Offset+sec.Len]
		if xxhash.Sum64(want) != sec.Hash {
			t.Fatalf("map %d: section hash %016x, its bytes hash to %016x", id, sec.Hash, xxhash.Sum64(want))
		}
		got, err := build(context.Background(), sec.Recipe, sec.Len)
		if err != nil {
			t.Fatalf("map %d: build: %v", id, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("map %d: rebuilt terrain differs from the encoded one", id)
		}
	}
}

func TestSectionRebuildsTerrain(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Content
		cfg  Config
	}{
		{"seed 1 small", testContent(t), smallConfig(1)},
		{"seed 77 odd sides", testContent(t), Config{Maps: 3, Width: 131, Height: 9, Seed: 77, PawnsPerMap: 3, ThingsPerMap: 40}},
		{"seed max square", testContent(t), Config{Maps: 2, Width: 257, Height: 257, Seed: ^uint64(0), PawnsPerMap: 5, ThingsPerMap: 300}},
		{"one byte a cell", manyTerrains(t), smallConfig(9)},
		{"hand content", handContent(), Config{Maps: 4, Width: 40, Height: 72, Seed: 5, PawnsPerMap: 2, ThingsPerMap: 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := mustNew(t, tc.c, tc.cfg)
			run(t, w, newScript(tc.cfg.Seed, tc.c), 50) // things move, IDs grow: the offset may too
			checkSections(t, tc.c, w)
			// A map loaded from a save holds the same terrain and the
			// same recipe.
			world, maps := snapshot(t, w)
			sim, err := Loader(tc.c)(world, maps)
			if err != nil {
				t.Fatal(err)
			}
			checkSections(t, tc.c, sim.(*World))
		})
	}
}

func TestSectionBuilderRefuses(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(3))
	sec, _ := w.MapSection(0)
	build := SectionBuilder(c)
	other := SectionBuilder(handContent())
	if _, err := other(context.Background(), sec.Recipe, sec.Len); err == nil {
		t.Fatal("a recipe of other content was taken")
	}
	if _, err := build(context.Background(), sec.Recipe, sec.Len-1); err == nil {
		t.Fatal("a recipe over maxLen was taken")
	}
	for _, bad := range [][]byte{nil, sec.Recipe[:len(sec.Recipe)-1], append(append([]byte{}, sec.Recipe...), 0),
		append([]byte{2}, sec.Recipe[1:]...)} {
		if _, err := build(context.Background(), bad, 1<<30); err == nil {
			t.Fatalf("recipe %x was taken", bad)
		}
	}
	var _ lockstep.Sectioner = w
}

func FuzzSectionRecipe(f *testing.F) {
	c := handContent()
	w := mustNew(f, c, Config{Maps: 2, Width: 16, Height: 16, Seed: 2, PawnsPerMap: 1, ThingsPerMap: 4})
	sec, _ := w.MapSection(1)
	f.Add(sec.Recipe)
	build := SectionBuilder(c)
	f.Fuzz(func(t *testing.T, recipe []byte) {
		out, err := build(context.Background(), recipe, 1<<16)
		if err == nil && uint64(len(out)) > 1<<16 {
			t.Fatalf("%d bytes past the limit", len(out))
		}
	})
}

// TestSectionBuilderCancelled: a builder whose context is done stops
// between two rows and says so: a joiner that cancels it gets its cores
// back at once, not when the map's terrain is made.
func TestSectionBuilderCancelled(t *testing.T) {
	c := handContent()
	w := mustNew(t, c, Config{Maps: 1, Width: 64, Height: 64, Seed: 2, PawnsPerMap: 1, ThingsPerMap: 4})
	sec, _ := w.MapSection(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if out, err := SectionBuilder(c)(ctx, sec.Recipe, sec.Len); !errors.Is(err, context.Canceled) || out != nil {
		t.Fatalf("cancelled builder: %d bytes, %v; want none and context.Canceled", len(out), err)
	}
	r, err := compile(c)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	terrainRows(newTerrainTable(r), 1, 64, 64, func(int32, []uint8) bool { rows++; return rows < 3 })
	if rows != 3 {
		t.Fatalf("%d rows made; want 3, the row emit refused being the last", rows)
	}
}
