package lockstep_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

func add(mapID int32, delta int8) lockstep.Command {
	return lockstep.Command{MapID: mapID, Kind: locksteptest.KindAdd, Payload: []byte{byte(delta)}}
}

type stamp struct {
	tick uint64
	seq  uint32
}

func stamps(cmds []lockstep.Command) []stamp {
	var out []stamp
	for _, c := range cmds {
		out = append(out, stamp{c.Tick, c.Seq})
	}
	return out
}

func TestAuthorityStamping(t *testing.T) {
	sim := locksteptest.New(3, 8)
	a := lockstep.NewAuthority(sim)
	if a.Sim() != sim || a.Speed() != 1 || a.Queues().Len() != 0 {
		t.Fatalf("new authority: speed %d, %d queued", a.Speed(), a.Queues().Len())
	}

	// Tick 0: three accepted, one refused in the middle. Whatever Tick and
	// Seq the submitter put in are overwritten.
	c0 := add(0, 5)
	c0.Tick, c0.Seq, c0.Player = 999, 77, 4
	a.Submit(c0)
	a.Submit(add(1, 1))
	a.Submit(lockstep.Command{MapID: 2, Kind: 99, Payload: []byte{1}}) // unknown kind
	a.Submit(add(7, 1))                                                // no such map
	a.Submit(add(2, -3))
	if a.Pending() != 5 {
		t.Fatalf("Pending %d, want 5", a.Pending())
	}
	res := a.Advance(true)
	if a.Pending() != 0 {
		t.Fatalf("Pending %d after Advance", a.Pending())
	}
	if res.Tick != 0 || !res.Stepped || res.Granted != 1 || sim.Tick() != 1 {
		t.Fatalf("result tick %d stepped %v granted %d; sim at %d", res.Tick, res.Stepped, res.Granted, sim.Tick())
	}
	if got, want := stamps(res.Accepted), []stamp{{0, 0}, {0, 1}, {0, 2}}; !slices.Equal(got, want) {
		t.Fatalf("accepted stamps %v, want %v (refusals must not use a Seq)", got, want)
	}
	if res.Accepted[0].Player != 4 || res.Accepted[0].MapID != 0 || res.Accepted[2].MapID != 2 {
		t.Fatalf("accepted commands out of submission order or changed: %+v", res.Accepted)
	}
	if len(res.Rejected) != 2 || res.Rejected[0].Err == nil || res.Rejected[1].Err == nil ||
		res.Rejected[0].Cmd.Kind != 99 || res.Rejected[1].Cmd.MapID != 7 || res.Rejected[0].Cmd.Tick != 0 {
		t.Fatalf("rejected %+v", res.Rejected)
	}
	if sim.Value(0) != 5 || sim.Value(1) != 1 || sim.Value(2) != -3 {
		t.Fatalf("values %d %d %d", sim.Value(0), sim.Value(1), sim.Value(2))
	}

	// Tick 1: Seq starts again at 0.
	a.Submit(add(1, 2))
	a.Submit(add(1, 3))
	res = a.Advance(true)
	if got, want := stamps(res.Accepted), []stamp{{1, 0}, {1, 1}}; !slices.Equal(got, want) {
		t.Fatalf("tick 1 stamps %v, want %v", got, want)
	}

	// Tick 2, paused: several batches at the same tick keep counting.
	a.Submit(add(0, 1))
	res = a.Advance(false)
	if res.Stepped || res.Granted != 2 || sim.Tick() != 2 {
		t.Fatalf("Advance(false): stepped %v granted %d tick %d", res.Stepped, res.Granted, sim.Tick())
	}
	a.Submit(add(2, 1))
	a.Submit(add(0, 1))
	res2 := a.Advance(false)
	res3 := a.Advance(false) // nothing submitted
	a.Submit(add(0, 1))
	res4 := a.Advance(true)
	got := stamps(slices.Concat(res.Accepted, res2.Accepted, res3.Accepted, res4.Accepted))
	if want := []stamp{{2, 0}, {2, 1}, {2, 2}, {2, 3}}; !slices.Equal(got, want) {
		t.Fatalf("batches at tick 2 stamped %v, want %v", got, want)
	}
	if len(res3.Accepted) != 0 || res3.Tick != 2 || res4.Tick != 2 || res4.Granted != 3 {
		t.Fatalf("empty batch %+v, last batch %+v", res3, res4)
	}

	// An empty tick, then a new one: Seq restarts.
	a.Advance(true)
	a.Submit(add(1, 1))
	res = a.Advance(true)
	if got, want := stamps(res.Accepted), []stamp{{4, 0}}; !slices.Equal(got, want) {
		t.Fatalf("tick 4 stamps %v, want %v", got, want)
	}

	// Queues hold every accepted command per map, in order applied.
	q := a.Queues()
	if q.Len() != 10 {
		t.Fatalf("queued %d commands, want 10", q.Len())
	}
	ids, cmds := q.Snapshot()
	if !slices.Equal(ids, []int32{0, 1, 2}) {
		t.Fatalf("queued maps %v", ids)
	}
	want := [][]stamp{
		{{0, 0}, {2, 0}, {2, 2}, {2, 3}},
		{{0, 1}, {1, 0}, {1, 1}, {4, 0}},
		{{0, 2}, {2, 1}},
	}
	for i := range ids {
		if got := stamps(cmds[i]); !slices.Equal(got, want[i]) {
			t.Errorf("map %d queue %v, want %v", ids[i], got, want[i])
		}
		for _, c := range cmds[i] {
			if c.MapID != ids[i] {
				t.Errorf("command of map %d queued under map %d", c.MapID, ids[i])
			}
		}
	}
}

func TestAuthoritySpeed(t *testing.T) {
	sim := locksteptest.New(1, 4)
	a := lockstep.NewAuthority(sim)

	for _, s := range []uint8{0, 3, 2, 1, 0} {
		a.Submit(lockstep.SetSpeed(s))
		res := a.Advance(false)
		if len(res.Accepted) != 1 || a.Speed() != s {
			t.Fatalf("SetSpeed(%d): speed %d, result %+v", s, a.Speed(), res)
		}
	}
	if a.Queues().Len() != 5 {
		t.Fatalf("speed changes queued: %d", a.Queues().Len())
	}
	if ids, _ := a.Queues().Snapshot(); !slices.Equal(ids, []int32{lockstep.WorldScope}) {
		t.Fatalf("speed changes queued under %v", ids)
	}

	a.Submit(lockstep.SetSpeed(2))
	a.Advance(true) // a new tick, so Seq counts from 0 below
	hash := sim.WorldHash()
	bad := []lockstep.Command{
		{MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed},
		{MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed, Payload: []byte{}},
		{MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed, Payload: []byte{1, 1}},
		lockstep.SetSpeed(lockstep.MaxSpeed + 1),
		lockstep.SetSpeed(255),
		{MapID: 0, Kind: lockstep.KindSetSpeed, Payload: []byte{1}},
	}
	for _, c := range bad {
		a.Submit(c)
	}
	a.Submit(add(0, 1)) // still gets Seq 0 after the refusals
	res := a.Advance(false)
	if len(res.Rejected) != len(bad) {
		t.Fatalf("%d of %d bad speed commands refused", len(res.Rejected), len(bad))
	}
	for _, r := range res.Rejected {
		if !errors.Is(r.Err, lockstep.ErrBadSpeed) {
			t.Errorf("refusing %+v: %v, want ErrBadSpeed", r.Cmd, r.Err)
		}
	}
	if a.Speed() != 2 {
		t.Fatalf("speed %d after bad commands, want 2", a.Speed())
	}
	if len(res.Accepted) != 1 || res.Accepted[0].Seq != 0 || res.Accepted[0].Tick != 1 {
		t.Fatalf("accepted %+v, want one command stamped 1/0", res.Accepted)
	}
	if sim.WorldHash() == hash {
		t.Fatal("the valid command did not reach the sim")
	}

	// Other engine kinds are refused, and never reach the sim.
	a.Submit(lockstep.Command{MapID: lockstep.WorldScope, Kind: lockstep.KindReserved + 1, Payload: []byte{1}})
	if res := a.Advance(false); len(res.Rejected) != 1 || errors.Is(res.Rejected[0].Err, lockstep.ErrBadSpeed) {
		t.Fatalf("unknown engine command: %+v", res)
	}
}

func TestAdvanceWithoutStep(t *testing.T) {
	sim := locksteptest.New(2, 16)
	a := lockstep.NewAuthority(sim)
	a.Advance(true)
	a.Advance(true)
	hash := sim.WorldHash()
	for range 5 {
		res := a.Advance(false)
		if res.Stepped || res.Tick != 2 || res.Granted != 2 || sim.Tick() != 2 {
			t.Fatalf("Advance(false): %+v, sim at %d", res, sim.Tick())
		}
	}
	if sim.WorldHash() != hash {
		t.Fatal("Advance(false) without commands changed the state")
	}
	res := a.Advance(true)
	if !res.Stepped || res.Tick != 2 || res.Granted != 3 || sim.Tick() != 3 {
		t.Fatalf("Advance(true): %+v, sim at %d", res, sim.Tick())
	}
}

// TestAuthorityReplay: commands applied before the Authority took over
// are queued, the ones of the current tick count in Applied (an engine
// command too) so that the next command of that tick follows them, the
// simulation is not given them, the speed stays, and one stamped after
// the current tick is refused.
func TestAuthorityReplay(t *testing.T) {
	sim := locksteptest.New(2, 8)
	for range 3 {
		sim.Step() // the state is already past the replayed commands
	}
	before := sim.WorldHash()
	a := lockstep.NewAuthority(sim)
	pause := lockstep.SetSpeed(0)
	pause.Tick, pause.Seq = 3, 0
	old, cur := add(0, 5), add(1, 2)
	old.Tick, old.Seq = 2, 0
	cur.Tick, cur.Seq = 3, 1
	for _, c := range []lockstep.Command{old, pause, cur} {
		if err := a.Replay(c); err != nil {
			t.Fatalf("replay %+v: %v", c, err)
		}
	}
	if got := a.Applied(); got != 2 {
		t.Errorf("Applied after replaying two commands of tick 3 (the pause one of them) = %d, want 2", got)
	}
	if a.Queues().Len() != 3 || sim.WorldHash() != before || a.Speed() != 1 {
		t.Errorf("after replay: %d queued (want 3), world changed %v, speed %d (want 1)", a.Queues().Len(), sim.WorldHash() != before, a.Speed())
	}
	a.Submit(add(0, 1))
	res := a.Advance(false)
	if got := stamps(res.Accepted); !slices.Equal(got, []stamp{{3, 2}}) {
		t.Errorf("the next command of tick 3 was stamped %v, want [{3 2}]", got)
	}
	late := add(0, 1)
	late.Tick = 4
	if err := a.Replay(late); err == nil {
		t.Error("a command stamped after the current tick was replayed")
	}
}
