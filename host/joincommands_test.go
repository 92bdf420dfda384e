package host_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// cmdAt names a command by its place in the host's order.
type cmdAt struct {
	tick uint64
	seq  uint32
}

// pause sends SetSpeed(0) and reads ticks, reporting each grant as a
// player does, until the host says it is paused; it returns the tick the
// host holds at.
func (c *rawClient) pause() uint64 {
	c.t.Helper()
	c.send(&wire.ClientCommand{MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed, Payload: []byte{0}})
	for {
		tk := c.syncClockUntil(wire.IDServerTick).(*wire.ServerTick)
		c.send(&wire.ClientTickAck{Tick: tk.Granted})
		if tk.Speed == 0 {
			return tk.Granted
		}
	}
}

// joinedStream is what a raw joiner received from admission on: the
// world payload and every Server_Tick command, in arrival order.
type joinedStream struct {
	payload *snapshot.Parsed
	ticks   []lockstep.Command
	granted uint64
}

// collect reads a joiner's download (acknowledging it) and its tick
// packets, answering clock rounds, until the payload is whole and a tick
// packet granted at least until.
func (c *rawClient) collect(until uint64) joinedStream {
	c.t.Helper()
	var js joinedStream
	var payload []byte
	var total uint64
	for total == 0 || uint64(len(payload)) < total || js.granted < until {
		p := c.syncClockUntilOneOf(wire.IDServerWorldData, wire.IDServerTick)
		switch p := p.(type) {
		case *wire.ServerWorldData:
			payload, total = append(payload, p.Data...), p.Total
			c.send(&wire.ClientAck{Received: uint64(len(payload))})
		case *wire.ServerTick:
			js.ticks = append(js.ticks, p.Commands...)
			js.granted = max(js.granted, p.Granted)
		}
	}
	parsed, err := snapshot.Parse(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	js.payload = parsed
	return js
}

// replay loads the joiner's state, applies the header's commands and the
// tick packets' as the lockstep rule says, simulates to tick and returns
// the map hashes there.
func (js joinedStream) replay(t *testing.T, tick uint64) (lockstep.Sim, []uint64) {
	t.Helper()
	sim, err := js.payload.Load(locksteptest.Load, snapshot.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var queued []lockstep.Command
	for _, mc := range js.payload.Header.Commands {
		queued = append(queued, mc.Commands...)
	}
	f, err := lockstep.NewFollower(sim, queued)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Add(js.ticks...); err != nil {
		t.Fatal(err)
	}
	f.Grant(tick)
	if _, err := f.Run(int(tick)); err != nil {
		t.Fatal(err)
	}
	var hs []uint64
	for _, id := range sim.MapIDs() {
		h, _ := sim.MapHash(id)
		hs = append(hs, h)
	}
	return sim, hs
}

// TestJoinCommandsSplit pins docs/protocol.md sections 8.2 and 8.3: the
// commands since the join point's cut are split between the header's c
// (those applied before the joiner's admission) and the joiner's
// Server_Tick packets (those after), never both; the state holds the
// commands stamped with its tick that came before the cut, and neither c
// nor a tick packet carries one of those again. A client that applies
// the state, c, then its ticks ends in the host's state.
func TestJoinCommandsSplit(t *testing.T) {
	for _, tc := range []struct {
		name string
		// holdPoint keeps the join point cut before the paused tick's
		// commands in use (a joiner that never downloads), so the next
		// joiners share it; otherwise every join point expires at once
		// and the joiner's is cut at its admission, with the paused tick's
		// first commands already applied.
		holdPoint bool
	}{
		{"join point cut before the tick's commands", true},
		{"join point cut after some of its tick's commands", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := host.Config{Join: host.JoinConfig{LazyJoinPoints: true, JoinPointMaxAge: time.Nanosecond}}
			if tc.holdPoint {
				cfg.Join.JoinPointMaxAge = time.Hour
			}
			h := startHost(t, cfg, locksteptest.New(2, 64))
			if tc.holdPoint {
				carl := dialRaw(t, h.addr)
				carl.toUsername()
				carl.send(&wire.ClientUsername{Name: "Carl"})
				carl.syncClockUntil(wire.IDServerSession)
			}
			ann := dialRaw(t, h.addr)
			ann.toPlaying("Ann")
			ann.clockSynced("Ann")
			paused := ann.pause()
			add := &wire.ClientCommand{MapID: 0, Kind: locksteptest.KindAdd, Payload: []byte{1}}
			for range 3 {
				ann.send(add)
			}
			for seen := 0; seen < 3; { // applied at the paused tick, before Bob comes
				seen += len(ann.syncClockUntil(wire.IDServerTick).(*wire.ServerTick).Commands)
			}

			// Bob is admitted now; Ann's next two commands and her
			// SetSpeed(1) come after his admission.
			bob := dialRaw(t, h.addr)
			bob.toUsername()
			bob.send(&wire.ClientUsername{Name: "Bob"})
			bob.syncClockUntil(wire.IDServerSession)
			ann.send(add)
			ann.send(add)
			ann.send(&wire.ClientCommand{MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed, Payload: []byte{1}})
			js := bob.collect(paused + 1)

			hdr := js.payload.Header
			inHeader := map[cmdAt]bool{}
			for _, mc := range hdr.Commands {
				for _, c := range mc.Commands {
					inHeader[cmdAt{c.Tick, c.Seq}] = true
				}
			}
			var atPaused []uint32 // the tick packets' commands stamped with the paused tick
			for _, c := range js.ticks {
				if inHeader[cmdAt{c.Tick, c.Seq}] {
					t.Errorf("command (%d, %d) is in the header's c and came again in Server_Tick", c.Tick, c.Seq)
				}
				if c.Tick < hdr.Granted {
					t.Errorf("Server_Tick carried command (%d, %d), below the header's grant %d", c.Tick, c.Seq, hdr.Granted)
				}
				if c.Tick == paused {
					atPaused = append(atPaused, c.Seq)
				}
			}
			if want := []uint32{3, 4, 5}; !slices.Equal(atPaused, want) {
				t.Errorf("tick packets brought tick %d's commands %v, want %v: the ones after the admission", paused, atPaused, want)
			}
			if tc.holdPoint {
				// The state is older than the paused tick: c holds every
				// command since, the paused tick's first three included.
				if hdr.Tick >= paused {
					t.Fatalf("join point at tick %d, want one cut before tick %d", hdr.Tick, paused)
				}
				for q := uint32(0); q < 3; q++ {
					if !inHeader[cmdAt{paused, q}] {
						t.Errorf("command (%d, %d), applied before the admission, is not in the header's c", paused, q)
					}
				}
			} else {
				// The state is the paused tick after its first three
				// commands: c holds none of them.
				if hdr.Tick != paused || len(inHeader) != 0 {
					t.Fatalf("join point at tick %d with %d commands in c, want tick %d and none", hdr.Tick, len(inHeader), paused)
				}
				loaded, err := js.payload.Load(locksteptest.Load, snapshot.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if v := loaded.(*locksteptest.Counters).Value(0); v != 3 {
					t.Errorf("the state's map 0 holds %d, want 3: the commands stamped %d before the cut", v, paused)
				}
			}
			sim, hs := js.replay(t, paused+1)
			want, ok := h.log.at(paused + 1) // logged before the tick packet went out
			if !ok {
				t.Fatalf("the host logged no hashes at tick %d", paused+1)
			}
			if !slices.Equal(hs, want) || sim.Tick() != paused+1 {
				t.Fatalf("state + c + ticks at tick %d: hashes %x, host's %x", sim.Tick(), hs, want)
			}
		})
	}
}
