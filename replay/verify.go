package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lockhost/lockhost/lockstep"
)

// LoadStart loads the simulation a start save brings the session to:
// package saves reads the file at path and the game's content loads it
// (cmd/host's replay command uses hostcontent.LoadSave).
type LoadStart func(path string) (lockstep.Sim, error)

// Result is what Verify found.
type Result struct {
	Info
	// Ticks is how many ticks were simulated; Checked how many
	// checkpoints were compared and matched before any failure.
	Ticks   uint64
	Checked int
	// FailedTick is the checkpoint whose hashes differ (or the tick
	// whose command the simulation refused), 0 when none failed;
	// GoodTick the last checkpoint that matched before it (the start's
	// tick when none did): the divergence lies in the ticks after GoodTick
	// up to FailedTick. Failure says what differed.
	FailedTick, GoodTick uint64
	Failure              string
}

// OK reports whether every checkpoint matched.
func (r Result) OK() bool { return r.Failure == "" }

// Progress is told how far a Verify has come: the tick reached and the
// last tick of the recording.
type Progress func(tick, last uint64)

// Verify replays a segment headless: it loads the start save, applies
// every command at its tick as a joiner's lockstep.Follower does, and
// compares the simulation's hashes with each checkpoint the host
// recorded, stopping at the first that differs. A recording that cannot
// be read is an error; one that replays but differs is a Result that is
// not OK.
func Verify(path string, load LoadStart, progress Progress) (Result, error) {
	// First pass: the summary and the checkpoints, which are small; the
	// second streams the commands through the simulation.
	info, err := Summarise(path)
	if err != nil {
		return Result{}, err
	}
	v := &verifier{res: Result{Info: info, GoodTick: info.FirstTick}, progress: progress}
	if v.want, err = checkpoints(path); err != nil {
		return v.res, err
	}
	r, err := Open(path)
	if err != nil {
		return v.res, err
	}
	defer r.Close()
	if err := v.start(r, load); err != nil {
		return v.res, err
	}
	for v.res.Failure == "" {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return v.res, err
		}
		if fr.Kind != KindCommands {
			continue
		}
		if err := v.fol.Add(fr.Commands.Commands...); err != nil {
			return v.res, fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		if err := v.runTo(fr.Commands.To); err != nil {
			return v.res, err
		}
	}
	if progress != nil {
		progress(v.fol.Sim().Tick(), info.LastTick)
	}
	return v.res, nil
}

// verifier is one Verify's replay.
type verifier struct {
	res      Result
	want     map[uint64]lockstep.Checkpoint
	fol      *lockstep.Follower
	hasher   lockstep.Hasher
	progress Progress
}

// start loads the start save into a Follower that checks each step
// against the recorded checkpoints.
func (v *verifier) start(r *Reader, load LoadStart) error {
	dir, err := os.MkdirTemp("", "lockhost-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	start := filepath.Join(dir, "start.lhsave")
	if err := r.ExtractStart(start); err != nil {
		return err
	}
	sim, err := load(start)
	if err != nil {
		return fmt.Errorf("load the start save: %w", err)
	}
	if sim.Tick() != v.res.FirstTick {
		return fmt.Errorf("%w: the start save is at tick %d, the header says %d", ErrDamaged, sim.Tick(), v.res.FirstTick)
	}
	if v.fol, err = lockstep.NewFollower(sim, nil); err != nil {
		return err
	}
	v.fol.OnStep(v.stepped)
	return nil
}

// stepped compares the state after a step with the checkpoint the host
// took at that tick, if any.
func (v *verifier) stepped(s lockstep.Sim) {
	v.res.Ticks++
	if v.res.Failure != "" {
		return
	}
	cp, ok := v.want[s.Tick()]
	if !ok {
		return
	}
	if why := compare(cp, v.hasher.Take(s)); why != "" {
		v.res.FailedTick, v.res.Failure = cp.Tick, why
		return
	}
	v.res.Checked++
	v.res.GoodTick = cp.Tick
}

// runTo simulates up to tick to, as the host had when it cut the frame.
func (v *verifier) runTo(to uint64) error {
	v.fol.Grant(to)
	for {
		n, err := v.fol.Run(4096)
		if errors.Is(err, lockstep.ErrRefused) {
			v.res.FailedTick, v.res.Failure = v.fol.Sim().Tick(), err.Error()
			return nil
		}
		if err != nil {
			return err
		}
		if v.res.Failure != "" || n == 0 || v.fol.Behind() == 0 {
			return nil
		}
		if v.progress != nil {
			v.progress(v.fol.Sim().Tick(), v.res.LastTick)
		}
	}
}

// checkpoints reads a segment's checkpoint frames by tick.
func checkpoints(path string) (map[uint64]lockstep.Checkpoint, error) {
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := map[uint64]lockstep.Checkpoint{}
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if fr.Kind == KindCheckpoint {
			out[fr.Checkpoint.Tick] = *fr.Checkpoint
		}
	}
}

// compare says how the replayed hashes differ from the recorded
// ones, or "" when they agree.
func compare(want, got lockstep.Checkpoint) string {
	var differ []int32
	for _, m := range want.Maps {
		g := got.Map(m.ID)
		if g == nil {
			return fmt.Sprintf("map %d is in the recording, not in the replay", m.ID)
		}
		if g.Hash != m.Hash {
			differ = append(differ, m.ID)
		}
	}
	if len(got.Maps) != len(want.Maps) {
		return fmt.Sprintf("the replay has %d maps, the recording %d", len(got.Maps), len(want.Maps))
	}
	switch {
	case len(differ) > 0:
		return fmt.Sprintf("the hashes of map(s) %v differ from the host's", differ)
	case got.World != want.World:
		return "the world hash differs from the host's (every map's matches)"
	}
	return ""
}
