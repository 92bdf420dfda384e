package lockstep

import (
	"errors"
	"fmt"
)

// MaxSpeed is the highest speed multiplier.
const MaxSpeed = 3

// MaxTick is the last tick a session reaches (the protocol spec, section
// 3): 2^48, which the clock at its fastest (1000 ticks a second at speed
// MaxSpeed) reaches in about 2,970 years. A world or a save at a later
// tick is refused, so that no tick, nor a tick plus any window or count
// the host adds to it, comes near the end of uint64.
const MaxTick = 1 << 48

// ErrBadSpeed reports a KindSetSpeed command with a bad payload.
var ErrBadSpeed = errors.New("speed must be one byte from 0 to 3")

// Rejection is a submitted command the simulation refused.
type Rejection struct {
	Cmd Command
	Err error
}

// TickResult is what one Advance did: the commands stamped Tick in the
// order applied, the ones refused, and the new grant.
type TickResult struct {
	Tick     uint64
	Accepted []Command
	Rejected []Rejection
	Granted  uint64
	Stepped  bool
}

// Authority is the host's side of lockstep: it stamps submitted commands
// with the tick they run at, applies them, keeps them per map since the
// join point, and steps the simulation. It is owned by one goroutine.
type Authority struct {
	sim     Sim
	pending []Command
	queues  *Queues
	speed   uint8
	seqTick uint64 // tick that seq counts within
	seq     uint32 // next sequence number at seqTick
}

// NewAuthority wraps sim at normal speed.
func NewAuthority(sim Sim) *Authority {
	return &Authority{sim: sim, queues: NewQueues(), speed: 1}
}

// Sim returns the simulation. Only the owning goroutine may use it.
func (a *Authority) Sim() Sim { return a.sim }

// Queues returns the commands since the current join point.
func (a *Authority) Queues() *Queues { return a.queues }

// Speed is the current speed multiplier (0 = paused).
func (a *Authority) Speed() uint8 { return a.speed }

// Submit queues a command for the next Advance. Tick is overwritten there.
func (a *Authority) Submit(c Command) { a.pending = append(a.pending, c) }

// Applied is how many commands stamped with the current tick have been
// applied: a state cut now is the state at Tick() after those. A repair
// (Follower.HoldAt) names this point.
func (a *Authority) Applied() uint32 {
	if a.seqTick != a.sim.Tick() {
		return 0
	}
	return a.seq
}

// Replay records c, a command applied before the Authority took over (a
// relay save's commands since its join point, which the simulation's
// state is already past): c is queued as applied, and, stamped with the
// current tick, counts in Applied, so that the next command of that tick
// follows it. The simulation is not given c, and an engine command does
// not change the speed: a resumed session runs at normal speed. Replay
// commands in the order they were applied; one stamped after the current
// tick is an error.
func (a *Authority) Replay(c Command) error {
	t := a.sim.Tick()
	if c.Tick > t {
		return fmt.Errorf("a command stamped %d, after the current tick %d", c.Tick, t)
	}
	if c.Tick == t {
		if a.seqTick != t {
			a.seqTick, a.seq = t, 0
		}
		a.seq = max(a.seq, c.Seq+1)
	}
	a.queues.Append(c)
	return nil
}

// Pending is the number of submitted commands not yet stamped.
func (a *Authority) Pending() int { return len(a.pending) }

// Bounds of one Advance's batch, so that the commands of one result fit one
// tick packet well under a client's 1 MiB frame limit: at most
// MaxBatchCommands commands, and no more payload bytes than MaxBatchBytes
// (a single command over it still goes, alone). The wire overhead of a
// command is under 64 bytes, so a batch encodes to at most
// MaxBatchBytes + 64 x MaxBatchCommands = 768 KiB.
const (
	MaxBatchCommands = 4096
	MaxBatchBytes    = 512 << 10
)

// Advance stamps and applies the pending commands at the current tick, in
// the order submitted, and, if step is true, simulates that tick. Applied
// commands are queued per map. The grant in the result covers every
// command applied so far. When more is pending than one batch holds
// (MaxBatchCommands, MaxBatchBytes), Advance applies one batch and does
// not step, whatever step says: the caller calls it again, and the tick's
// commands continue their sequence in the next result.
func (a *Authority) Advance(step bool) TickResult {
	t := a.sim.Tick()
	res := TickResult{Tick: t}
	if len(a.pending) > 0 {
		cmds := a.pending
		a.pending = nil
		if n := batchLen(cmds); n < len(cmds) {
			a.pending = append([]Command(nil), cmds[n:]...)
			cmds, step = cmds[:n], false
		}
		if a.seqTick != t {
			a.seqTick, a.seq = t, 0
		}
		for _, c := range cmds {
			c.Tick, c.Seq = t, a.seq
			if err := a.apply(c); err != nil {
				res.Rejected = append(res.Rejected, Rejection{Cmd: c, Err: err})
				continue
			}
			a.seq++
			res.Accepted = append(res.Accepted, c)
			a.queues.Append(c)
		}
	}
	if step {
		a.sim.Step()
		res.Stepped = true
	}
	res.Granted = a.sim.Tick()
	return res
}

// batchLen is how many of cmds, from the first, one batch takes: at least
// one, at most MaxBatchCommands, and no more than MaxBatchBytes of
// payload unless the first alone is larger.
func batchLen(cmds []Command) int {
	bytes := 0
	for i, c := range cmds {
		bytes += len(c.Payload)
		if i == MaxBatchCommands || (i > 0 && bytes > MaxBatchBytes) {
			return i
		}
	}
	return len(cmds)
}

func (a *Authority) apply(c Command) error {
	if c.Kind >= KindReserved {
		return applyEngine(c, &a.speed)
	}
	return a.sim.Apply(c)
}

// applyEngine runs an engine-owned command against the engine state.
func applyEngine(c Command, speed *uint8) error {
	switch c.Kind {
	case KindSetSpeed:
		if c.MapID != WorldScope || len(c.Payload) != 1 || c.Payload[0] > MaxSpeed {
			return ErrBadSpeed
		}
		*speed = c.Payload[0]
		return nil
	}
	return fmt.Errorf("unknown engine command kind %#x", c.Kind)
}

// SetSpeed builds a KindSetSpeed command.
func SetSpeed(speed uint8) Command {
	return Command{MapID: WorldScope, Kind: KindSetSpeed, Payload: []byte{speed}}
}
