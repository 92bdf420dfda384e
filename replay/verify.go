package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

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

// verifyStep is how many ticks Verify simulates between progress reports.
const verifyStep = 4096

// Verify replays a segment headless: it loads the start save, applies
// every command at its tick as a joiner's lockstep.Follower does, and
// compares the simulation's hashes with each checkpoint the host
// recorded, stopping at the first that differs. A recording that cannot
// be read is an error; one that replays but differs is a Result that is
// not OK.
func Verify(path string, load LoadStart, progress Progress) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Result{}, err
	}
	p, err := NewPlayer(path, f, st.Size(), func(start *io.SectionReader) (lockstep.Sim, error) {
		return loadExtracted(start, load)
	})
	if err != nil {
		return p.Result(), err
	}
	for !p.Done() {
		if _, err := p.Step(verifyStep); err != nil {
			return p.Result(), err
		}
		if progress != nil && !p.Done() {
			progress(p.Sim().Tick(), p.res.LastTick)
		}
	}
	if progress != nil {
		progress(p.Sim().Tick(), p.res.LastTick)
	}
	return p.Result(), nil
}

// loadExtracted writes the start save to a file of its own for load.
func loadExtracted(start *io.SectionReader, load LoadStart) (lockstep.Sim, error) {
	dir, err := os.MkdirTemp("", "lockhost-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "start.lhsave")
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(out, start)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("start save: %w", err)
	}
	return load(path)
}

// LoadSection loads the simulation a start save brings the session to,
// from the save's bytes (saves.ReadFrom and saves.LoadFrom read them).
type LoadSection func(start *io.SectionReader) (lockstep.Sim, error)

// Player replays a segment at the pace its caller sets (Verify as fast
// as it can, the browser's viewer as its speed control says): it applies
// every command at its tick and compares the simulation's hashes with
// each checkpoint the host recorded, stopping at the first that differs.
// A Player is not safe for use by more than one goroutine.
type Player struct {
	res    Result
	r      *Reader
	want   map[uint64]lockstep.Checkpoint
	checks []uint64 // the ticks of want, in order; check the first not reached
	check  int
	fol    *lockstep.Follower
	hasher lockstep.Hasher
	done   bool
	onStep func(lockstep.Sim)
}

// NewPlayer reads the segment of size bytes src holds: a first pass
// summarises it and keeps its checkpoints (small), then load makes the
// simulation from its start save. Step then streams the commands
// through it. name stands for the segment in errors. On an error the
// Player returned still has the Result so far (Info, when it was read).
func NewPlayer(name string, src io.ReaderAt, size int64, load LoadSection) (*Player, error) {
	p := &Player{want: map[uint64]lockstep.Checkpoint{}, done: true}
	first, err := NewReader(name, src, size)
	if err != nil {
		return p, err
	}
	info, err := summarise(first, p.want)
	p.res = Result{Info: info, GoodTick: info.FirstTick}
	if err != nil {
		return p, err
	}
	for tick := range p.want {
		p.checks = append(p.checks, tick)
	}
	slices.Sort(p.checks)
	if p.r, err = NewReader(name, src, size); err != nil {
		return p, err
	}
	start, err := p.r.Start()
	if err != nil {
		return p, err
	}
	sim, err := load(start)
	if err != nil {
		return p, fmt.Errorf("load the start save: %w", err)
	}
	if sim.Tick() != p.res.FirstTick {
		return p, fmt.Errorf("%w: the start save is at tick %d, the header says %d", ErrDamaged, sim.Tick(), p.res.FirstTick)
	}
	if p.fol, err = lockstep.NewFollower(sim, nil); err != nil {
		return p, err
	}
	p.fol.OnStep(p.stepped)
	p.done = false
	return p, nil
}

// OnStep has fn called after every tick, once its checkpoint (if any)
// was compared: to draw, say.
func (p *Player) OnStep(fn func(lockstep.Sim)) { p.onStep = fn }

// Sim is the simulation being replayed.
func (p *Player) Sim() lockstep.Sim { return p.fol.Sim() }

// Result is what the replay found so far.
func (p *Player) Result() Result { return p.res }

// Done reports whether the replay has ended: the recording's last
// command was applied and its last tick reached, or a checkpoint failed.
func (p *Player) Done() bool { return p.done }

// Step simulates at most n ticks, reading the frames that grant them as
// it goes, and returns how many it ran. It stops early at the end of the
// recording or at the first checkpoint that fails, at its tick (Done
// then reports true, and Result says why). A frame that cannot be read is an error.
func (p *Player) Step(n int) (int, error) {
	ran := 0
	for ran < n && !p.done {
		if p.fol.Behind() == 0 {
			if err := p.next(); err != nil {
				p.done = true
				return ran, err
			}
			if p.done {
				// The commands for the last tick reached still apply.
				_, err := p.fol.Run(0)
				return ran, p.refused(err)
			}
		}
		k, err := p.fol.Run(p.toCheck(n - ran))
		ran += k
		if err = p.refused(err); err != nil || p.res.Failure != "" {
			p.done = true
			return ran, err
		}
	}
	return ran, nil
}

// toCheck is n, or fewer when the next checkpoint comes sooner: a Step
// stops at a failing checkpoint's tick, not after it.
func (p *Player) toCheck(n int) int {
	tick := p.fol.Sim().Tick()
	for p.check < len(p.checks) && p.checks[p.check] <= tick {
		p.check++
	}
	if p.check < len(p.checks) && p.checks[p.check]-tick < uint64(n) {
		return int(p.checks[p.check] - tick)
	}
	return n
}

// refused turns a command the simulation refused into the Result's
// failure; other errors are returned.
func (p *Player) refused(err error) error {
	if errors.Is(err, lockstep.ErrRefused) {
		p.res.FailedTick, p.res.Failure = p.fol.Sim().Tick(), err.Error()
		p.done = true
		return nil
	}
	return err
}

// next reads frames up to the next commands frame and grants its ticks;
// at the end of the recording it sets done.
func (p *Player) next() error {
	for {
		fr, err := p.r.Next()
		if errors.Is(err, io.EOF) {
			p.done = true
			return nil
		}
		if err != nil {
			return err
		}
		if fr.Kind != KindCommands {
			continue
		}
		if err := p.fol.Add(fr.Commands.Commands...); err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		p.fol.Grant(fr.Commands.To)
		if p.fol.Behind() > 0 {
			return nil
		}
	}
}

// stepped compares the state after a step with the checkpoint the host
// took at that tick, if any.
func (p *Player) stepped(s lockstep.Sim) {
	p.res.Ticks++
	if p.res.Failure == "" {
		if cp, ok := p.want[s.Tick()]; ok {
			if why := compare(cp, p.hasher.Take(s)); why != "" {
				p.res.FailedTick, p.res.Failure = cp.Tick, why
			} else {
				p.res.Checked++
				p.res.GoodTick = cp.Tick
			}
		}
	}
	if p.onStep != nil {
		p.onStep(s)
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
