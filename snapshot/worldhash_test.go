package snapshot

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
)

var _ EncodingHasher = (*colony.World)(nil)

// hashCounter is a colony world (a lockstep.WorldHasher) that counts the
// MapHash and WorldHash calls it gets from outside.
type hashCounter struct {
	*colony.World
	maps, worlds atomic.Int64
}

func (h *hashCounter) MapHash(id int32) (uint64, bool) {
	h.maps.Add(1)
	return h.World.MapHash(id)
}

func (h *hashCounter) WorldHash() uint64 {
	h.worlds.Add(1)
	return h.World.WorldHash()
}

// plainSim hides every optional interface of a Sim, WorldHasher and
// MapAppender included: the path that calls WorldHash.
type plainSim struct{ lockstep.Sim }

// TestWorldHashCombinedMatches: on a colony world, through commands and
// steps that change some maps and leave idle ones alone, Build, Cut,
// CutMaps and Header.Verify give the world hash WorldHash gives, combine
// the map hashes (each map hashed once) when they have them all in
// MapIDs order, and fall back to WorldHash otherwise.
func TestWorldHashCombinedMatches(t *testing.T) {
	content, _, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	w, err := colony.New(content, colony.Config{Maps: 6, Width: 40, Height: 32, Seed: 17, PawnsPerMap: 4, ThingsPerMap: 60, IdleMaps: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	var prev *Point
	reused := 0
	for round := range 6 {
		for range 3 {
			if cmd, ok := colony.RandomCommand(w, rng); ok {
				cmd.Tick = w.Tick()
				if err := w.Apply(cmd); err != nil {
					t.Fatal(err)
				}
			}
		}
		w.Step()
		want := w.WorldHash()
		ids := w.MapIDs()

		p := checkBuild(t, w, prev, want)
		reused += p.Reused
		prev = p
		checkCuts(t, w, ids, want)
		checkVerify(t, w, p, want)
		if round == 0 && p.Reused != 0 {
			t.Fatalf("round 0: %d maps reused without a previous point", p.Reused)
		}
	}
	if reused == 0 {
		t.Fatal("no map blob was ever reused: the reuse path went untested")
	}
}

// checkBuild builds a point of a clone of w, reusing prev's blobs, with
// the hashes combined and through WorldHash, and compares both with want.
func checkBuild(t *testing.T, w *colony.World, prev *Point, want uint64) *Point {
	t.Helper()
	opts := BuildOptions{Compression: Compression{Level: 1}, Prev: prev, Versions: Versions(w), Workers: 3}
	src := &hashCounter{World: w.Clone().(*colony.World)}
	p, err := Build(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	ids := w.MapIDs()
	if p.WorldHash != want {
		t.Fatalf("Build: world hash %016x, WorldHash %016x", p.WorldHash, want)
	}
	// A map it encodes is hashed from that encoding (colony is an
	// EncodingHasher); only a reused blob's map is hashed through MapHash.
	if n, m := src.worlds.Load(), src.maps.Load(); n != 0 || m != int64(p.Reused) {
		t.Fatalf("Build: %d WorldHash and %d MapHash calls for %d maps (%d reused), want 0 and one per reused map", n, m, len(ids), p.Reused)
	}
	for i, m := range p.Maps {
		if h, _ := w.MapHash(ids[i]); m.ID != ids[i] || m.StateHash != h {
			t.Fatalf("Build: map %d: id %d state hash %016x, want %016x", ids[i], m.ID, m.StateHash, h)
		}
	}
	plain, err := Build(plainSim{w.Clone()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if plain.WorldHash != want {
		t.Fatalf("Build through WorldHash: %016x, want %016x", plain.WorldHash, want)
	}
	return p
}

// checkCuts compares the world hash of Cut and CutMaps (all maps, a
// subset, all in another order) with want.
func checkCuts(t *testing.T, w *colony.World, ids []int32, want uint64) {
	t.Helper()
	src := &hashCounter{World: w}
	raw, err := Cut(src)
	if err != nil {
		t.Fatal(err)
	}
	if raw.WorldHash != want || src.worlds.Load() != 0 || src.maps.Load() != int64(len(ids)) {
		t.Fatalf("Cut: world hash %016x (want %016x), %d WorldHash and %d MapHash calls for %d maps",
			raw.WorldHash, want, src.worlds.Load(), src.maps.Load(), len(ids))
	}
	p, err := raw.Compress(Compression{Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p.WorldHash != want {
		t.Fatalf("Raw.Compress: world hash %016x, want %016x", p.WorldHash, want)
	}
	reversed := slices.Clone(ids)
	slices.Reverse(reversed)
	for _, sub := range [][]int32{{1, 3}, reversed, {}} {
		src := &hashCounter{World: w}
		raw, err := CutMaps(src, sub)
		if err != nil {
			t.Fatal(err)
		}
		if raw.WorldHash != want || src.worlds.Load() != 1 {
			t.Fatalf("CutMaps %v: world hash %016x (want %016x), %d WorldHash calls, want 1", sub, raw.WorldHash, want, src.worlds.Load())
		}
	}
}

// checkVerify verifies w against a header of p, whole and cut down to
// some maps, and makes sure a wrong world hash is still refused.
func checkVerify(t *testing.T, w *colony.World, p *Point, want uint64) {
	t.Helper()
	h := Header{Tick: p.Tick, WorldHash: p.WorldHash}
	for _, m := range p.Maps {
		h.Maps = append(h.Maps, MapInfo{ID: m.ID, StateHash: m.StateHash})
	}
	src := &hashCounter{World: w}
	if err := h.Verify(src); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if n, m := src.worlds.Load(), src.maps.Load(); n != 0 || m != int64(len(h.Maps)) {
		t.Fatalf("Verify: %d WorldHash and %d MapHash calls for %d maps, want 0 and one per map", n, m, len(h.Maps))
	}
	bad := h
	bad.WorldHash ^= 1
	if err := bad.Verify(w); err == nil {
		t.Fatal("Verify: a wrong world hash accepted")
	}
	sub := h
	sub.Maps = h.Maps[1:3]
	src = &hashCounter{World: w}
	if err := sub.Verify(src); err != nil || src.worlds.Load() != 1 {
		t.Fatalf("Verify with maps %v: %v, %d WorldHash calls, want none and 1", sub.Maps, err, src.worlds.Load())
	}
	if h.WorldHash != want {
		t.Fatalf("header world hash %016x, want %016x", h.WorldHash, want)
	}
}
