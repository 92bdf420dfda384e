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
// tests do, where the "player" is a world with a planted fault). The
// player's half, and the runs, requests and replies both halves share,
// are package resim's, which links nothing of the host's: Run, Side,
// Request, Reply and Answer here are its.
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
	"hash/fnv"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/resim"
)

// The parts both halves share, package resim's.
type (
	// Run is one side's re-simulation of the window (resim.Run).
	Run = resim.Run
	// Side is one machine's account of the window (resim.Side).
	Side = resim.Side
	// Request is what the host asks of the player (resim.Request).
	Request = resim.Request
	// Reply is the player's side of the window (resim.Reply).
	Reply = resim.Reply
)

// Answer is the player's half of an explanation (resim.Answer).
func Answer(req Request, player Side) (*Reply, error) { return resim.Answer(req, player) }

// Resimulate re-simulates a window (resim.Resimulate).
func Resimulate(sim lockstep.Sim, cmds []lockstep.Command, from, to uint64, ids []int32) (*Run, error) {
	return resim.Resimulate(sim, cmds, from, to, ids)
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
		for _, id := range resim.WithWorld(ids) {
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

// blobHash is a hash of an encoding, to name a map whose encodings differ
// when the game cannot say how.
func blobHash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}
