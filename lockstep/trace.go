package lockstep

import (
	"bytes"
	"encoding/binary"
)

// TickTrace is one machine's record of one tick: the commands it applied
// at the tick and, when the game is a Tracer, the traces of its state
// right after the tick's Step.
type TickTrace struct {
	// Tick is the tick simulated: the commands stamped Tick were applied,
	// then the Step that took the simulation from Tick to Tick+1.
	Tick uint64
	// Commands is CommandsHash of the commands applied at Tick, in the
	// order they were applied; NCommands is how many there were.
	Commands  uint64
	NCommands int
	// World is the world-level trace (Tracer.AppendTrace of WorldScope);
	// Maps are the maps' traces in MapIDs order. Both are empty for a game
	// that is not a Tracer.
	World []byte
	Maps  []MapTrace
}

// MapTrace is one map's trace at a tick.
type MapTrace struct {
	ID   int32
	Data []byte
}

// Map returns map id's trace and whether the tick has one.
func (t *TickTrace) Map(id int32) ([]byte, bool) {
	if id == WorldScope {
		return t.World, true
	}
	for i := range t.Maps {
		if t.Maps[i].ID == id {
			return t.Maps[i].Data, true
		}
	}
	return nil, false
}

// SameState tells whether two records of a tick agree on the traced state
// of the world and of map id (WorldScope: the world alone).
func (t *TickTrace) SameState(o *TickTrace, id int32) bool {
	if !bytes.Equal(t.World, o.World) {
		return false
	}
	if id == WorldScope {
		return true
	}
	a, _ := t.Map(id)
	b, _ := o.Map(id)
	return bytes.Equal(a, b)
}

// clone is a deep copy of t.
func (t *TickTrace) clone() TickTrace {
	c := *t
	c.World = bytes.Clone(t.World)
	c.Maps = make([]MapTrace, len(t.Maps))
	for i, m := range t.Maps {
		c.Maps[i] = MapTrace{ID: m.ID, Data: bytes.Clone(m.Data)}
	}
	return c
}

// CommandsHash folds one applied command into h, the hash of the commands
// applied before it at the same tick (start from 0). It is FNV-1a over the
// command's tick, sequence number, map, kind, player and payload, so two
// machines agree on it exactly when they applied the same commands in the
// same order.
func CommandsHash(h uint64, c Command) uint64 {
	const prime = 1099511628211
	if h == 0 {
		h = 14695981039346656037
	}
	var b [26]byte
	binary.LittleEndian.PutUint64(b[0:], c.Tick)
	binary.LittleEndian.PutUint32(b[8:], c.Seq)
	binary.LittleEndian.PutUint32(b[12:], uint32(c.MapID))
	binary.LittleEndian.PutUint16(b[16:], c.Kind)
	binary.LittleEndian.PutUint32(b[18:], uint32(c.Player))
	binary.LittleEndian.PutUint32(b[22:], uint32(len(c.Payload)))
	for _, x := range b {
		h = (h ^ uint64(x)) * prime
	}
	for _, x := range c.Payload {
		h = (h ^ uint64(x)) * prime
	}
	return h
}

// TraceLog keeps the traces of the last few ticks of one simulation, and
// the commands applied in them: what a machine needs to show, after a
// desync, how its own live run went and to run it again. It is cheap
// enough to keep always: per tick it costs one Tracer.AppendTrace per
// map, copied into buffers it reuses, and nothing for a game that is not
// a Tracer but hashing the commands applied.
//
// Feed it from the goroutine that owns the simulation: Applied after each
// command is applied (Follower.OnApply), Stepped after each Step
// (Follower.OnStep). It is not safe for concurrent use; Since copies what
// it hands out.
type TraceLog struct {
	ring []TickTrace
	head int // index of the oldest record
	n    int // records held

	cmdTick uint64 // tick of the commands hashed in cmdHash
	cmdHash uint64
	cmdN    int
	cmds    []Command // applied, from the oldest record's tick on
}

// NewTraceLog returns a log that keeps the last keep ticks (at least 1).
// To explain a desync found at a checkpoint, it must still reach back to
// the checkpoint before when the host asks: one checkpoint interval plus
// the ticks the host takes to ask. Twice the interval leaves a whole
// interval for that; a longer log costs more than memory, as each tick
// then writes where the caches have long let go.
func NewTraceLog(keep int) *TraceLog {
	return &TraceLog{ring: make([]TickTrace, max(1, keep))}
}

// Applied records a command applied at its tick.
func (l *TraceLog) Applied(c Command) {
	if c.Tick != l.cmdTick || l.cmdN == 0 {
		l.cmdTick, l.cmdHash, l.cmdN = c.Tick, 0, 0
	}
	l.cmdHash = CommandsHash(l.cmdHash, c)
	l.cmdN++
	l.cmds = append(l.cmds, c)
}

// Stepped records the tick sim has just simulated (sim.Tick()-1): the
// commands Applied at it and, when sim is a Tracer, its traces.
func (l *TraceLog) Stepped(sim Sim) {
	tick := sim.Tick() - 1
	i := l.head + l.n
	if i >= len(l.ring) {
		i -= len(l.ring)
	}
	if l.n == len(l.ring) {
		if l.head++; l.head == len(l.ring) {
			l.head = 0
		}
	} else {
		l.n++
	}
	r := &l.ring[i]
	oldest := l.ring[l.head].Tick
	if l.n == 1 {
		oldest = tick
	}
	n := 0
	for n < len(l.cmds) && l.cmds[n].Tick < oldest {
		n++
	}
	if n > 0 {
		l.cmds = append(l.cmds[:0], l.cmds[n:]...)
	}
	r.Tick, r.Commands, r.NCommands = tick, 0, 0
	if l.cmdN > 0 && l.cmdTick == tick {
		r.Commands, r.NCommands = l.cmdHash, l.cmdN
	}
	l.cmdN = 0
	tr, ok := sim.(Tracer)
	if !ok {
		r.World, r.Maps = r.World[:0], r.Maps[:0]
		return
	}
	r.World = tr.AppendTrace(WorldScope, r.World[:0])
	ids := sim.MapIDs()
	if cap(r.Maps) < len(ids) {
		r.Maps = append(r.Maps[:cap(r.Maps)], make([]MapTrace, len(ids)-cap(r.Maps))...)
	}
	r.Maps = r.Maps[:len(ids)]
	for k, id := range ids {
		r.Maps[k].ID = id
		r.Maps[k].Data = tr.AppendTrace(id, r.Maps[k].Data[:0])
	}
}

// Commands returns the commands Applied at ticks from on that the log
// still covers, in the order they were applied.
func (l *TraceLog) Commands(from uint64) []Command {
	var out []Command
	for _, c := range l.cmds {
		if c.Tick >= from {
			out = append(out, c)
		}
	}
	return out
}

// Since returns copies of the records of ticks from on, oldest first.
func (l *TraceLog) Since(from uint64) []TickTrace {
	var out []TickTrace
	for k := 0; k < l.n; k++ {
		r := &l.ring[(l.head+k)%len(l.ring)]
		if r.Tick >= from {
			out = append(out, r.clone())
		}
	}
	return out
}
