package lockstep_test

import (
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

func TestCommandsHashOrderAndContent(t *testing.T) {
	a := lockstep.Command{Tick: 4, Seq: 0, MapID: 1, Kind: 1, Player: 2, Payload: []byte{1}}
	b := a
	b.Seq, b.Payload = 1, []byte{2}
	ab := lockstep.CommandsHash(lockstep.CommandsHash(0, a), b)
	ba := lockstep.CommandsHash(lockstep.CommandsHash(0, b), a)
	aa := lockstep.CommandsHash(lockstep.CommandsHash(0, a), a)
	if ab == ba || ab == aa || lockstep.CommandsHash(0, a) == lockstep.CommandsHash(0, b) {
		t.Errorf("hashes collide: ab %x ba %x aa %x", ab, ba, aa)
	}
	if ab != lockstep.CommandsHash(lockstep.CommandsHash(0, a), b) {
		t.Error("the hash is not a function of the commands")
	}
}

// TestTraceLogWithoutTracer keeps the last ticks of a game that is no
// Tracer: their commands, no state.
func TestTraceLogWithoutTracer(t *testing.T) {
	sim := locksteptest.New(2, 4)
	log := lockstep.NewTraceLog(3)
	for tick := uint64(0); tick < 6; tick++ {
		if tick%2 == 0 {
			c := sim.AddCommand(0, 1)
			c.Tick = tick
			if err := sim.Apply(c); err != nil {
				t.Fatal(err)
			}
			log.Applied(c)
		}
		sim.Step()
		log.Stepped(sim)
	}
	got := log.Since(0)
	if len(got) != 3 {
		t.Fatalf("kept %d ticks, want 3", len(got))
	}
	for i, r := range got {
		want := 0
		if r.Tick%2 == 0 {
			want = 1
		}
		if r.Tick != uint64(3+i) || r.NCommands != want || (want == 0) != (r.Commands == 0) || len(r.World) != 0 || len(r.Maps) != 0 {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	if n := len(log.Since(5)); n != 1 {
		t.Errorf("Since(5) gave %d records, want 1", n)
	}
	// The commands of the ticks kept, 3 to 5: tick 4's.
	if cmds := log.Commands(0); len(cmds) != 1 || cmds[0].Tick != 4 {
		t.Errorf("commands %+v, want tick 4's", cmds)
	}
	if cmds := log.Commands(5); len(cmds) != 0 {
		t.Errorf("commands from tick 5: %+v, want none", cmds)
	}
}
