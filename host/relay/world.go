package relay

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// errNoState is what a relay host's state encoders return: it holds none.
var errNoState = errors.New("a relay host holds no world state: its arbiter uploads it")

// World is the stand-in for a simulation on a relay host. The session
// drives it like any lockstep.Sim: commands are applied (accepted as they
// are: their payloads are opaque), ticks stepped. Where a simulating host
// would freeze its state for a join point, Clone returns a Cut at the
// current tick and applied count and hands it to the ask function, which
// requests the upload that fills it in.
//
// A World starts without a world (HasWorld false) at tick 0; Start takes
// the arbiter's first upload and moves the tick to its own. Only the
// session goroutine calls its methods.
type World struct {
	tick    uint64
	has     bool
	maps    atomic.Pointer[[]int32] // the maps of the latest point, read by the status page too
	ask     func(*Cut)
	applied func() uint32
	wait    time.Duration
}

// NewWorld returns a World with no world yet; ask is called with each Cut
// made, on the session goroutine, and each Cut's Point waits at most wait
// for the upload. applied says how many commands stamped with the current
// tick the session has applied, engine commands included (the World
// sees only the game's: lockstep.Authority.Applied); a Cut is made after
// that many.
func NewWorld(ask func(*Cut), applied func() uint32, wait time.Duration) *World {
	return &World{ask: ask, applied: applied, wait: wait}
}

// HasWorld reports whether the arbiter's first upload was taken.
func (w *World) HasWorld() bool { return w.has }

// Start takes p, the arbiter's first upload, as the session's world: the
// tick becomes p's. It must be called between two ticks, with no command
// applied at the current tick.
func (w *World) Start(p *snapshot.Point) {
	w.tick, w.has = p.Tick, true
	w.Seen(p)
}

// Resume moves a started world to tick: a session resumed from a save,
// whose commands since its point run to there.
func (w *World) Resume(tick uint64) {
	w.tick = tick
}

// Seen records the maps of an accepted point, for MapIDs. Any goroutine
// may call it.
func (w *World) Seen(p *snapshot.Point) {
	ids := make([]int32, len(p.Maps))
	for i, m := range p.Maps {
		ids[i] = m.ID
	}
	w.maps.Store(&ids)
}

// Tick implements lockstep.Sim.
func (w *World) Tick() uint64 { return w.tick }

// Apply implements lockstep.Sim: every command is taken, its payload
// unread. The host checked its size and kind before.
func (w *World) Apply(cmd lockstep.Command) error { return nil }

// Step implements lockstep.Sim.
func (w *World) Step() { w.tick++ }

// MapIDs implements lockstep.Sim: the maps of the latest accepted point
// (the host relays commands for any map ID regardless).
func (w *World) MapIDs() []int32 {
	if p := w.maps.Load(); p != nil {
		return *p
	}
	return nil
}

// MapHash implements lockstep.Sim: a relay host has no state to hash.
func (w *World) MapHash(int32) (uint64, bool) { return 0, false }

// WorldHash implements lockstep.Sim: a relay host has no state to hash.
func (w *World) WorldHash() uint64 { return 0 }

// MarshalWorld implements lockstep.Sim; a relay host holds no state.
func (w *World) MarshalWorld() ([]byte, error) { return nil, errNoState }

// MarshalMap implements lockstep.Sim; a relay host holds no state.
func (w *World) MarshalMap(int32) ([]byte, error) { return nil, errNoState }

// Clone implements lockstep.Cloner: the cut at the current tick and
// applied count, to be filled by the arbiter's upload.
func (w *World) Clone() lockstep.Sim {
	var applied uint32
	if w.applied != nil {
		applied = w.applied()
	}
	c := NewCut(w.tick, applied, w.wait)
	if w.ask != nil {
		w.ask(c)
	}
	return c
}

// Cut is a join point a relay host asked its arbiter for: the state at
// Tick after Applied commands stamped Tick. It is filled once, by Deliver
// or Fail; Point waits for that. It is a lockstep.Sim only so that the
// host can hold it where a frozen simulation goes: its state methods say
// it holds no state.
type Cut struct {
	tick    uint64
	applied uint32
	wait    time.Duration

	done  chan struct{}
	once  sync.Once
	point *snapshot.Point
	err   error
}

// NewCut returns an empty cut at (tick, applied) whose Point waits at
// most wait for the upload.
func NewCut(tick uint64, applied uint32, wait time.Duration) *Cut {
	return &Cut{tick: tick, applied: applied, wait: wait, done: make(chan struct{})}
}

// Applied is how many commands of Tick the cut includes.
func (c *Cut) Applied() uint32 { return c.applied }

// Deliver fills the cut with the arbiter's upload. It reports false when
// the cut was already filled (or failed); p's tick must be the cut's.
func (c *Cut) Deliver(p *snapshot.Point) bool {
	ok := false
	c.once.Do(func() {
		c.point, ok = p, true
		close(c.done)
	})
	return ok
}

// Fail ends the wait of everyone waiting for the cut with err.
func (c *Cut) Fail(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}

// Filled reports whether Deliver or Fail was called.
func (c *Cut) Filled() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// ErrWaitedTooLong is Point's error when the upload did not come in time.
var ErrWaitedTooLong = errors.New("the arbiter did not upload the world in time")

// ErrArbiterLeft is a Cut's error when the arbiter asked for it left
// before it uploaded it.
var ErrArbiterLeft = errors.New("the arbiter left before it uploaded the join point")

// Point waits for the upload, at most the cut's wait, and returns it.
func (c *Cut) Point() (*snapshot.Point, error) {
	if c.Filled() {
		return c.point, c.err
	}
	t := time.NewTimer(c.wait)
	defer t.Stop()
	select {
	case <-c.done:
		return c.point, c.err
	case <-t.C:
		return nil, fmt.Errorf("tick %d: %w", c.tick, ErrWaitedTooLong)
	}
}

// Tick implements lockstep.Sim: the cut's tick.
func (c *Cut) Tick() uint64 { return c.tick }

// Apply implements lockstep.Sim; a cut is never given a command.
func (c *Cut) Apply(lockstep.Command) error { return errNoState }

// Step implements lockstep.Sim; a cut is never stepped.
func (c *Cut) Step() {}

// MapIDs implements lockstep.Sim: the uploaded maps, once filled.
func (c *Cut) MapIDs() []int32 {
	if !c.Filled() || c.point == nil {
		return nil
	}
	ids := make([]int32, len(c.point.Maps))
	for i, m := range c.point.Maps {
		ids[i] = m.ID
	}
	return ids
}

// MapHash implements lockstep.Sim: a relay host has no state to hash.
func (c *Cut) MapHash(int32) (uint64, bool) { return 0, false }

// WorldHash implements lockstep.Sim: the upload's world hash, once filled.
func (c *Cut) WorldHash() uint64 {
	if !c.Filled() || c.point == nil {
		return 0
	}
	return c.point.WorldHash
}

// MarshalWorld implements lockstep.Sim; a cut holds no state of its own.
func (c *Cut) MarshalWorld() ([]byte, error) { return nil, errNoState }

// MarshalMap implements lockstep.Sim; a cut holds no state of its own.
func (c *Cut) MarshalMap(int32) ([]byte, error) { return nil, errNoState }
