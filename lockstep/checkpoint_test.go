package lockstep_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// countSim is a Counters world that counts the MapHash calls it gets from
// outside (WorldHash hashes the maps itself, without counting).
type countSim struct {
	*locksteptest.Counters
	calls map[int32]int
}

func newCountSim(c *locksteptest.Counters) *countSim {
	return &countSim{Counters: c, calls: map[int32]int{}}
}

func (s *countSim) MapHash(id int32) (uint64, bool) {
	s.calls[id]++
	return s.Counters.MapHash(id)
}

// total is the number of MapHash calls so far.
func (s *countSim) total() int {
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

// noVersions hides every optional interface of a Sim, MapVersioner
// included.
type noVersions struct{ lockstep.Sim }

// digestSim is a Counters world that is a MapDigester with two parts.
type digestSim struct{ *locksteptest.Counters }

func (s digestSim) MapDigest(id int32, parts []uint64) (uint64, []uint64, bool) {
	h, ok := s.Counters.MapHash(id)
	if !ok {
		return 0, parts, false
	}
	return h, append(parts, h^0x1111, uint64(s.Value(id))), true
}

func (digestSim) MapPartNames() []string { return []string{"mixed", "value"} }

// busyCounters is a world of n maps that have all been changed (so every
// map has a version other than the initial one) and stepped a little.
func busyCounters(t testing.TB, n int) *locksteptest.Counters {
	t.Helper()
	c := locksteptest.New(n, 8)
	for id := range int32(n) {
		if err := c.Apply(add(id, int8(id+1))); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		c.Step()
	}
	return c
}

// checkCheckpoint compares cp with sim's current hashes.
func checkCheckpoint(t testing.TB, cp lockstep.Checkpoint, sim lockstep.Sim) {
	t.Helper()
	if cp.Tick != sim.Tick() || cp.World != sim.WorldHash() {
		t.Fatalf("checkpoint tick %d world %016x, sim tick %d world %016x", cp.Tick, cp.World, sim.Tick(), sim.WorldHash())
	}
	ids := sim.MapIDs()
	if len(cp.Maps) != len(ids) {
		t.Fatalf("%d maps in the checkpoint, sim has %d", len(cp.Maps), len(ids))
	}
	for i, id := range ids {
		m := cp.Maps[i]
		want, _ := sim.MapHash(id)
		if m.ID != id || m.Hash != want {
			t.Fatalf("checkpoint map %d: id %d hash %016x, want id %d hash %016x", i, m.ID, m.Hash, id, want)
		}
	}
}

func TestHasherTake(t *testing.T) {
	sim := busyCounters(t, 5)
	// Map 3 gets back to 0 and stays idle; map 2 never changes after
	// this.
	if err := sim.Apply(add(3, -4)); err != nil {
		t.Fatal(err)
	}
	for _, useVersions := range []bool{false, true} {
		t.Run(fmt.Sprint("UseVersions=", useVersions), func(t *testing.T) {
			h := lockstep.Hasher{UseVersions: useVersions}
			cp := h.Take(sim)
			checkCheckpoint(t, cp, sim)
			for _, m := range cp.Maps {
				if m.Parts != nil {
					t.Fatalf("map %d has parts %v without a MapDigester", m.ID, m.Parts)
				}
			}
			for i, id := range sim.MapIDs() {
				if got := cp.Map(id); got != &cp.Maps[i] {
					t.Fatalf("Map(%d) = %v, want the checkpoint's entry %d", id, got, i)
				}
			}
			for _, id := range []int32{-1, 5, 99, lockstep.WorldScope, -1 << 31, 1<<31 - 1} {
				if got := cp.Map(id); got != nil {
					t.Fatalf("Map(%d) = %+v for an unknown map", id, got)
				}
			}
			// Map is a pointer into the checkpoint.
			cp.Map(2).Hash = 7
			if cp.Maps[2].Hash != 7 {
				t.Fatal("Map does not return the checkpoint's own entry")
			}
		})
	}

	// The digest parts of a MapDigester come along.
	for _, useVersions := range []bool{false, true} {
		h := lockstep.Hasher{UseVersions: useVersions}
		for range 2 {
			ds := digestSim{sim}
			cp := h.Take(ds)
			checkCheckpoint(t, cp, sim)
			for _, m := range cp.Maps {
				want := []uint64{m.Hash ^ 0x1111, uint64(sim.Value(m.ID))}
				if !slices.Equal(m.Parts, want) {
					t.Fatalf("UseVersions=%v: map %d parts %v, want %v", useVersions, m.ID, m.Parts, want)
				}
			}
		}
	}

	// An empty checkpoint and a world without maps.
	var empty lockstep.Checkpoint
	if empty.Map(0) != nil {
		t.Fatal("Map on an empty checkpoint")
	}
	none := locksteptest.New(0, 0)
	cp := (&lockstep.Hasher{UseVersions: true}).Take(none)
	if cp.Tick != 0 || cp.World != none.WorldHash() || len(cp.Maps) != 0 || cp.Map(0) != nil {
		t.Fatalf("checkpoint of a world without maps: %+v", cp)
	}
}

func TestHasherVersions(t *testing.T) {
	base := busyCounters(t, 3)
	// Maps 1 and 2 back to 0: idle from now on. Map 0 changes every tick.
	for _, c := range []lockstep.Command{add(1, -2), add(2, -3)} {
		if err := base.Apply(c); err != nil {
			t.Fatal(err)
		}
	}
	sim := newCountSim(base)
	h := lockstep.Hasher{UseVersions: true}

	take := func(what string, want map[int32]int) lockstep.Checkpoint {
		t.Helper()
		before := maps.Clone(sim.calls)
		cp := h.Take(sim)
		checkCheckpoint(t, cp, sim.Counters)
		for _, id := range sim.MapIDs() {
			if got := sim.calls[id] - before[id]; got != want[id] {
				t.Fatalf("%s: map %d hashed %d times, want %d", what, id, got, want[id])
			}
		}
		return cp
	}

	first := take("first", map[int32]int{0: 1, 1: 1, 2: 1})
	again := take("unchanged", map[int32]int{})
	if !slices.EqualFunc(first.Maps, again.Maps, func(a, b lockstep.MapCheckpoint) bool { return a.ID == b.ID && a.Hash == b.Hash }) {
		t.Fatal("cached hashes differ")
	}

	sim.Step() // map 0 changes, maps 1 and 2 are idle
	take("after a step", map[int32]int{0: 1})
	take("unchanged after a step", map[int32]int{})

	if err := sim.Perturb(1); err != nil {
		t.Fatal(err)
	}
	cp := take("after Perturb", map[int32]int{1: 1})
	if cp.Maps[1].Hash == first.Maps[1].Hash {
		t.Fatal("Perturb did not change map 1's hash")
	}

	if err := sim.Apply(add(2, 5)); err != nil {
		t.Fatal(err)
	}
	take("after a command", map[int32]int{2: 1})

	// A refused command changes nothing.
	if err := sim.Apply(lockstep.Command{MapID: 1, Kind: 99, Payload: []byte{1}}); err == nil {
		t.Fatal("bad command accepted")
	}
	take("after a refused command", map[int32]int{})

	// ReplaceMap with another state, and with the very same state: a new
	// version either way.
	b, err := locksteptest.New(3, 8).MarshalMap(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.ReplaceMap(lockstep.MapBlob{ID: 1, Data: b}); err != nil {
		t.Fatal(err)
	}
	take("after ReplaceMap", map[int32]int{1: 1})
	same, _ := sim.MarshalMap(1)
	if err := sim.ReplaceMap(lockstep.MapBlob{ID: 1, Data: same}); err != nil {
		t.Fatal(err)
	}
	take("after ReplaceMap with the same state", map[int32]int{1: 1})

	// Several steps: only the busy maps (0, and 2 now) are hashed again.
	for range 4 {
		sim.Step()
		take("stepping", map[int32]int{0: 1, 2: 1})
	}

	// Without UseVersions every map is hashed every time.
	var plain lockstep.Hasher
	for i := range 3 {
		before := sim.total()
		checkCheckpoint(t, plain.Take(sim), sim.Counters)
		if got := sim.total() - before; got != 3 {
			t.Fatalf("take %d without versions: %d MapHash calls, want 3", i, got)
		}
	}
	// With UseVersions on a Sim that has no versions, too.
	hv := lockstep.Hasher{UseVersions: true}
	for i := range 3 {
		before := sim.total()
		checkCheckpoint(t, hv.Take(noVersions{sim}), sim.Counters)
		if got := sim.total() - before; got != 3 {
			t.Fatalf("take %d of a Sim without versions: %d MapHash calls, want 3", i, got)
		}
	}
}

// TestHasherVersionsClone: a Hasher with UseVersions that hashes a clone
// each time (as the host may) still follows the original's changes.
func TestHasherVersionsClone(t *testing.T) {
	orig := busyCounters(t, 4)
	if err := orig.Apply(add(3, -4)); err != nil {
		t.Fatal(err)
	}
	h := lockstep.Hasher{UseVersions: true}
	for i := range 20 {
		switch i % 4 {
		case 0:
			orig.Step()
		case 1:
			if err := orig.Perturb(int32(i % 3)); err != nil {
				t.Fatal(err)
			}
		case 2:
			if err := orig.Apply(add(3, 1)); err != nil {
				t.Fatal(err)
			}
		}
		c := orig.Clone()
		cp := h.Take(c)
		checkCheckpoint(t, cp, orig)
		// Against a Hasher without versions as well.
		var plain lockstep.Hasher
		if want := plain.Take(c); cp.World != want.World ||
			!slices.EqualFunc(cp.Maps, want.Maps, func(a, b lockstep.MapCheckpoint) bool { return a.ID == b.ID && a.Hash == b.Hash }) {
			t.Fatalf("step %d: checkpoint %+v, without versions %+v", i, cp, want)
		}
	}
}

func cpAt(tick uint64) lockstep.Checkpoint {
	return lockstep.Checkpoint{Tick: tick, World: tick*1000 + 1, Maps: []lockstep.MapCheckpoint{{ID: 0, Hash: tick}}}
}

// ringTicks lists the ticks r holds, looking through 0..limit.
func ringTicks(r *lockstep.HashRing, limit uint64) []uint64 {
	var out []uint64
	for tick := range limit + 1 {
		if c := r.Get(tick); c != nil {
			if c.Tick != tick {
				panic(fmt.Sprintf("Get(%d) returned tick %d", tick, c.Tick))
			}
			out = append(out, tick)
		}
	}
	return out
}

func TestHashRing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		window uint64
		add    []uint64
		want   []uint64
	}{
		{"empty", 10, nil, nil},
		{"one", 10, []uint64{5}, []uint64{5}},
		{"tick 0", 10, []uint64{0}, []uint64{0}},
		{"within", 10, []uint64{0, 5, 10}, []uint64{0, 5, 10}},
		{"edge kept", 10, []uint64{3, 13}, []uint64{3, 13}},
		{"just out", 10, []uint64{3, 14}, []uint64{14}},
		{"slides", 10, []uint64{0, 5, 10, 11, 16}, []uint64{10, 11, 16}},
		{"jump drops all", 10, []uint64{1, 2, 3, 50}, []uint64{50}},
		{"every tick", 10, seq(1, 100), seq(90, 100)},
		{"sparse", 60, []uint64{60, 120, 180, 240}, []uint64{180, 240}},
		{"window 0", 0, []uint64{1, 2, 3}, []uint64{3}},
		{"window 1", 1, []uint64{1, 2, 3}, []uint64{2, 3}},
		{"same tick ignored", 10, []uint64{1, 4, 4, 4}, []uint64{1, 4}},
		{"older ignored", 10, []uint64{1, 4, 2, 3, 0}, []uint64{1, 4}},
		{"older than the window ignored", 10, []uint64{20, 5}, []uint64{20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := lockstep.NewHashRing(tc.window)
			for _, tick := range tc.add {
				r.Add(cpAt(tick))
			}
			limit := uint64(0)
			if len(tc.add) > 0 {
				limit = slices.Max(tc.add) + 1
			}
			if got := ringTicks(r, limit); !slices.Equal(got, tc.want) {
				t.Fatalf("holds %v, want %v", got, tc.want)
			}
			oldest, newest := uint64(0), uint64(0)
			if len(tc.want) > 0 {
				oldest, newest = tc.want[0], tc.want[len(tc.want)-1]
			}
			if r.Oldest() != oldest || r.Newest() != newest {
				t.Fatalf("Oldest %d Newest %d, want %d %d", r.Oldest(), r.Newest(), oldest, newest)
			}
			for _, tick := range tc.want {
				if c := r.Get(tick); c.World != tick*1000+1 || len(c.Maps) != 1 || c.Maps[0].Hash != tick {
					t.Fatalf("Get(%d) = %+v", tick, c)
				}
			}
		})
	}

	// The first checkpoint of a tick is the one kept.
	r := lockstep.NewHashRing(10)
	r.Add(cpAt(7))
	dup := cpAt(7)
	dup.World = 99
	r.Add(dup)
	if c := r.Get(7); c == nil || c.World != cpAt(7).World {
		t.Fatalf("Get(7) after a second checkpoint of tick 7: %+v", c)
	}
	if r.Get(6) != nil || r.Get(8) != nil {
		t.Fatal("Get found a tick never added")
	}
}

// TestHashRingFromHasher: the host's loop, a checkpoint after every step
// of a session that pauses (a tick hashed twice).
func TestHashRingFromHasher(t *testing.T) {
	a := lockstep.NewAuthority(busyCounters(t, 3))
	h := lockstep.Hasher{UseVersions: true}
	r := lockstep.NewHashRing(5)
	want := map[uint64]uint64{}
	for i := range 30 {
		if i%7 == 3 {
			a.Submit(add(int32(i%3), 1))
			a.Advance(false)
		} else {
			a.Advance(true)
		}
		cp := h.Take(a.Sim())
		if _, ok := want[cp.Tick]; !ok {
			want[cp.Tick] = cp.World
		}
		r.Add(cp)
	}
	newest := a.Sim().Tick()
	if r.Newest() != newest || r.Oldest() != newest-5 {
		t.Fatalf("ring holds %d..%d, want %d..%d", r.Oldest(), r.Newest(), newest-5, newest)
	}
	for tick := newest - 5; tick <= newest; tick++ {
		if c := r.Get(tick); c == nil || c.World != want[tick] {
			t.Fatalf("Get(%d) = %+v, want world %016x", tick, c, want[tick])
		}
	}
	if r.Get(newest-6) != nil || r.Get(newest+1) != nil {
		t.Fatal("ring holds ticks outside its window")
	}
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
