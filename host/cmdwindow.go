package host

import (
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// cmdWindow is the rejoin window: every command the session stamped over
// the last Join.RejoinWindow of wall time, at most Join.RejoinWindowBytes
// of them, so a player that dropped and still holds its world is sent
// the commands it missed instead of the world (docs/protocol.md, section
// 6.6). It holds every command stamped at tick from or later; older ones
// are gone whole ticks at a time. The session goroutine owns it.
type cmdWindow struct {
	keep     time.Duration // how long a tick's commands are kept; 0: the window is off
	maxBytes int64         // bound of bytes, payloads and per-command cost

	cmds  []lockstep.Command // in (tick, seq) order from head on
	head  int                // cmds before head are gone
	bytes int64              // the cost of cmds[head:]
	from  uint64             // every command stamped from here on is held
	marks []tickMark         // the host's tick once a second, oldest first
}

// tickMark is where the host's clock stood at a moment.
type tickMark struct {
	tick uint64
	at   time.Time
}

// commandCost is what a held command costs beyond its payload: the
// Command value and its share of the slice.
const commandCost = 64

func newCmdWindow(keep time.Duration, maxBytes int64, tick uint64) *cmdWindow {
	return &cmdWindow{keep: keep, maxBytes: maxBytes, from: tick}
}

// add keeps commands just stamped, in order.
func (w *cmdWindow) add(cmds []lockstep.Command) {
	if w.keep <= 0 {
		return
	}
	for _, c := range cmds {
		w.cmds = append(w.cmds, c)
		w.bytes += commandCost + int64(len(c.Payload))
	}
	for w.bytes > w.maxBytes && w.head < len(w.cmds) {
		w.dropTick(w.cmds[w.head].Tick)
	}
}

// advance marks the host's tick now, once a second, and lets go of the
// ticks stamped longer than keep ago.
func (w *cmdWindow) advance(now time.Time, tick uint64) {
	if w.keep <= 0 {
		w.from = tick
		return
	}
	if n := len(w.marks); n == 0 || now.Sub(w.marks[n-1].at) >= time.Second {
		w.marks = append(w.marks, tickMark{tick: tick, at: now})
	}
	i := 0
	for i < len(w.marks) && now.Sub(w.marks[i].at) > w.keep {
		i++
	}
	if i == 0 {
		return
	}
	// At marks[i-1], longer than keep ago, the host stood at its tick:
	// every tick up to it was stamped before then.
	old := w.marks[i-1].tick
	w.marks = append(w.marks[:0], w.marks[i:]...)
	if old >= w.from {
		w.dropTick(old)
	}
}

// dropTick lets go of every command stamped tick or earlier.
func (w *cmdWindow) dropTick(tick uint64) {
	for w.head < len(w.cmds) && w.cmds[w.head].Tick <= tick {
		w.bytes -= commandCost + int64(len(w.cmds[w.head].Payload))
		w.cmds[w.head] = lockstep.Command{}
		w.head++
	}
	if tick >= w.from {
		w.from = tick + 1
	}
	if w.head > len(w.cmds)/2 {
		n := copy(w.cmds, w.cmds[w.head:])
		clear(w.cmds[n:])
		w.cmds, w.head = w.cmds[:n], 0
	}
}

// since returns the commands stamped after the position (tick, applied):
// tick's from sequence applied on, then every later tick's. ok is false
// when the window no longer holds all of them.
func (w *cmdWindow) since(tick uint64, applied uint32) (cmds []lockstep.Command, ok bool) {
	if w.keep <= 0 || tick < w.from {
		return nil, false
	}
	live := w.cmds[w.head:]
	i := firstAt(live, tick)
	for i < len(live) && live[i].Tick == tick && live[i].Seq < applied {
		i++
	}
	return live[i:], true
}

// replayRaw lays cmds, the commands of a held-world rejoin, out as its
// replay (wire.AppendReplay) with the host's speed. It returns nil and
// false when they are more than wire.MaxReplayCommands or would take more
// than limit bytes.
func replayRaw(cmds []lockstep.Command, speed uint8, limit int) ([]byte, bool) {
	if len(cmds) > wire.MaxReplayCommands {
		return nil, false
	}
	out, err := wire.AppendReplay(nil, cmds, speed)
	if err != nil || len(out) > limit {
		return nil, false
	}
	return out, true
}
