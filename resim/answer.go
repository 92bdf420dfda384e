package resim

import (
	"errors"
	"slices"

	"github.com/lockhost/lockhost/lockstep"
)

// Request is what the host asks of the player after a desync: the window,
// the maps that differ at its end, and the host's re-simulation of it
// (HostRun; the player needs its hashes, not its trace).
type Request struct {
	From, To uint64
	Maps     []int32
	Host     *Run
}

// Reply is the player's side of the window, all the host needs of it to
// Combine.
type Reply struct {
	// Run is the player's re-simulation of the window with its own code.
	Run *Run
	// Commands and Live are the player's applied commands and live trace
	// of the window (its Side's).
	Commands []lockstep.Command
	Live     []lockstep.TickTrace
	// DiffTick is the first tick at which Run's hashes differ from the
	// host's, and State holds the player's encodings right after it of
	// the maps (and the world-level state) that differ there. State is
	// nil when the re-simulations agree.
	DiffTick uint64
	State    map[int32][]byte
	// End holds the player's live encodings, at the end of the window,
	// of the differing maps and the world-level state (from its Side's
	// End); nil without one.
	End map[int32][]byte
}

// Answer is the player's half of an explanation: it re-simulates the
// window from player.Start with the player's own code and commands,
// finds where that departs from the host's re-simulation, and encodes the
// player's state there. It works on copies (player.Start) and only reads
// player.End, so the player runs it off its simulation's goroutine.
func Answer(req Request, player Side) (*Reply, error) {
	if player.Start == nil || req.Host == nil {
		return nil, ErrNoStart
	}
	run, err := RunSide(player, req.From, req.To, req.Maps)
	if err != nil {
		return nil, err
	}
	if !SameShape(req.Host, run) {
		return nil, errors.New("explain: the host's run does not cover the requested window")
	}
	rep := &Reply{Run: run, Commands: player.Commands, Live: player.Live}
	if tick, ids, ok := FirstHashDiff(req.Host, run); ok {
		sim, err := player.Start()
		if err != nil {
			return nil, err
		}
		if rep.State, err = StateAt(sim, player.Commands, tick, ids); err != nil {
			return nil, err
		}
		rep.DiffTick = tick
	}
	if player.End != nil {
		if rep.End, err = Encode(player.End, WithWorld(req.Maps)); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// SameShape tells whether two runs cover the same window and IDs.
func SameShape(a, b *Run) bool {
	return a != nil && b != nil && a.From == b.From && a.To == b.To && slices.Equal(a.IDs, b.IDs) &&
		len(a.Hashes) == len(b.Hashes)
}

// Side is one machine's account of the window.
type Side struct {
	// Start returns a fresh copy of the machine's state at the window's
	// first tick (Input.From), one Explain may step and command; Explain
	// calls it more than once. A Clone kept at every checkpoint does, but
	// costs a copy of the world every interval (the default colony world:
	// about 18 µs a copy, some 4% of the 60 steps between two
	// checkpoints). Cheaper and as good: the hashes matched at
	// From, so the player's state there is the host's, and the player can
	// start from the host's encoding of it, decoded by the player's own
	// code; the host gets its own by re-simulating from its join point.
	Start func() (lockstep.Sim, error)
	// Commands are the commands the machine applied at ticks From..To-1,
	// in the order it applied them (a command applied twice appears
	// twice).
	Commands []lockstep.Command
	// Live is the machine's live trace of ticks From..To-1
	// (lockstep.TraceLog.Since). The player's is what tells a live run
	// apart from its re-simulation; the host's may be nil: its
	// re-simulation stands in for it.
	Live []lockstep.TickTrace
	// End is the machine's live state at To (the clone taken at that
	// checkpoint), only read; optional. When the divergence shows in
	// neither the re-simulation nor the trace, the two ends are diffed.
	End lockstep.Sim
}

// RunSide re-simulates the window from..to of one side: from a fresh copy
// of its start with its commands (Resimulate).
func RunSide(s Side, from, to uint64, maps []int32) (*Run, error) {
	if s.Start == nil {
		return nil, ErrNoStart
	}
	sim, err := s.Start()
	if err != nil {
		return nil, err
	}
	return Resimulate(sim, s.Commands, from, to, maps)
}
