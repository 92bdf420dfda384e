package colony

import (
	"encoding/binary"
	"slices"

	"github.com/lockhost/lockhost/lockstep"
)

var _ lockstep.Tracer = (*World)(nil)

// The trace (lockstep.Tracer) of a map is what a tick changes on nearly
// every tick and what is cheap to copy: the map's PRNG state, its next ID,
// its thing and pawn counts, and every pawn, field by field. Pawns are
// few (30 a map by default) next to things (hundreds to thousands), and
// everything a map does starts with a pawn or a PRNG draw: a pawn walks,
// eats, hauls, harvests; wild plants root on PRNG draws, and every new
// thing takes an ID. Things themselves are left out: copying them every
// tick would cost as much as the step (BenchmarkTraceShare measures the
// trace). A thing changed outside a step is therefore seen at the next
// checkpoint rather than at its tick, unless a pawn or an ID shows it
// first.
//
// Pawns' fields are packed two 64-bit words to a pawn: the trace is
// written after every tick, and its cost grows with every field read (a
// store for each of 17 fields cost more than twice the budget of 5% of a
// step; BenchmarkTraceShare). The pawn's ID, hunger, position and
// cool-downs are traced: hunger changes on every tick, the position with
// every step, the cool-downs with every job begun or ended. The rest (the
// job, its target, cell and progress, health, the ignored thing, what is
// carried, the path) follows from those within a tick or two or changes
// rarely, and a re-simulation compares it all. Position and cool-downs
// keep their low 16 bits (a map side is at most 4096 cells): enough to
// tell a change, the trace being a detector and not the state.
//
// The layout is little endian:
//
//	map:   rng u64, next ID u32, things u32, pawns u32, then per pawn:
//	pawn:  u64 ID | hunger<<32
//	       u64 x | y<<16 | cool<<32 | move cool<<48, 16 bits each
//	world: tick u64, rng u64, temperature i32
const (
	traceMapHead  = 8 + 3*4
	tracePawnLen  = 2 * 8
	traceWorldLen = 8 + 8 + 4
)

// AppendTrace appends the trace of map id, or of the world-level state
// for lockstep.WorldScope, to b (see the layout above). It implements
// lockstep.Tracer; an unknown map appends nothing. Like MapHash it only
// reads the world.
func (w *World) AppendTrace(id int32, b []byte) []byte {
	le := binary.LittleEndian
	if id == lockstep.WorldScope {
		b = le.AppendUint64(b, w.tick)
		b = le.AppendUint64(b, w.rng.s)
		return le.AppendUint32(b, uint32(w.temp))
	}
	m := w.mapByID(id)
	if m == nil {
		return b
	}
	off := len(b)
	need := traceMapHead + tracePawnLen*len(m.Pawns)
	b = slices.Grow(b, need)[:off+need]
	le.PutUint64(b[off:], m.RNG.s)
	le.PutUint32(b[off+8:], uint32(m.NextID))
	le.PutUint32(b[off+12:], uint32(len(m.Things)))
	le.PutUint32(b[off+16:], uint32(len(m.Pawns)))
	off += traceMapHead
	for i := range m.Pawns {
		p := &m.Pawns[i]
		s := b[off : off+tracePawnLen : off+tracePawnLen]
		le.PutUint64(s[0:], uint64(uint32(p.ID))|uint64(uint32(p.Hunger))<<32)
		le.PutUint64(s[8:], uint64(uint16(p.X))|uint64(uint16(p.Y))<<16|uint64(uint16(p.Cool))<<32|uint64(uint16(p.MoveCool))<<48)
		off += tracePawnLen
	}
	return b
}
