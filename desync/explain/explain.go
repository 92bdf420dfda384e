// Package explain works out, after a desync, the first tick at which a
// player's state departed from the host's, what differed, and what kind
// of divergence it was (desync.Explanation).
//
// # How
//
// A checkpoint only says that the states differ at its tick (To); the one
// before it (From) matched. Everything needed to replay the window from
// From to To is small: a copy of each side's state at From (a Clone taken
// at every checkpoint), the commands each side applied since, and each
// side's live trace (lockstep.TraceLog: a few bytes per map per tick,
// cheap enough to keep always). Explain then:
//
//  1. re-simulates both sides from their states at From with their own
//     commands, hashing the differing maps (and the world-level state)
//     after every tick: the first tick whose hashes differ is where the
//     player's simulation departs from the host's when run again;
//  2. compares the commands each side applied, tick by tick;
//  3. compares the player's live trace with the host's and with the
//     player's own re-simulation: a live run that the re-simulation does
//     not reproduce was changed outside a step or is not reproducible;
//  4. encodes the differing maps of both sides at the first differing
//     tick (re-simulating once more) and has the game diff them field by
//     field (lockstep.StateDiffer); when only the live run diverged, the
//     traces at that tick are diffed instead.
//
// Tracing every tick fully would cost twenty times the step itself, so
// the full hashes are only computed here, on copies, off the session's
// goroutine, and only after a desync.
//
// The kind follows from the three comparisons (see desync's Kind
// constants): when the re-simulation diverges where the player's live run
// did, a difference in the applied commands at or before that tick makes
// it KindCommand, otherwise KindSimulation; when the re-simulation does
// not diverge, or diverges otherwise than the live run, it is
// KindOutside.
//
// In a session the two re-simulations run on different machines: the
// player's must run the player's code. HostRun and Combine are the
// host's halves, Answer the player's (a Request goes to the player, a
// Reply comes back); Explain puts them together in one process (as the
// tests do, where the "player" is a world with a planted fault).
//
// # In a session
//
// Always on, each player whose game can copy itself keeps a
// lockstep.TraceLog (its trace and the commands it applied, two
// checkpoint intervals long) and a copy of its state at its last three
// checkpoints (package join); the host keeps copies at its own last four
// checkpoints (package host). When a checkpoint To differs and the last
// one at which the player matched was From, the host, off its session
// goroutine:
//
//  1. re-simulates From..To from its copy at From with its commands
//     (HostRun);
//  2. sends the player a Server_ExplainRequest: From, To, the differing
//     maps and its per-tick hashes (RequestFromWire on the player's
//     side, FlatHashes on the host's);
//  3. the player, off its own simulation's goroutine (Answer),
//     re-simulates from its own copy at From with its own code and
//     logged commands, finds the first tick whose hashes differ from the
//     host's (T) and answers in Client_ExplainReply chunks with the
//     answer document (EncodeReply): its per-tick hashes and trace, its
//     live trace records and applied commands of the window, its
//     encoding at T of the maps that differ there, and its encodings at
//     To from its copy there (End);
//  4. the host reads the answer against its request (DecodeReply),
//     compares and diffs (Combine), and puts the Explanation into the
//     desync report, the status page and a notice.
//
// The wire form is docs/protocol.md section 10.1. The player starts from
// its own copy rather than from the host's encoding of the state at From
// (which would spare it the copy at every checkpoint but cost a world's
// worth of bytes on the wire per explanation).
package explain

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/lockhost/lockhost/lockstep"
)

// Run is one side's re-simulation of the window From..To.
type Run struct {
	From, To uint64
	// IDs are the maps hashed, lockstep.WorldScope first for the
	// world-level state.
	IDs []int32
	// Hashes holds, per tick From..To-1, the hashes of IDs after the
	// tick: MapHash for a map, a hash of MarshalWorld for WorldScope.
	Hashes [][]uint64
	// Trace is the re-simulation's own trace, per tick From..To-1.
	Trace []lockstep.TickTrace

	differ lockstep.StateDiffer // the simulation, if it is one
}

// Resimulate steps sim, which stands at tick from, to tick to, applying
// cmds (the commands one side applied in the window, in order) at their
// ticks, and hashes the maps ids and the world-level state after every
// tick. It consumes sim: hand it a copy. Commands of the engine's kinds
// are traced but not applied; a command the simulation refuses is
// skipped, as it was in the live run.
func Resimulate(sim lockstep.Sim, cmds []lockstep.Command, from, to uint64, ids []int32) (*Run, error) {
	if sim.Tick() != from {
		return nil, fmt.Errorf("explain: the state to re-simulate is at tick %d, the window starts at %d", sim.Tick(), from)
	}
	if to < from {
		return nil, fmt.Errorf("explain: window %d..%d", from, to)
	}
	run := &Run{From: from, To: to, IDs: withWorld(ids)}
	run.differ, _ = sim.(lockstep.StateDiffer)
	log := lockstep.NewTraceLog(int(to - from))
	err := replay(sim, cmds, to, log, func(s lockstep.Sim) error {
		h, err := hashes(s, run.IDs)
		run.Hashes = append(run.Hashes, h)
		return err
	})
	if err != nil {
		return nil, err
	}
	run.Trace = log.Since(from)
	return run, nil
}

// StateAt steps sim (at the window's first tick) through tick, applying
// cmds as Resimulate does, and returns the encodings of the maps ids and,
// for lockstep.WorldScope, of the world-level state, right after tick.
// It consumes sim.
func StateAt(sim lockstep.Sim, cmds []lockstep.Command, tick uint64, ids []int32) (map[int32][]byte, error) {
	if sim.Tick() > tick {
		return nil, fmt.Errorf("explain: the state is at tick %d, past tick %d", sim.Tick(), tick)
	}
	if err := replay(sim, cmds, tick+1, nil, nil); err != nil {
		return nil, err
	}
	return encode(sim, ids)
}

// replay runs sim to tick to, applying cmds at their ticks; after each
// step it feeds log (if any) and calls after (if any).
func replay(sim lockstep.Sim, cmds []lockstep.Command, to uint64, log *lockstep.TraceLog, after func(lockstep.Sim) error) error {
	i := 0
	for i < len(cmds) && cmds[i].Tick < sim.Tick() {
		i++
	}
	for sim.Tick() < to {
		t := sim.Tick()
		for ; i < len(cmds) && cmds[i].Tick == t; i++ {
			c := cmds[i]
			if c.Kind < lockstep.KindReserved {
				if sim.Apply(c) != nil {
					continue // refused in the live run too: not traced there
				}
			}
			if log != nil {
				log.Applied(c)
			}
		}
		if i < len(cmds) && cmds[i].Tick < t {
			return fmt.Errorf("explain: command for tick %d after tick %d's", cmds[i].Tick, t)
		}
		sim.Step()
		if log != nil {
			log.Stepped(sim)
		}
		if after != nil {
			if err := after(sim); err != nil {
				return err
			}
		}
	}
	return nil
}

// withWorld is ids with lockstep.WorldScope first, once.
func withWorld(ids []int32) []int32 {
	out := []int32{lockstep.WorldScope}
	for _, id := range ids {
		if id != lockstep.WorldScope {
			out = append(out, id)
		}
	}
	return out
}

func hashes(sim lockstep.Sim, ids []int32) ([]uint64, error) {
	out := make([]uint64, len(ids))
	for k, id := range ids {
		if id == lockstep.WorldScope {
			b, err := sim.MarshalWorld()
			if err != nil {
				return nil, err
			}
			h := fnv.New64a()
			_, _ = h.Write(b)
			out[k] = h.Sum64()
			continue
		}
		h, ok := sim.MapHash(id)
		if !ok {
			return nil, fmt.Errorf("explain: no map %d", id)
		}
		out[k] = h
	}
	return out, nil
}

func encode(sim lockstep.Sim, ids []int32) (map[int32][]byte, error) {
	out := make(map[int32][]byte, len(ids))
	for _, id := range ids {
		var b []byte
		var err error
		if id == lockstep.WorldScope {
			b, err = sim.MarshalWorld()
		} else {
			b, err = sim.MarshalMap(id)
		}
		if err != nil {
			return nil, fmt.Errorf("explain: encode map %d: %w", id, err)
		}
		out[id] = b
	}
	return out, nil
}

// firstHashDiff is the first tick at which the two runs' hashes differ,
// with the IDs that differ there.
func firstHashDiff(a, b *Run) (tick uint64, ids []int32, ok bool) {
	for k := range min(len(a.Hashes), len(b.Hashes)) {
		for j, id := range a.IDs {
			if a.Hashes[k][j] != b.Hashes[k][j] {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			return a.From + uint64(k), ids, true
		}
	}
	return 0, nil, false
}

// firstTraceDiff is the first tick at which two traces of the same ticks
// differ, in the commands applied or in the state of the world or of one
// of ids, with the IDs whose traces differ (none when only the commands
// do). Ticks one side lacks are skipped.
func firstTraceDiff(a, b []lockstep.TickTrace, ids []int32) (tick uint64, diff []int32, ok bool) {
	byTick := make(map[uint64]*lockstep.TickTrace, len(b))
	for i := range b {
		byTick[b[i].Tick] = &b[i]
	}
	for i := range a {
		o := byTick[a[i].Tick]
		if o == nil {
			continue
		}
		for _, id := range withWorld(ids) {
			x, _ := a[i].Map(id)
			y, _ := o.Map(id)
			if !bytes.Equal(x, y) {
				diff = append(diff, id)
			}
		}
		if len(diff) > 0 || a[i].Commands != o.Commands || a[i].NCommands != o.NCommands {
			return a[i].Tick, diff, true
		}
	}
	return 0, nil, false
}

// errNoStart is a Side without a way to copy its starting state.
var errNoStart = errors.New("explain: a side has no starting state")
