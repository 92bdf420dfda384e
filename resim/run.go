package resim

import (
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

	// Differ is the simulation, if it is a lockstep.StateDiffer: the
	// host's names the differences.
	Differ lockstep.StateDiffer
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
	run := &Run{From: from, To: to, IDs: WithWorld(ids)}
	run.Differ, _ = sim.(lockstep.StateDiffer)
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
	return Encode(sim, ids)
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

// WithWorld is ids with lockstep.WorldScope first, once: the IDs a run
// hashes.
func WithWorld(ids []int32) []int32 {
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

// Encode returns sim's encodings of the maps ids, and of the world-level
// state for lockstep.WorldScope.
func Encode(sim lockstep.Sim, ids []int32) (map[int32][]byte, error) {
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

// FirstHashDiff is the first tick at which the two runs' hashes differ,
// with the IDs that differ there.
func FirstHashDiff(a, b *Run) (tick uint64, ids []int32, ok bool) {
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

// ErrNoStart is a Side without a way to copy its starting state.
var ErrNoStart = errors.New("explain: a side has no starting state")
