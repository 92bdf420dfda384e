package lockstep

import (
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

// Run simulates at most max ticks toward the grant and returns how many it
// ran. Commands stamped with the tick the simulation has reached are
// applied even when no step is granted yet, as the host does while paused.
func (f *Follower) Run(max int) (int, error) {
	n := 0
	for {
		if err := f.applyDue(); err != nil {
			return n, err
		}
		if n >= max || f.sim.Tick() >= f.granted {
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
		var err error
		if c.Kind >= KindReserved {
			err = applyEngine(c, &f.speed)
		} else {
			err = f.sim.Apply(c)
		}
		if err != nil {
			// The host applied this command; refusing it here means the
			// states have diverged.
			f.pending = f.pending[i+1:]
			return fmt.Errorf("desync: command kind %d for map %d at tick %d: %w", c.Kind, c.MapID, t, err)
		}
		if f.applied != nil {
			f.applied(c)
		}
	}
	f.pending = f.pending[i:]
	return nil
}
