package lockstep_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

func TestAuthorityApplied(t *testing.T) {
	sim := locksteptest.New(3, 8)
	a := lockstep.NewAuthority(sim)
	check := func(what string, want uint32) {
		t.Helper()
		if got := a.Applied(); got != want {
			t.Fatalf("%s: Applied() = %d, want %d (tick %d)", what, got, want, sim.Tick())
		}
	}
	// next checks that the next accepted command is stamped at exactly the
	// point Applied names.
	next := func(res lockstep.TickResult, before uint32) {
		t.Helper()
		if len(res.Accepted) == 0 || res.Accepted[0].Tick != res.Tick || res.Accepted[0].Seq != before {
			t.Fatalf("first accepted %d/%d, Applied was %d", res.Accepted[0].Tick, res.Accepted[0].Seq, before)
		}
	}

	check("new", 0)
	a.Advance(false)
	check("empty Advance(false)", 0)

	// A stepped tick with commands: back to 0 after the step.
	a.Submit(add(0, 1))
	a.Submit(add(1, 1))
	check("submitted, not advanced", 0)
	a.Advance(true)
	check("after a step", 0)

	// Paused at tick 1: batches accumulate, refusals do not count.
	a.Submit(add(0, 1))
	a.Submit(add(9, 1)) // no such map
	a.Submit(add(2, 1))
	res := a.Advance(false)
	next(res, 0)
	check("first paused batch", 2)
	a.Submit(add(1, -1))
	check("submitted during pause", 2)
	res = a.Advance(false)
	next(res, 2)
	check("second paused batch", 3)
	a.Advance(false)
	check("empty paused advance", 3)
	a.Submit(add(8, 1))
	a.Submit(lockstep.Command{MapID: 0, Kind: 99, Payload: []byte{1}})
	if res := a.Advance(false); len(res.Rejected) != 2 {
		t.Fatalf("refusals: %+v", res)
	}
	check("batch of refusals only", 3)
	a.Submit(lockstep.SetSpeed(0)) // engine commands count as well
	res = a.Advance(false)
	next(res, 3)
	check("engine command", 4)
	a.Submit(add(0, 2))
	res = a.Advance(true)
	next(res, 4)
	check("stepped after the pause", 0)
	if res.Accepted[0].Seq != 4 || res.Tick != 1 {
		t.Fatalf("last batch of tick 1: %+v", res.Accepted)
	}

	// Empty ticks stay 0; a new tick counts from 0 again.
	a.Advance(true)
	a.Advance(true)
	check("empty ticks", 0)
	a.Submit(add(2, 1))
	res = a.Advance(false)
	next(res, 0)
	check("new tick", 1)
	a.Advance(true)
	check("stepped", 0)
}

// cut is the host's state at a point (tick, n): after the first n commands
// stamped tick.
type cut struct {
	tick      uint64
	n         uint32
	applied   int // commands applied since the start
	world     []byte
	maps      []lockstep.MapBlob
	worldHash uint64
	mapHashes []uint64
}

func (c cut) String() string { return fmt.Sprintf("%d/%d", c.tick, c.n) }

func takeCut(t testing.TB, a *lockstep.Authority, applied int) cut {
	t.Helper()
	s := a.Sim()
	c := cut{tick: s.Tick(), n: a.Applied(), applied: applied, worldHash: s.WorldHash()}
	var err error
	if c.world, err = s.MarshalWorld(); err != nil {
		t.Fatal(err)
	}
	for _, id := range s.MapIDs() {
		b, err := s.MarshalMap(id)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := s.MapHash(id)
		c.maps = append(c.maps, lockstep.MapBlob{ID: id, Data: b})
		c.mapHashes = append(c.mapHashes, h)
	}
	return c
}

// diff reports how s differs from the cut, or "".
func (c cut) diff(s lockstep.Sim) string {
	if s.Tick() != c.tick {
		return fmt.Sprintf("at tick %d, cut at %d", s.Tick(), c.tick)
	}
	for i, id := range s.MapIDs() {
		if i >= len(c.mapHashes) {
			return fmt.Sprintf("map %d not in the cut", id)
		}
		if h, _ := s.MapHash(id); h != c.mapHashes[i] {
			return fmt.Sprintf("map %d hash %016x, cut %016x", id, h, c.mapHashes[i])
		}
	}
	if h := s.WorldHash(); h != c.worldHash {
		return fmt.Sprintf("world hash %016x, cut %016x", h, c.worldHash)
	}
	return ""
}

type advance struct {
	cmds []lockstep.Command
	step bool
}

// holdScript covers the cut points that matter: a tick without commands,
// a paused tick with several batches (cuts before, between and after
// them), a tick whose commands were all applied before its step, refused
// commands that take no sequence number, and the final tick.
func holdScript() []advance {
	bad := lockstep.Command{MapID: 0, Kind: 99, Payload: []byte{1}}
	return []advance{
		// tick 0
		{[]lockstep.Command{add(0, 5), add(1, -2)}, true},
		// tick 1: no commands
		{nil, true},
		// tick 2
		{[]lockstep.Command{add(2, 3), add(9, 1), add(1, 1)}, true},
		// tick 3, paused
		{[]lockstep.Command{lockstep.SetSpeed(0), add(0, 1)}, false},
		// tick 3
		{[]lockstep.Command{add(1, 4), bad, add(2, -1), add(7, 1)}, false},
		// tick 3
		{[]lockstep.Command{lockstep.SetSpeed(1), add(0, -3), add(1, 2)}, true},
		// tick 4
		{[]lockstep.Command{add(1, -7)}, false},
		// tick 4: all applied
		{nil, true},
		// tick 5
		{nil, true},
		// tick 6: refused only
		{[]lockstep.Command{add(8, 1)}, false},
		// tick 6
		{[]lockstep.Command{add(2, 2), add(0, 1)}, true},
		// tick 7
		{nil, true},
		// tick 8
		{[]lockstep.Command{add(1, 1), add(1, 1), add(1, 1), add(2, -5)}, true},
		// tick 9
		{[]lockstep.Command{lockstep.SetSpeed(0)}, false},
		// tick 9
		{[]lockstep.Command{lockstep.SetSpeed(2), add(0, 9)}, true},
		// tick 10
		{nil, true},
	}
}

// hostRun plays holdScript on an Authority and returns the start state,
// the results of every Advance, the cut before each Advance and the final
// cut.
type hostRun struct {
	start   lockstep.Sim
	results []lockstep.TickResult
	cuts    []cut // cuts[i] is the state before advance i
	final   cut
	cmds    []lockstep.Command
}

func playHost(t testing.TB) *hostRun {
	t.Helper()
	sim := locksteptest.New(3, 16)
	a := lockstep.NewAuthority(sim)
	r := &hostRun{start: clone(t, sim)}
	applied := 0
	for i, adv := range holdScript() {
		r.cuts = append(r.cuts, takeCut(t, a, applied))
		before := a.Applied()
		for _, c := range adv.cmds {
			a.Submit(c)
		}
		res := a.Advance(adv.step)
		for k, c := range res.Accepted {
			if c.Seq != before+uint32(k) {
				t.Fatalf("advance %d: command %d stamped %d/%d, Applied was %d", i, k, c.Tick, c.Seq, before)
			}
		}
		applied += len(res.Accepted)
		want := before + uint32(len(res.Accepted))
		if adv.step {
			want = 0
		}
		if a.Applied() != want {
			t.Fatalf("advance %d: Applied %d, want %d", i, a.Applied(), want)
		}
		r.results = append(r.results, res)
		r.cmds = append(r.cmds, res.Accepted...)
	}
	r.final = takeCut(t, a, applied)
	return r
}

// distinctCuts is every cut point of the run once, the final one included.
func (r *hostRun) distinctCuts() []cut {
	var out []cut
	for _, c := range append(slices.Clone(r.cuts), r.final) {
		if len(out) > 0 && out[len(out)-1].tick == c.tick && out[len(out)-1].n == c.n {
			continue
		}
		out = append(out, c)
	}
	return out
}

func TestHoldScriptCoverage(t *testing.T) {
	r := playHost(t)
	cuts := r.distinctCuts()
	var midTick, zeroAtCommands, noCommands, full bool
	perTick := map[uint64]uint32{}
	for _, c := range r.cmds {
		perTick[c.Tick]++
	}
	for _, c := range cuts {
		switch {
		case c.n > 0 && c.n < perTick[c.tick]:
			midTick = true
		case c.n == 0 && perTick[c.tick] > 0:
			zeroAtCommands = true
		case perTick[c.tick] == 0:
			noCommands = true
		}
		if c.n > 0 && c.n == perTick[c.tick] {
			full = true
		}
	}
	if !midTick || !zeroAtCommands || !noCommands || !full {
		t.Fatalf("cuts %v: mid-tick %v, n=0 at a tick with commands %v, tick without commands %v, after all of a tick %v",
			cuts, midTick, zeroAtCommands, noCommands, full)
	}
}

// newHoldFollower is a follower from the host's start state with every
// command and the final grant.
func newHoldFollower(t testing.TB, r *hostRun) *lockstep.Follower {
	t.Helper()
	return newHoldFollowerAt(t, r, r.final.tick)
}

// newHoldFollowerAt is newHoldFollower with a grant of its own.
func newHoldFollowerAt(t testing.TB, r *hostRun, grant uint64) *lockstep.Follower {
	t.Helper()
	cmds := slices.Clone(r.cmds)
	slices.Reverse(cmds) // any grouping: Add sorts
	f, err := lockstep.NewFollower(clone(t, r.start), cmds)
	if err != nil {
		t.Fatal(err)
	}
	f.Grant(grant)
	return f
}

// runToEnd releases f and runs it to the host's final state.
func runToEnd(t testing.TB, f *lockstep.Follower, r *hostRun) {
	t.Helper()
	f.Release()
	if f.Held() {
		t.Fatal("Held after Release")
	}
	for f.Behind() > 0 {
		if _, err := f.Run(1000); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Run(0); err != nil {
		t.Fatal(err)
	}
}

func TestFollowerHoldAtCuts(t *testing.T) {
	r := playHost(t)
	for _, c := range r.distinctCuts() {
		t.Run(c.String(), func(t *testing.T) {
			f := newHoldFollowerAt(t, r, 0)
			applied := 0
			f.OnApply(func(lockstep.Command) { applied++ })
			var stepped []uint64
			f.OnStep(func(s lockstep.Sim) { stepped = append(stepped, s.Tick()) })

			if err := f.HoldAt(c.tick, c.n); err != nil {
				t.Fatal(err)
			}
			n := 0
			// Short of the hold tick (a lower grant) it is not held.
			if c.tick > 0 {
				f.Grant(c.tick - 1)
				k, err := f.Run(1000)
				if err != nil {
					t.Fatal(err)
				}
				if f.Held() || f.Sim().Tick() != c.tick-1 {
					t.Fatalf("at the grant %d short of the hold: held %v, tick %d", c.tick-1, f.Held(), f.Sim().Tick())
				}
				n += k
			}
			f.Grant(r.final.tick)
			k, err := f.Run(1000)
			if err != nil {
				t.Fatal(err)
			}
			n += k
			if !f.Held() {
				t.Fatalf("not held after Run: tick %d", f.Sim().Tick())
			}
			if n != int(c.tick) || len(stepped) != int(c.tick) {
				t.Fatalf("Run stepped %d ticks (%v), want %d", n, stepped, c.tick)
			}
			if d := c.diff(f.Sim()); d != "" {
				t.Fatalf("held state differs from the host's cut: %s", d)
			}
			if applied != c.applied {
				t.Fatalf("applied %d commands at the hold, host %d at the cut", applied, c.applied)
			}
			// Held: more Runs do nothing.
			for _, max := range []int{0, 1, 1000} {
				if n, err := f.Run(max); n != 0 || err != nil || !f.Held() || applied != c.applied {
					t.Fatalf("Run(%d) while held: %d %v, held %v, applied %d", max, n, err, f.Held(), applied)
				}
			}
			if d := c.diff(f.Sim()); d != "" {
				t.Fatalf("held state changed: %s", d)
			}

			runToEnd(t, f, r)
			if d := r.final.diff(f.Sim()); d != "" {
				t.Fatalf("after Release: %s", d)
			}
			if applied != r.final.applied {
				t.Fatalf("applied %d commands in all, host %d", applied, r.final.applied)
			}
		})
	}
}

// TestFollowerHoldAtStreamed calls HoldAt in stream order, as the join
// tool does: the follower gets each Advance's commands and grant and runs
// a few ticks at a time, so it is usually behind the host when the repair
// is announced.
func TestFollowerHoldAtStreamed(t *testing.T) {
	r := playHost(t)
	for i, c := range r.cuts {
		for _, maxes := range [][]int{{1}, {0, 2, 1}, {1000}} {
			t.Run(fmt.Sprintf("%s/advance%d/max%v", c, i, maxes), func(t *testing.T) {
				f, err := lockstep.NewFollower(clone(t, r.start), nil)
				if err != nil {
					t.Fatal(err)
				}
				held := 0
				checkHeld := func() {
					t.Helper()
					if !f.Held() {
						return
					}
					held++
					if d := c.diff(f.Sim()); d != "" {
						t.Fatalf("held state differs from the host's cut: %s", d)
					}
					f.Release()
				}
				k := 0
				for j, res := range r.results {
					if j == i {
						if err := f.HoldAt(c.tick, c.n); err != nil {
							t.Fatal(err)
						}
						checkHeld()
					}
					if err := f.Add(res.Accepted...); err != nil {
						t.Fatal(err)
					}
					f.Grant(res.Granted)
					if _, err := f.Run(maxes[k%len(maxes)]); err != nil {
						t.Fatal(err)
					}
					k++
					checkHeld()
				}
				for range 100 {
					if _, err := f.Run(1); err != nil {
						t.Fatal(err)
					}
					checkHeld()
				}
				if held != 1 {
					t.Fatalf("held %d times, want once", held)
				}
				if d := r.final.diff(f.Sim()); d != "" {
					t.Fatalf("at the end: %s", d)
				}
			})
		}
	}
}

func TestFollowerHoldRepair(t *testing.T) {
	r := playHost(t)
	const bad = 1 // the map the follower gets wrong
	for _, c := range r.distinctCuts() {
		t.Run(c.String(), func(t *testing.T) {
			corrupt := func() *lockstep.Follower {
				f := newHoldFollower(t, r)
				if err := f.Sim().(*locksteptest.Counters).Perturb(bad); err != nil {
					t.Fatal(err)
				}
				if err := f.HoldAt(c.tick, c.n); err != nil {
					t.Fatal(err)
				}
				if _, err := f.Run(1000); err != nil {
					t.Fatal(err)
				}
				if !f.Held() {
					t.Fatalf("not held at tick %d", f.Sim().Tick())
				}
				if d := c.diff(f.Sim()); d == "" {
					t.Fatal("the perturbed follower matches the host at the cut")
				}
				return f
			}

			t.Run("unrepaired", func(t *testing.T) {
				f := corrupt()
				runToEnd(t, f, r)
				if d := r.final.diff(f.Sim()); d == "" {
					t.Fatal("an unrepaired follower ends equal to the host: the test proves nothing")
				}
			})

			t.Run("ReplaceMap", func(t *testing.T) {
				f := corrupt()
				if err := f.Sim().(lockstep.MapReplacer).ReplaceMap(c.maps[bad]); err != nil {
					t.Fatal(err)
				}
				if d := c.diff(f.Sim()); d != "" {
					t.Fatalf("after ReplaceMap: %s", d)
				}
				runToEnd(t, f, r)
				if d := r.final.diff(f.Sim()); d != "" {
					t.Fatalf("at the end: %s", d)
				}
			})

			t.Run("ReplaceSim", func(t *testing.T) {
				f := corrupt()
				old := f.Sim()
				loaded, err := locksteptest.Load(c.world, c.maps)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.ReplaceSim(loaded); err != nil {
					t.Fatal(err)
				}
				if f.Sim() != loaded || !f.Held() {
					t.Fatalf("after ReplaceSim: sim swapped %v, held %v", f.Sim() == loaded, f.Held())
				}
				if d := c.diff(f.Sim()); d != "" {
					t.Fatalf("after ReplaceSim: %s", d)
				}
				oldHash := old.WorldHash()
				runToEnd(t, f, r)
				if f.Sim() != loaded {
					t.Fatal("the follower dropped the replacement")
				}
				if d := r.final.diff(f.Sim()); d != "" {
					t.Fatalf("at the end: %s", d)
				}
				if old.WorldHash() != oldHash || old.Tick() != c.tick {
					t.Fatal("the replaced sim was still used")
				}
			})

			// The repair must go in exactly at its point: the state of a
			// later point at the same tick (commands the follower applies
			// again after Release) does not end equal.
			var later *cut
			for _, o := range r.distinctCuts() {
				if o.tick == c.tick && o.n > c.n && o.worldHash != c.worldHash {
					later = &o
					break
				}
			}
			if later == nil {
				return
			}
			t.Run("wrong point", func(t *testing.T) {
				f := corrupt()
				loaded, err := locksteptest.Load(later.world, later.maps)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.ReplaceSim(loaded); err != nil {
					t.Fatal(err)
				}
				runToEnd(t, f, r)
				if d := r.final.diff(f.Sim()); d == "" {
					t.Fatal("a repair from a later point ends equal to the host")
				}
			})
		})
	}
}

func TestFollowerHoldAtPast(t *testing.T) {
	// Commands at tick 5 (three) and 7 (one).
	var cmds []lockstep.Command
	for i, tick := range []uint64{5, 5, 5, 7} {
		c := add(0, int8(i+1))
		c.Tick = tick
		if tick == 5 {
			c.Seq = uint32(i)
		}
		cmds = append(cmds, c)
	}
	newF := func(t *testing.T, grant uint64) *lockstep.Follower {
		f, err := lockstep.NewFollower(locksteptest.New(1, 4), cmds)
		if err != nil {
			t.Fatal(err)
		}
		f.Grant(grant)
		if _, err := f.Run(1000); err != nil {
			t.Fatal(err)
		}
		if f.Sim().Tick() != grant {
			t.Fatalf("at tick %d, want %d", f.Sim().Tick(), grant)
		}
		return f
	}
	for _, tc := range []struct {
		name  string
		grant uint64 // the follower runs to here first, applying all due
		tick  uint64
		n     uint32
		past  bool
	}{
		{"tick passed", 6, 5, 0, true},
		{"tick passed, n large", 6, 5, 100, true},
		{"long passed", 6, 0, 0, true},
		{"current tick, more applied", 5, 5, 2, true},
		{"current tick, none allowed", 5, 5, 0, true},
		{"current tick, exactly applied", 5, 5, 3, false},
		{"current tick, more than sent", 5, 5, 4, false},
		{"current tick without commands", 6, 6, 0, false},
		{"next tick", 6, 7, 0, false},
		{"future", 2, 9, 0, false},
		{"start", 0, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newF(t, tc.grant)
			hash := f.Sim().WorldHash()
			err := f.HoldAt(tc.tick, tc.n)
			if tc.past {
				if !errors.Is(err, lockstep.ErrPastHold) {
					t.Fatalf("HoldAt(%d, %d) at tick %d: %v, want ErrPastHold", tc.tick, tc.n, f.Sim().Tick(), err)
				}
				// A refused hold point does not hold anything.
				f.Grant(10)
				if _, err := f.Run(1000); err != nil {
					t.Fatal(err)
				}
				if f.Held() || f.Sim().Tick() != 10 {
					t.Fatalf("after a refused HoldAt: held %v at tick %d", f.Held(), f.Sim().Tick())
				}
				return
			}
			if err != nil {
				t.Fatalf("HoldAt(%d, %d) at tick %d: %v", tc.tick, tc.n, f.Sim().Tick(), err)
			}
			if f.Sim().WorldHash() != hash {
				t.Fatal("HoldAt changed the state")
			}
		})
	}

	// A hold point reached, released, and named again: still allowed;
	// one command earlier is not.
	f := newF(t, 4)
	f.Grant(10)
	if err := f.HoldAt(5, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Run(1000); err != nil || !f.Held() || f.Sim().(*locksteptest.Counters).Value(0) != 1 {
		t.Fatalf("Run to 5/1: %v, held %v", err, f.Held())
	}
	f.Release()
	if err := f.HoldAt(5, 1); err != nil || !f.Held() {
		t.Fatalf("HoldAt the current point: %v, held %v", err, f.Held())
	}
	f.Release()
	if err := f.HoldAt(5, 0); !errors.Is(err, lockstep.ErrPastHold) {
		t.Fatalf("HoldAt one command back: %v", err)
	}
	// The refused HoldAt left no hold behind.
	if _, err := f.Run(1000); err != nil || f.Held() || f.Sim().Tick() != 10 {
		t.Fatalf("Run after a refused HoldAt: %v, held %v, tick %d", err, f.Held(), f.Sim().Tick())
	}
}

// TestFollowerHoldAtPastMidTickJoin: a follower that joined at a point cut
// in the middle of a paused tick (some commands of that tick are in its
// state, not in its queue) or that refused a command (a desync) still
// knows which commands of the tick it has passed.
func TestFollowerHoldAtPastMidTickJoin(t *testing.T) {
	t.Run("mid-tick join", func(t *testing.T) {
		a := lockstep.NewAuthority(locksteptest.New(3, 8))
		a.Advance(true)
		a.Submit(lockstep.SetSpeed(0))
		a.Submit(add(0, 1))
		a.Advance(false) // 1/0 and 1/1 go into the join point
		joined := clone(t, a.Sim())
		a.Queues().Reset()
		a.Submit(add(1, 1))
		a.Submit(add(2, 1))
		a.Advance(false) // 1/2 and 1/3 are queued
		_, groups := a.Queues().Snapshot()
		f, err := lockstep.NewFollower(joined, slices.Concat(groups...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Run(0); err != nil {
			t.Fatal(err)
		}
		if f.Sim().WorldHash() != a.Sim().WorldHash() || a.Applied() != 4 {
			t.Fatalf("follower not at the host's point 1/%d", a.Applied())
		}
		// The follower has applied 1/2 and 1/3: the point 1/3 (before
		// 1/3) is behind it.
		if err := f.HoldAt(1, 3); !errors.Is(err, lockstep.ErrPastHold) {
			t.Errorf("HoldAt(1, 3) after applying 1/3: %v, want ErrPastHold (held now: %v)", err, f.Held())
		}
	})
	t.Run("refused command", func(t *testing.T) {
		var cmds []lockstep.Command
		for i, c := range []lockstep.Command{{MapID: 0, Kind: 99, Payload: []byte{1}}, add(0, 1), add(0, 2)} {
			c.Tick, c.Seq = 2, uint32(i)
			cmds = append(cmds, c)
		}
		f, err := lockstep.NewFollower(locksteptest.New(1, 4), cmds)
		if err != nil {
			t.Fatal(err)
		}
		f.Grant(2)
		if _, err := f.Run(1000); err == nil {
			t.Fatal("no desync")
		}
		if _, err := f.Run(1000); err != nil {
			t.Fatal(err)
		}
		// 2/0 was refused, 2/1 and 2/2 applied: 2/2 is behind.
		if err := f.HoldAt(2, 2); !errors.Is(err, lockstep.ErrPastHold) {
			t.Errorf("HoldAt(2, 2) after applying 2/2: %v, want ErrPastHold (held now: %v)", err, f.Held())
		}
	})
}

// TestFollowerHoldMidTickJoin: hold points at the join tick of a join
// point cut in the middle of a paused tick.
func TestFollowerHoldMidTickJoin(t *testing.T) {
	a := lockstep.NewAuthority(locksteptest.New(3, 8))
	a.Advance(true)
	a.Submit(lockstep.SetSpeed(0))
	a.Submit(add(0, 1))
	a.Advance(false)
	joined := clone(t, a.Sim())
	a.Queues().Reset()
	cuts := []cut{takeCut(t, a, 0)}
	for _, c := range []lockstep.Command{add(1, 1), add(2, 1), lockstep.SetSpeed(1)} {
		a.Submit(c)
		a.Advance(false)
		cuts = append(cuts, takeCut(t, a, 0))
	}
	a.Advance(true)
	final := takeCut(t, a, 0)
	_, groups := a.Queues().Snapshot()
	for _, c := range cuts {
		t.Run(c.String(), func(t *testing.T) {
			f, err := lockstep.NewFollower(clone(t, joined), slices.Concat(groups...))
			if err != nil {
				t.Fatal(err)
			}
			f.Grant(final.tick)
			if err := f.HoldAt(c.tick, c.n); err != nil {
				t.Fatal(err)
			}
			if n, err := f.Run(1000); err != nil || n != 0 || !f.Held() {
				t.Fatalf("Run: %d %v, held %v", n, err, f.Held())
			}
			if d := c.diff(f.Sim()); d != "" {
				t.Fatal(d)
			}
			f.Release()
			if _, err := f.Run(1000); err != nil {
				t.Fatal(err)
			}
			if d := final.diff(f.Sim()); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func TestFollowerReplaceSimRefused(t *testing.T) {
	r := playHost(t)
	var at, later, other cut // 3/2, 3/4 and 4/0
	for _, c := range r.distinctCuts() {
		switch {
		case c.tick == 3 && c.n == 2:
			at = c
		case c.tick == 3 && c.n == 4:
			later = c
		case c.tick == 4 && c.n == 0:
			other = c
		}
	}
	if at.world == nil || later.world == nil || other.world == nil {
		t.Fatal("the script has no cuts 3/2, 3/4, 4/0")
	}
	load := func(c cut) lockstep.Sim {
		s, err := locksteptest.Load(c.world, c.maps)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	refused := func(f *lockstep.Follower, s lockstep.Sim, what string) {
		t.Helper()
		old := f.Sim()
		if err := f.ReplaceSim(s); err == nil {
			t.Fatalf("%s: ReplaceSim accepted", what)
		}
		if f.Sim() != old {
			t.Fatalf("%s: the sim was swapped by a refused ReplaceSim", what)
		}
	}

	f := newHoldFollower(t, r)
	refused(f, load(r.cuts[0]), "no hold point, same tick")
	if err := f.HoldAt(at.tick, at.n); err != nil {
		t.Fatal(err)
	}
	refused(f, load(r.cuts[0]), "hold point not reached")
	// At the hold tick but short of the point: 3/0 and 3/1 not applied yet.
	var rest []lockstep.Command
	for _, c := range r.cmds {
		if c.Tick >= at.tick {
			rest = append(rest, c)
		}
	}
	g, err := lockstep.NewFollower(load(r.cuts[3]), rest)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.HoldAt(at.tick, at.n); err != nil {
		t.Fatal(err)
	}
	if g.Sim().Tick() != at.tick || g.Held() {
		t.Fatal("held before the commands of the hold point were applied")
	}
	refused(g, load(r.cuts[3]), "at the hold tick, before the point")

	if _, err := f.Run(1000); err != nil || !f.Held() {
		t.Fatalf("Run to the hold point: %v, held %v", err, f.Held())
	}
	refused(f, load(other), "held, replacement at a later tick")
	refused(f, load(r.cuts[2]), "held, replacement at an earlier tick")
	if !f.Held() || at.diff(f.Sim()) != "" {
		t.Fatal("refused replacements disturbed the hold")
	}
	// The same tick is all ReplaceSim can check.
	if err := f.ReplaceSim(load(later)); err != nil {
		t.Fatalf("replacement at the hold tick: %v", err)
	}
	f.Release()
	refused(f, load(later), "released")
}

func TestFollowerHoldBoundsRun(t *testing.T) {
	r := playHost(t)
	for _, c := range r.distinctCuts() {
		t.Run(c.String(), func(t *testing.T) {
			f := newHoldFollower(t, r)
			f.Grant(1 << 40) // far beyond the hold and the commands
			maxTick := uint64(0)
			f.OnStep(func(s lockstep.Sim) { maxTick = max(maxTick, s.Tick()) })
			if err := f.HoldAt(c.tick, c.n); err != nil {
				t.Fatal(err)
			}
			// Short of the hold tick: the grant stops it first.
			if c.tick > 0 {
				lo := newHoldFollower(t, r)
				if err := lo.HoldAt(c.tick, c.n); err != nil {
					t.Fatal(err)
				}
				// The grant is already final; use max instead.
				if n, err := lo.Run(int(c.tick) - 1); err != nil || n != int(c.tick)-1 || lo.Held() {
					t.Fatalf("Run(%d) short of the hold: %d %v, held %v", c.tick-1, n, err, lo.Held())
				}
			}
			total := 0
			for range 5 {
				n, err := f.Run(1 << 30)
				if err != nil {
					t.Fatal(err)
				}
				total += n
			}
			if total != int(c.tick) || f.Sim().Tick() != c.tick || maxTick > c.tick || !f.Held() {
				t.Fatalf("ran %d ticks to %d (max seen %d), held %v", total, f.Sim().Tick(), maxTick, f.Held())
			}
			f.Release()
			if n, err := f.Run(7); err != nil || n != 7 {
				t.Fatalf("Run(7) after Release: %d %v", n, err)
			}
		})
	}
}
