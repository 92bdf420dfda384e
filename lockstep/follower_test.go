package lockstep_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// clone copies a sim the way a joiner gets it: through its encoding.
func clone(t testing.TB, s lockstep.Sim) lockstep.Sim {
	t.Helper()
	world, err := s.MarshalWorld()
	if err != nil {
		t.Fatal(err)
	}
	var maps []lockstep.MapBlob
	for _, id := range s.MapIDs() {
		b, err := s.MarshalMap(id)
		if err != nil {
			t.Fatal(err)
		}
		maps = append(maps, lockstep.MapBlob{ID: id, Data: b})
	}
	c, err := locksteptest.Load(world, maps)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tick() != s.Tick() || c.WorldHash() != s.WorldHash() {
		t.Fatal("clone differs from its original")
	}
	return c
}

// orderSim is a Counters world whose hash also covers the order in which
// commands were applied. Counters' additions commute, so on their own they
// would not show commands of one tick applied in the wrong order.
type orderSim struct {
	*locksteptest.Counters
	log uint64
}

func (s *orderSim) Apply(c lockstep.Command) error {
	if err := s.Counters.Apply(c); err != nil {
		return err
	}
	s.log = s.log*0x100000001b3 ^ uint64(uint32(c.MapID))<<40 ^ uint64(c.Player)<<8 ^ uint64(c.Payload[0]) ^ c.Tick<<48
	return nil
}

func (s *orderSim) WorldHash() uint64 { return s.Counters.WorldHash() ^ s.log*0x9e3779b97f4a7c15 }

// cloneOrderSim copies s through the Counters encoding, plus its log.
func cloneOrderSim(t testing.TB, s *orderSim) *orderSim {
	return &orderSim{Counters: clone(t, s.Counters).(*locksteptest.Counters), log: s.log}
}

// authorityHost drives an Authority with random commands and records the world
// hash at each tick right after stepping into it (before that tick's
// commands), which is when a follower's OnStep sees it.
type authorityHost struct {
	rng    *rand.Rand
	auth   *lockstep.Authority
	nMaps  int
	hashes map[uint64]uint64

	pausedAdvances int
	batchesAt      map[uint64]int // ticks -> advances with accepted commands
	rejected       int
}

func newHost(seed uint64, nMaps int) *authorityHost {
	h := &authorityHost{
		rng:       rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		auth:      lockstep.NewAuthority(&orderSim{Counters: locksteptest.New(nMaps, 32)}),
		nMaps:     nMaps,
		hashes:    map[uint64]uint64{},
		batchesAt: map[uint64]int{},
	}
	h.hashes[0] = h.auth.Sim().WorldHash()
	return h
}

// advance submits up to four random commands and advances one step (or
// not, while paused).
func (h *authorityHost) advance() lockstep.TickResult {
	r := h.rng
	for range r.IntN(5) {
		var c lockstep.Command
		switch k := r.IntN(20); {
		case k == 0: // refused by the sim: no such map
			c = add(int32(h.nMaps+r.IntN(3)), 1)
		case k == 1: // refused by the sim: bad payload
			c = lockstep.Command{MapID: int32(r.IntN(h.nMaps)), Kind: locksteptest.KindAdd, Payload: []byte{1, 2}}
		case k == 2 && h.auth.Speed() > 0: // pause
			c = lockstep.SetSpeed(0)
		case k <= 6 && h.auth.Speed() == 0: // resume
			c = lockstep.SetSpeed(uint8(1 + r.IntN(lockstep.MaxSpeed)))
		default:
			c = add(int32(r.IntN(h.nMaps)), int8(r.IntN(256)-128))
		}
		c.Player = int32(r.IntN(4))
		h.auth.Submit(c)
	}
	step := h.auth.Speed() > 0
	res := h.auth.Advance(step)
	h.rejected += len(res.Rejected)
	if len(res.Accepted) > 0 {
		h.batchesAt[res.Tick]++
	}
	if step {
		h.hashes[h.auth.Sim().Tick()] = h.auth.Sim().WorldHash()
	} else {
		h.pausedAdvances++
	}
	return res
}

func TestFollowerMatchesAuthority(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("", func(t *testing.T) { followerMatchesAuthority(t, seed) })
	}
}

func followerMatchesAuthority(t *testing.T, seed uint64) {
	const nMaps = 4
	h := newHost(seed, nMaps)
	for h.auth.Sim().Tick() < 60 {
		h.advance()
	}

	// Cut the join point while paused, after a batch at this tick: the
	// state includes that batch, and the queues start empty.
	h.auth.Submit(lockstep.SetSpeed(0))
	h.auth.Submit(add(1, 9))
	if res := h.auth.Advance(false); len(res.Accepted) != 2 {
		t.Fatalf("pre-cut batch: %+v", res)
	}
	joinTick := h.auth.Sim().Tick()
	joined := cloneOrderSim(t, h.auth.Sim().(*orderSim))
	h.auth.Queues().Reset()

	// The joiner downloads while the session goes on.
	var granted uint64
	for h.auth.Sim().Tick() < joinTick+150 {
		granted = h.advance().Granted
	}
	ids, groups := h.auth.Queues().Snapshot()
	if len(ids) < nMaps {
		t.Fatalf("only maps %v have queued commands", ids)
	}
	var queued []lockstep.Command
	for _, g := range groups {
		queued = append(queued, g...)
	}
	if len(queued) != h.auth.Queues().Len() {
		t.Fatalf("snapshot holds %d commands, Len says %d", len(queued), h.auth.Queues().Len())
	}
	h.rng.Shuffle(len(queued), func(i, j int) { queued[i], queued[j] = queued[j], queued[i] })

	f, err := lockstep.NewFollower(joined, queued)
	if err != nil {
		t.Fatal(err)
	}
	f.Grant(granted)
	checked := 0
	f.OnStep(func(s lockstep.Sim) {
		if s.Tick() > f.Granted() {
			t.Fatalf("stepped to %d past the grant %d", s.Tick(), f.Granted())
		}
		want, ok := h.hashes[s.Tick()]
		if !ok {
			t.Fatalf("follower at tick %d the host never reached", s.Tick())
		}
		if got := s.WorldHash(); got != want {
			t.Fatalf("tick %d: follower hash %016x, host %016x", s.Tick(), got, want)
		}
		checked++
	})
	applied := 0
	f.OnApply(func(lockstep.Command) { applied++ })

	// Play on: the follower gets each tick's commands and grant, and runs
	// a random, usually small, number of ticks, so it catches up slowly.
	for range 400 {
		res := h.advance()
		if err := f.Add(res.Accepted...); err != nil {
			t.Fatalf("Add at host tick %d: %v", res.Tick, err)
		}
		f.Grant(res.Granted)
		if _, err := f.Run(h.rng.IntN(6)); err != nil {
			t.Fatal(err)
		}
		if f.Sim().Tick() > f.Granted() {
			t.Fatalf("follower at %d past the grant %d", f.Sim().Tick(), f.Granted())
		}
	}
	for f.Behind() > 0 {
		if _, err := f.Run(1000); err != nil {
			t.Fatal(err)
		}
	}
	// Apply commands due at the final tick (when the host is paused,
	// several batches may be waiting).
	if n, err := f.Run(0); err != nil || n != 0 {
		t.Fatalf("Run(0) = %d, %v", n, err)
	}

	hs := h.auth.Sim()
	if f.Sim().Tick() != hs.Tick() || f.Granted() != hs.Tick() {
		t.Fatalf("follower at %d (grant %d), host at %d", f.Sim().Tick(), f.Granted(), hs.Tick())
	}
	if f.Sim().WorldHash() != hs.WorldHash() {
		t.Fatal("final world hashes differ")
	}
	for _, id := range hs.MapIDs() {
		want, _ := hs.MapHash(id)
		if got, ok := f.Sim().MapHash(id); !ok || got != want {
			t.Fatalf("map %d hash %016x, host %016x", id, got, want)
		}
	}
	if f.Speed() != h.auth.Speed() {
		t.Fatalf("follower speed %d, host %d", f.Speed(), h.auth.Speed())
	}
	if want := int(hs.Tick() - joinTick); checked != want {
		t.Fatalf("checked %d ticks, want %d", checked, want)
	}
	if want := h.auth.Queues().Len(); applied != want {
		t.Fatalf("follower applied %d commands, host queued %d since the join point", applied, want)
	}

	// The run covered what it is meant to.
	multi := 0
	for _, n := range h.batchesAt {
		if n >= 2 {
			multi++
		}
	}
	if hs.Tick() < 300 || h.pausedAdvances < 20 || multi < 3 || h.rejected == 0 {
		t.Fatalf("weak run: %d ticks, %d paused advances, %d ticks with several batches, %d refusals",
			hs.Tick(), h.pausedAdvances, multi, h.rejected)
	}
}

func TestFollowerRespectsGrant(t *testing.T) {
	sim := locksteptest.New(2, 8)
	f, err := lockstep.NewFollower(sim, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sim() != sim || f.Granted() != 0 || f.Behind() != 0 || f.Speed() != 1 {
		t.Fatalf("new follower: grant %d behind %d speed %d", f.Granted(), f.Behind(), f.Speed())
	}
	if n, err := f.Run(100); n != 0 || err != nil || sim.Tick() != 0 {
		t.Fatalf("Run without a grant: %d %v, tick %d", n, err, sim.Tick())
	}
	f.Grant(10)
	if n, err := f.Run(4); n != 4 || err != nil || sim.Tick() != 4 || f.Behind() != 6 {
		t.Fatalf("Run(4): %d %v, tick %d behind %d", n, err, sim.Tick(), f.Behind())
	}
	f.Grant(7) // lower: ignored
	if f.Granted() != 10 {
		t.Fatalf("grant lowered to %d", f.Granted())
	}
	if n, err := f.Run(100); n != 6 || err != nil || sim.Tick() != 10 || f.Behind() != 0 {
		t.Fatalf("Run(100): %d %v, tick %d behind %d", n, err, sim.Tick(), f.Behind())
	}
	if n, _ := f.Run(100); n != 0 || sim.Tick() != 10 {
		t.Fatalf("Run at the grant stepped %d ticks", n)
	}

	// A command at the reached tick is applied although no step is
	// granted, as the host applies it while paused.
	c := add(1, 42)
	c.Tick = 10
	if err := f.Add(c); err != nil {
		t.Fatal(err)
	}
	var got []lockstep.Command
	f.OnApply(func(c lockstep.Command) { got = append(got, c) })
	if n, err := f.Run(100); n != 0 || err != nil || sim.Value(1) != 42 || len(got) != 1 || sim.Tick() != 10 {
		t.Fatalf("paused apply: %d %v, value %d, applied %v", n, err, sim.Value(1), got)
	}
	// Applied once only.
	if _, err := f.Run(100); err != nil || sim.Value(1) != 42 || len(got) != 1 {
		t.Fatalf("command applied again: value %d", sim.Value(1))
	}
}

func TestFollowerAppliesAtExactTick(t *testing.T) {
	sim := locksteptest.New(1, 0)
	cmds := []lockstep.Command{add(0, 1), add(0, 2), add(0, 4)}
	cmds[0].Tick, cmds[1].Tick, cmds[2].Tick = 3, 3, 5
	cmds[1].Seq = 1
	f, err := lockstep.NewFollower(sim, []lockstep.Command{cmds[2], cmds[1], cmds[0]})
	if err != nil {
		t.Fatal(err)
	}
	var at []uint64
	var order []int8
	f.OnApply(func(c lockstep.Command) {
		at = append(at, sim.Tick())
		order = append(order, int8(c.Payload[0]))
	})
	steps := 0
	f.OnStep(func(lockstep.Sim) { steps++ })
	f.Grant(8)
	if _, err := f.Run(100); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(at, []uint64{3, 3, 5}) || !slices.Equal(order, []int8{1, 2, 4}) {
		t.Fatalf("applied %v at ticks %v", order, at)
	}
	if steps != 8 || sim.Value(0) != 7 {
		t.Fatalf("%d steps, value %d", steps, sim.Value(0))
	}
}

func TestFollowerAddRefusesPastTicks(t *testing.T) {
	sim := locksteptest.New(1, 0)
	f, err := lockstep.NewFollower(sim, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Grant(5)
	if _, err := f.Run(10); err != nil {
		t.Fatal(err)
	}
	late := add(0, 1)
	late.Tick = 4
	ok := add(0, 2)
	ok.Tick = 6
	if err := f.Add(ok, late); err == nil {
		t.Fatal("command for an already simulated tick accepted")
	}
	// Nothing of the refused batch was kept.
	f.Grant(10)
	if _, err := f.Run(10); err != nil {
		t.Fatal(err)
	}
	if sim.Value(0) != 0 {
		t.Fatalf("part of a refused batch was applied: value %d", sim.Value(0))
	}
	// The current tick is not in the past.
	now := add(0, 3)
	now.Tick = sim.Tick()
	if err := f.Add(now); err != nil {
		t.Fatalf("command for the current tick: %v", err)
	}

	old := add(0, 1)
	if _, err := lockstep.NewFollower(clone(t, sim), []lockstep.Command{old}); err == nil {
		t.Fatal("NewFollower accepted a command before the join point")
	}
}

func TestFollowerDesync(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  lockstep.Command
	}{
		{"sim refuses", lockstep.Command{MapID: 0, Kind: 99, Payload: []byte{1}}},
		{"no such map", add(9, 1)},
		{"bad speed", lockstep.SetSpeed(lockstep.MaxSpeed + 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := locksteptest.New(1, 0)
			bad := tc.cmd
			bad.Tick = 2
			good := add(0, 5)
			good.Tick = 4
			f, err := lockstep.NewFollower(sim, []lockstep.Command{bad, good})
			if err != nil {
				t.Fatal(err)
			}
			f.Grant(6)
			n, err := f.Run(100)
			if err == nil || !strings.Contains(err.Error(), "desync") {
				t.Fatalf("Run: %v, want a desync error", err)
			}
			if n != 2 || sim.Tick() != 2 {
				t.Fatalf("stopped after %d steps at tick %d, want 2", n, sim.Tick())
			}
			// The refused command is dropped; the rest still runs.
			if _, err := f.Run(100); err != nil {
				t.Fatalf("Run after the desync: %v", err)
			}
			if sim.Tick() != 6 || sim.Value(0) != 5 || f.Speed() != 1 {
				t.Fatalf("tick %d value %d speed %d", sim.Tick(), sim.Value(0), f.Speed())
			}
		})
	}
}

func TestQueuesReset(t *testing.T) {
	q := lockstep.NewQueues()
	if q.Len() != 0 {
		t.Fatalf("new queues: len %d", q.Len())
	}
	if ids, cmds := q.Snapshot(); len(ids) != 0 || len(cmds) != 0 {
		t.Fatalf("empty snapshot %v %v", ids, cmds)
	}
	for i, m := range []int32{2, lockstep.WorldScope, 0, 2} {
		c := add(m, 1)
		c.Tick, c.Seq = 5, uint32(i)
		q.Append(c)
	}
	ids, cmds := q.Snapshot()
	if !slices.Equal(ids, []int32{lockstep.WorldScope, 0, 2}) || q.Len() != 4 {
		t.Fatalf("maps %v len %d", ids, q.Len())
	}
	if got := stamps(cmds[2]); !slices.Equal(got, []stamp{{5, 0}, {5, 3}}) {
		t.Fatalf("map 2 queue %v", got)
	}
	// The snapshot is a copy.
	cmds[2][0].Seq = 99
	cmds[2] = cmds[2][:0]
	if _, again := q.Snapshot(); len(again[2]) != 2 || again[2][0].Seq != 0 {
		t.Fatalf("snapshot shares the queue: %+v", again[2])
	}

	q.Reset()
	if q.Len() != 0 {
		t.Fatalf("after Reset: len %d", q.Len())
	}
	if ids, cmds := q.Snapshot(); len(ids) != 0 || len(cmds) != 0 {
		t.Fatalf("after Reset: snapshot %v %v", ids, cmds)
	}
	c := add(1, 1)
	c.Tick = 9
	q.Append(c)
	if ids, cmds := q.Snapshot(); !slices.Equal(ids, []int32{1}) || len(cmds[0]) != 1 || q.Len() != 1 {
		t.Fatalf("append after Reset: %v %v", ids, cmds)
	}
}

func TestAuthorityQueuesResetTrims(t *testing.T) {
	a := lockstep.NewAuthority(locksteptest.New(2, 4))
	a.Submit(add(0, 1))
	a.Advance(true)
	a.Queues().Reset()
	a.Submit(add(1, 1))
	a.Advance(true)
	ids, cmds := a.Queues().Snapshot()
	if !slices.Equal(ids, []int32{1}) || len(cmds[0]) != 1 || cmds[0][0].Tick != 1 {
		t.Fatalf("queues after a new join point: %v %+v", ids, cmds)
	}
}

func TestSortCommands(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 50 {
		n := r.IntN(40)
		cmds := make([]lockstep.Command, n)
		for i := range cmds {
			// Few distinct keys so equal keys are common; Player records
			// the original position.
			cmds[i] = lockstep.Command{Tick: uint64(r.IntN(4)), Seq: uint32(r.IntN(3)), Player: int32(i)}
		}
		// Reference: insertion sort, stable by construction.
		want := slices.Clone(cmds)
		for i := 1; i < len(want); i++ {
			for j := i; j > 0 && (want[j].Tick < want[j-1].Tick ||
				want[j].Tick == want[j-1].Tick && want[j].Seq < want[j-1].Seq); j-- {
				want[j], want[j-1] = want[j-1], want[j]
			}
		}
		lockstep.SortCommands(cmds)
		for i := range cmds {
			if cmds[i].Tick != want[i].Tick || cmds[i].Seq != want[i].Seq || cmds[i].Player != want[i].Player {
				t.Fatalf("position %d: got %d/%d (from %d), want %d/%d (from %d)",
					i, cmds[i].Tick, cmds[i].Seq, cmds[i].Player, want[i].Tick, want[i].Seq, want[i].Player)
			}
		}
	}
	// Large ticks and sequence numbers compare without overflow.
	cmds := []lockstep.Command{{Tick: 1 << 63, Seq: 0}, {Tick: 0, Seq: 1<<32 - 1}, {Tick: 0, Seq: 0}, {Tick: 1<<64 - 1}}
	lockstep.SortCommands(cmds)
	if got := stamps(cmds); !slices.Equal(got, []stamp{{0, 0}, {0, 1<<32 - 1}, {1 << 63, 0}, {1<<64 - 1, 0}}) {
		t.Fatalf("extremes sorted as %v", got)
	}
}

// TestFollowerPositionAndDropPending: Position names the tick and how
// many of its commands are applied; after DropPending the commands
// received past it are gone, and the same commands added again bring the
// simulation to the state a follower that kept them reaches.
func TestFollowerPositionAndDropPending(t *testing.T) {
	add := func(tick uint64, seq uint32) lockstep.Command {
		c := locksteptest.Counters{}.AddCommand(0, int8(seq+1))
		c.Tick, c.Seq = tick, seq
		return c
	}
	cmds := []lockstep.Command{add(2, 0), add(2, 1), add(4, 0)}
	kept, err := lockstep.NewFollower(locksteptest.New(1, 8), cmds)
	if err != nil {
		t.Fatal(err)
	}
	f, err := lockstep.NewFollower(locksteptest.New(1, 8), cmds)
	if err != nil {
		t.Fatal(err)
	}
	f.Grant(2)
	if _, err := f.Run(10); err != nil {
		t.Fatal(err)
	}
	if tick, applied := f.Position(); tick != 2 || applied != 2 {
		t.Fatalf("position (%d, %d), want (2, 2)", tick, applied)
	}
	f.DropPending()
	if err := f.Add(add(4, 0)); err != nil { // the host sends it again
		t.Fatal(err)
	}
	f.Grant(5)
	if _, err := f.Run(10); err != nil {
		t.Fatal(err)
	}
	if tick, applied := f.Position(); tick != 5 || applied != 0 {
		t.Fatalf("position (%d, %d) after the drop, want (5, 0)", tick, applied)
	}
	kept.Grant(5)
	if _, err := kept.Run(10); err != nil {
		t.Fatal(err)
	}
	if f.Sim().WorldHash() != kept.Sim().WorldHash() {
		t.Fatal("dropped and sent again, the commands left another state than kept")
	}
	if err := f.Add(add(5, 0)); err != nil {
		t.Fatalf("a command of the position's tick: %v", err)
	}
}
