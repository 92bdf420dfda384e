package explain

import (
	"errors"
	"hash/fnv"
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
		return nil, errNoStart
	}
	run, err := resim(player, req.From, req.To, req.Maps)
	if err != nil {
		return nil, err
	}
	if !sameShape(req.Host, run) {
		return nil, errors.New("explain: the host's run does not cover the requested window")
	}
	rep := &Reply{Run: run, Commands: player.Commands, Live: player.Live}
	if tick, ids, ok := firstHashDiff(req.Host, run); ok {
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
		if rep.End, err = encode(player.End, withWorld(req.Maps)); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// sameShape tells whether two runs cover the same window and IDs.
func sameShape(a, b *Run) bool {
	return a != nil && b != nil && a.From == b.From && a.To == b.To && slices.Equal(a.IDs, b.IDs) &&
		len(a.Hashes) == len(b.Hashes)
}

// blobHash is a hash of an encoding, to name a map whose encodings differ
// when the game cannot say how.
func blobHash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
