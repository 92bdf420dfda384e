package lockstep

import (
	"errors"
	"fmt"
)

// Follower is the joining side of lockstep: it holds commands received from
// the host and steps the simulation up to the host's grant, applying each
// command at its tick. It is owned by one goroutine.
type Follower struct {
	sim     Sim
	pending []Command // sorted by SortCommands order
	granted uint64
	speed   uint8
	applied func(Command)
	stepped func(Sim)

	doneTick uint64 // tick of the last command applied (or refused)
	doneNext uint32 // its sequence number plus one: the commands of doneTick before it are in the state
	hold     *holdPoint
}

// holdPoint is where Run stops for a repair: at tick, after the first n
// commands stamped tick.
type holdPoint struct {
	tick uint64
	n    uint32
}

// NewFollower wraps sim, which was loaded at a join point. queued are the
// commands since that join point, in any grouping; they are put in host
// order.
func NewFollower(sim Sim, queued []Command) (*Follower, error) {
	f := &Follower{sim: sim, granted: sim.Tick(), speed: 1}
	if err := f.Add(queued...); err != nil {
		return nil, err
	}
	return f, nil
}

// OnApply sets a function called after each command is applied.
func (f *Follower) OnApply(fn func(Command)) { f.applied = fn }

// OnStep sets a function called after each Step.
func (f *Follower) OnStep(fn func(Sim)) { f.stepped = fn }

// Sim returns the simulation.
func (f *Follower) Sim() Sim { return f.sim }

// Granted is the tick the host allows simulating up to.
func (f *Follower) Granted() uint64 { return f.granted }

// Behind is how many ticks the simulation may still run.
func (f *Follower) Behind() uint64 {
	if t := f.sim.Tick(); t < f.granted {
		return f.granted - t
	}
	return 0
}

// Speed is the host's speed multiplier as last commanded.
func (f *Follower) Speed() uint8 { return f.speed }

// Add records commands to apply. A command for a tick already simulated is
// an error: the host never sends one.
func (f *Follower) Add(cmds ...Command) error {
	if len(cmds) == 0 {
		return nil
	}
	t := f.sim.Tick()
	for _, c := range cmds {
		if c.Tick < t {
			return fmt.Errorf("command for tick %d arrived at tick %d", c.Tick, t)
		}
	}
	f.pending = append(f.pending, cmds...)
	SortCommands(f.pending)
	return nil
}

// Grant raises the grant to g (a lower grant is ignored).
func (f *Follower) Grant(g uint64) {
	if g > f.granted {
		f.granted = g
	}
}

// ErrRefused reports a command the host applied and this simulation
// refused: the states have diverged. Run stops there; calling it again
// goes on after the command, and a desync repair can put things right.
var ErrRefused = errors.New("the simulation refused a command the host applied")

// ErrPastHold reports a hold point the simulation has already passed.
var ErrPastHold = errors.New("the simulation is already past the hold point")

// HoldAt makes Run stop at tick after applying the first n commands stamped
// tick: the point where the host cut a state to repair this client with
// (Authority.Applied at the cut). Run then does nothing until Release. All
// commands stamped before that point must already have been added, which
// holds when HoldAt is called in stream order (the host sends the repair
// after them). It fails if the simulation is already past the point.
func (f *Follower) HoldAt(tick uint64, n uint32) error {
	t := f.sim.Tick()
	if t > tick || t == tick && f.doneTick == tick && f.doneNext > n {
		return fmt.Errorf("hold at tick %d after %d commands, simulation at tick %d: %w", tick, n, t, ErrPastHold)
	}
	f.hold = &holdPoint{tick: tick, n: n}
	return nil
}

// Held reports whether the simulation has reached the hold point and waits
// there.
func (f *Follower) Held() bool {
	if f.hold == nil || f.sim.Tick() != f.hold.tick {
		return false
	}
	// Every command before the point is applied when the next pending one
	// of this tick (if any) is at or past it.
	done := uint32(0)
	if f.doneTick == f.hold.tick {
		done = f.doneNext
	}
	return done >= f.hold.n || len(f.pending) == 0 || f.pending[0].Tick != f.hold.tick || f.pending[0].Seq >= f.hold.n
}

// Release lifts the hold point.
func (f *Follower) Release() { f.hold = nil }

// ReplaceSim swaps in a simulation at the same tick (a full repair). It
// is only allowed while Held.
func (f *Follower) ReplaceSim(sim Sim) error {
	if !f.Held() {
		return errors.New("replace the simulation only at the hold point")
	}
	if sim.Tick() != f.sim.Tick() {
		return fmt.Errorf("replacement at tick %d, simulation at %d", sim.Tick(), f.sim.Tick())
	}
	f.sim = sim
	return nil
}

// Run simulates at most max ticks toward the grant and returns how many it
// ran. Commands stamped with the tick the simulation has reached are
// applied even when no step is granted yet, as the host does while paused.
// It stops early at a hold point (HoldAt).
func (f *Follower) Run(max int) (int, error) {
	n := 0
	for {
		if err := f.applyDue(); err != nil {
			return n, err
		}
		if n >= max || f.sim.Tick() >= f.granted || f.hold != nil && f.sim.Tick() >= f.hold.tick {
			return n, nil
		}
		f.sim.Step()
		n++
		if f.stepped != nil {
			f.stepped(f.sim)
		}
	}
}

func (f *Follower) applyDue() error {
	t := f.sim.Tick()
	i := 0
	for ; i < len(f.pending) && f.pending[i].Tick == t; i++ {
		c := f.pending[i]
		if f.hold != nil && f.hold.tick == t && c.Seq >= f.hold.n {
			break // the repair goes in before this command
		}
		var err error
		if c.Kind >= KindReserved {
			err = applyEngine(c, &f.speed)
		} else {
			err = f.sim.Apply(c)
		}
		f.doneTick, f.doneNext = t, c.Seq+1
		if err != nil {
			// The host applied this command; refusing it here means the
			// states have diverged.
			f.pending = f.pending[i+1:]
			return fmt.Errorf("desync: command kind %d for map %d at tick %d: %w: %w", c.Kind, c.MapID, t, ErrRefused, err)
		}
		if f.applied != nil {
			f.applied(c)
		}
	}
	f.pending = f.pending[i:]
	return nil
}

// Position is where the simulation stands: at tick, having applied the
// first applied commands stamped tick (those with a sequence below it).
// A host that holds every command after that point can bring it up to
// date by sending only those (a held-world rejoin).
func (f *Follower) Position() (tick uint64, applied uint32) {
	tick = f.sim.Tick()
	if f.doneTick == tick {
		applied = f.doneNext
	}
	return tick, applied
}

// DropPending forgets the commands received and not applied yet, and any
// hold point: a rejoin from the held world gets every command after
// Position again.
func (f *Follower) DropPending() {
	clear(f.pending)
	f.pending = f.pending[:0]
	f.hold = nil
}
