package host_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// defaultColony is the reference game's default content and its world
// at seed 7.
func defaultColony(t *testing.T) (*colony.Content, *defs.Set, *colony.World) {
	t.Helper()
	content, set, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(content, colony.Config{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return content, set, world
}

// TestColonyJoinEndToEnd runs the reference simulation's default world over
// loopback TCP: two joiners reach WorldReady, a command sent by one runs at
// the same tick on the host and on both, and every map hash agrees with
// the host's at the same ticks.
func TestColonyJoinEndToEnd(t *testing.T) {
	content, set, world := defaultColony(t)
	const every = 10 // hash the default world every 10 ticks, not every tick
	hl := newHashLog()
	cfg := host.Config{TickRate: 120, AfterTick: func(res lockstep.TickResult, sim lockstep.Sim) {
		for _, c := range res.Accepted {
			hl.applied(c)
		}
		if res.Stepped && sim.Tick()%every == 0 {
			hl.record(sim)
		}
	}}
	h := hosttest.Start(t, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()}, world)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	th := &testHost{log: hl}

	joiners := make([]*testJoiner, 2)
	for i, name := range []string{"Alice", "Bob"} {
		tj := &testJoiner{log: newHashLog(), errc: make(chan error, 1)}
		s, err := join.Join(ctx, join.Config{
			Addr: h.Addr, Name: name, Databases: set.Summary(), MapLoader: colony.MapLoader(content),
			Logger: testkit.Quiet(), OnApply: tj.log.applied,
			OnStep: func(sim lockstep.Sim) {
				if sim.Tick()%every == 0 {
					tj.log.record(sim)
				}
			},
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tm := s.Timings()
		t.Logf("%s: WorldReady at tick %d after %v (download %v, %d bytes of %d raw; caught up %d ticks in %v)",
			name, tm.ReadyTick, tm.Total, tm.Download, tm.Bytes, tm.RawBytes, tm.CatchUpTicks, tm.CatchUp)
		tj.sess = s
		go func() { tj.errc <- s.Run(ctx) }()
		joiners[i] = tj
	}

	cmd := colony.SpawnThing(1, "Steel", 10, 12, 25)
	if err := joiners[0].sess.Send(cmd.MapID, cmd.Kind, cmd.Payload); err != nil {
		t.Fatal(err)
	}
	cmd.Player = joiners[0].sess.Info().PlayerID
	key := cmdKey(cmd)
	var hostTick uint64
	testkit.WaitFor(t, "host to apply the spawn", func() bool {
		var ok bool
		hostTick, ok = hl.cmdTick(key)
		return ok
	})
	for i, j := range joiners {
		testkit.WaitFor(t, fmt.Sprintf("joiner %d to apply the spawn", i), func() bool {
			tk, ok := j.log.cmdTick(key)
			if ok && tk != hostTick {
				t.Fatalf("joiner %d applied the spawn at tick %d, host at %d", i, tk, hostTick)
			}
			return ok
		})
	}
	// Compare at several checkpoints after the command.
	first := (hostTick/every + 1) * every
	for tick := first; tick <= first+3*every; tick += every {
		checkSameHashes(t, th, tick, joiners...)
	}
	if want, _ := hl.at(first); len(want) != colony.DefaultMaps {
		t.Fatalf("host recorded %d map hashes, want %d", len(want), colony.DefaultMaps)
	}
	for i, j := range joiners {
		select {
		case err := <-j.errc:
			t.Fatalf("joiner %d left: %v", i, err)
		case <-time.After(0):
		}
	}
}
