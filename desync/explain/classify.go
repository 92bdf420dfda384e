package explain

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/resim"
)

// DefaultMaxDifferences is how many differences an Explanation lists when
// Input.MaxDifferences is 0.
const DefaultMaxDifferences = 64

// Input is a desync to explain.
type Input struct {
	// From is the last checkpoint at which the hashes matched, To the one
	// at which they differ.
	From, To uint64
	// Maps are the maps whose hashes differ at To. The world-level state
	// is always compared too.
	Maps []int32
	// Host and Player are the two sides.
	Host, Player Side
	// Differ names differences; nil: the host's simulation, if it is a
	// lockstep.StateDiffer. Without one only the tick, the kind and the
	// differing maps are known.
	Differ lockstep.StateDiffer
	// MaxDifferences bounds Explanation.Differences (0:
	// DefaultMaxDifferences).
	MaxDifferences int
}

// Explain explains a desync: the first tick at which the player's state
// departed from the host's, what kind of divergence it was and what
// differs (see the package documentation). It works on copies only (the
// sides' Start) and reads End, so it can run on any goroutine while the
// session goes on.
//
// It is the host's half (HostRun, Combine) and the player's (Answer) in
// one process.
func Explain(in Input) (*desync.Explanation, error) {
	if in.Host.Start == nil || in.Player.Start == nil {
		return nil, resim.ErrNoStart
	}
	hr, err := HostRun(in)
	if err != nil {
		return nil, err
	}
	rep, err := Answer(Request{From: in.From, To: in.To, Maps: in.Maps, Host: hr}, in.Player)
	if err != nil {
		return nil, fmt.Errorf("player's side: %w", err)
	}
	return Combine(in, hr, rep)
}

// HostRun is the host's re-simulation of the window (in.Host), to send
// to the player in a Request and to Combine with the player's Reply.
func HostRun(in Input) (*Run, error) {
	if in.Host.Start == nil {
		return nil, resim.ErrNoStart
	}
	hr, err := resim.RunSide(in.Host, in.From, in.To, in.Maps)
	if err != nil {
		return nil, fmt.Errorf("host's side: %w", err)
	}
	return hr, nil
}

// Combine makes the explanation on the host from its own side of the
// window (in.Host; in.Player is not used), its re-simulation host
// (HostRun) and the player's Reply to a Request made of them.
func Combine(in Input, host *Run, rep *Reply) (*desync.Explanation, error) {
	if rep == nil || rep.Run == nil || !resim.SameShape(host, rep.Run) {
		return nil, errors.New("explain: the player's reply does not cover the host's window")
	}
	if in.Differ == nil {
		in.Differ = host.Differ
	}
	ex := &explainer{in: in, hr: host, pr: rep.Run, rep: rep}
	return ex.explain()
}

// explainer holds the two re-simulations while an Explanation is made.
type explainer struct {
	in     Input
	hr, pr *Run
	rep    *Reply // the player's side
	out    desync.Explanation
}

func (ex *explainer) explain() (*desync.Explanation, error) {
	in := ex.in
	ex.out = desync.Explanation{From: in.From, Differences: []desync.Difference{}}
	simTick, simIDs, simOK := resim.FirstHashDiff(ex.hr, ex.pr)
	cmdTick, cmdOK := firstCommandDiff(in.Host.Commands, ex.rep.Commands)
	hostLive := in.Host.Live
	if hostLive == nil {
		hostLive = ex.hr.Trace
	}
	liveTick, liveIDs, liveOK := firstTraceDiff(hostLive, ex.rep.Live, in.Maps)
	// The player's live run against its own re-simulation: where they
	// part, the live run was not the simulation's doing.
	reproTick, _, reproOK := firstTraceDiff(ex.pr.Trace, ex.rep.Live, in.Maps)
	var err error
	switch {
	case simOK && (!reproOK || reproTick > simTick):
		if cmdOK && cmdTick <= simTick {
			ex.out.Kind, ex.out.FirstTick, ex.out.Exact = desync.KindCommand, cmdTick, true
			ex.commandDiffs(cmdTick)
		} else {
			ex.out.Kind, ex.out.FirstTick, ex.out.Exact = desync.KindSimulation, simTick, true
		}
		err = ex.stateDiffs(simTick, simIDs)
	case liveOK:
		ex.out.Kind, ex.out.FirstTick, ex.out.Exact = desync.KindOutside, liveTick, true
		if cmdOK && cmdTick <= liveTick {
			ex.out.Kind, ex.out.FirstTick = desync.KindCommand, cmdTick
			ex.commandDiffs(cmdTick)
		}
		err = ex.traceDiffs(hostLive, liveTick, liveIDs)
	default:
		// Neither the re-simulation nor the trace shows it: a field the
		// trace leaves out changed outside a step somewhere in the window.
		ex.out.Kind, ex.out.FirstTick = desync.KindOutside, in.To-1
		err = ex.endDiffs()
	}
	if err != nil {
		return nil, err
	}
	ex.trim()
	return &ex.out, nil
}

// add appends differences.
func (ex *explainer) add(ds []lockstep.Difference) {
	for _, d := range ds {
		ex.out.Differences = append(ex.out.Differences, desync.Difference{Path: d.Path, Host: d.Host, Player: d.Player})
	}
}

// trim keeps MaxDifferences differences.
func (ex *explainer) trim() {
	n := ex.in.MaxDifferences
	if n <= 0 {
		n = DefaultMaxDifferences
	}
	if len(ex.out.Differences) > n {
		ex.out.Omitted = len(ex.out.Differences) - n
		ex.out.Differences = ex.out.Differences[:n]
	}
}

// stateDiffs re-simulates both sides through tick and diffs the maps ids
// there; without a StateDiffer it names the maps whose hashes differ.
func (ex *explainer) stateDiffs(tick uint64, ids []int32) error {
	if ex.in.Differ == nil {
		k := tick - ex.in.From
		for j, id := range ex.hr.IDs {
			if slices.Contains(ids, id) {
				ex.hashDiff(id, ex.hr.Hashes[k][j], ex.pr.Hashes[k][j])
			}
		}
		return nil
	}
	if ex.rep.State == nil || ex.rep.DiffTick != tick {
		return fmt.Errorf("explain: the player's reply has no state at tick %d", tick)
	}
	sim, err := ex.in.Host.Start()
	if err != nil {
		return err
	}
	host, err := resim.StateAt(sim, ex.in.Host.Commands, tick, ids)
	if err != nil {
		return err
	}
	return ex.diff(ids, host, ex.rep.State, ex.in.Differ.DiffMap)
}

// traceDiffs diffs the host's and the player's live traces at tick.
func (ex *explainer) traceDiffs(hostLive []lockstep.TickTrace, tick uint64, ids []int32) error {
	if ex.in.Differ == nil {
		return ex.stateDiffs(tick, ids)
	}
	at := func(tr []lockstep.TickTrace) map[int32][]byte {
		out := map[int32][]byte{}
		for i := range tr {
			if tr[i].Tick == tick {
				for _, id := range ids {
					out[id], _ = tr[i].Map(id)
				}
			}
		}
		return out
	}
	return ex.diff(ids, at(hostLive), at(ex.rep.Live), ex.in.Differ.DiffTrace)
}

// endDiffs diffs the two sides' live states at the end of the window.
func (ex *explainer) endDiffs() error {
	h, ps := ex.in.Host.End, ex.rep.End
	if h == nil || ps == nil {
		return nil
	}
	ids := resim.WithWorld(ex.in.Maps)
	hs, err := resim.Encode(h, ids)
	if err != nil {
		return err
	}
	if ex.in.Differ == nil {
		for _, id := range ids {
			ex.hashDiff(id, blobHash(hs[id]), blobHash(ps[id]))
		}
		return nil
	}
	return ex.diff(ids, hs, ps, ex.in.Differ.DiffMap)
}

// hashDiff names a map (or the world) whose hashes differ, for a game
// that cannot name fields.
func (ex *explainer) hashDiff(id int32, host, player uint64) {
	if host != player {
		ex.out.Differences = append(ex.out.Differences, desync.Difference{
			Path: scopeName(id) + " / hash", Host: fmt.Sprintf("%016x", host), Player: fmt.Sprintf("%016x", player)})
	}
}

// diff diffs each ID's pair of blobs with f.
func (ex *explainer) diff(ids []int32, host, player map[int32][]byte, f func(int32, []byte, []byte) ([]lockstep.Difference, error)) error {
	for _, id := range ids {
		ds, err := f(id, host[id], player[id])
		if err != nil {
			return err
		}
		ex.add(ds)
	}
	return nil
}

// commandDiffs names the commands at tick that the two sides applied a
// different number of times, or, when every command was applied as often,
// says the order differs.
func (ex *explainer) commandDiffs(tick uint64) {
	h, p := commandsAt(ex.in.Host.Commands, tick), commandsAt(ex.in.Player.Commands, tick)
	var seen []lockstep.Command
	for _, c := range append(slices.Clone(h), p...) {
		if slices.ContainsFunc(seen, func(s lockstep.Command) bool { return sameCommand(s, c) }) {
			continue
		}
		seen = append(seen, c)
		nh, np := count(h, c), count(p, c)
		if nh != np {
			path := fmt.Sprintf("tick %d / command %d (map %d, kind %d, player %d)", tick, c.Seq, c.MapID, c.Kind, c.Player)
			ex.out.Differences = append(ex.out.Differences, desync.Difference{Path: path, Host: times(nh), Player: times(np)})
		}
	}
	if len(ex.out.Differences) == 0 {
		ex.out.Differences = append(ex.out.Differences, desync.Difference{
			Path: fmt.Sprintf("tick %d / command order", tick), Host: seqs(h), Player: seqs(p)})
	}
}

// firstCommandDiff is the first tick at which the two sides applied
// different commands.
func firstCommandDiff(a, b []lockstep.Command) (uint64, bool) {
	i := 0
	for ; i < len(a) && i < len(b); i++ {
		if !sameCommand(a[i], b[i]) {
			return min(a[i].Tick, b[i].Tick), true
		}
	}
	switch {
	case i < len(a):
		return a[i].Tick, true
	case i < len(b):
		return b[i].Tick, true
	}
	return 0, false
}

func sameCommand(a, b lockstep.Command) bool {
	return a.Tick == b.Tick && a.Seq == b.Seq && a.MapID == b.MapID && a.Kind == b.Kind && a.Player == b.Player && string(a.Payload) == string(b.Payload)
}

func commandsAt(cmds []lockstep.Command, tick uint64) []lockstep.Command {
	var out []lockstep.Command
	for _, c := range cmds {
		if c.Tick == tick {
			out = append(out, c)
		}
	}
	return out
}

func count(cmds []lockstep.Command, c lockstep.Command) int {
	n := 0
	for _, x := range cmds {
		if sameCommand(x, c) {
			n++
		}
	}
	return n
}

func times(n int) string {
	switch n {
	case 0:
		return "not applied"
	case 1:
		return "applied once"
	case 2:
		return "applied twice"
	}
	return "applied " + strconv.Itoa(n) + " times"
}

func seqs(cmds []lockstep.Command) string {
	s := "seq"
	for _, c := range cmds {
		s += " " + strconv.FormatUint(uint64(c.Seq), 10)
	}
	return s
}

func scopeName(id int32) string {
	if id == lockstep.WorldScope {
		return "world"
	}
	return "map " + strconv.Itoa(int(id))
}
