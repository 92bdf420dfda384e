package colony

import (
	"encoding/binary"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

var (
	_ lockstep.MapDigester = (*World)(nil)
	_ lockstep.WorldHasher = (*World)(nil)
)

// The parts of a map that MapDigest hashes, in the order of MapPartNames.
const (
	partMeta     = iota // header, ID, size, PRNG, next ID, wild target
	partTerrain         // the terrain bytes
	partThings          // thing count and thing records
	partPawns           // pawn count and pawn records
	partThingsQ1        // things by quarter of the map's height: q1..q4
	_
	_
	_
	partPawnsQ1 // pawns by quarter of the map's height: q1..q4
	_
	_
	_
	partCount
)

var partNames = [partCount]string{
	"meta", "terrain", "things", "pawns",
	"things rows q1", "things rows q2", "things rows q3", "things rows q4",
	"pawns rows q1", "pawns rows q2", "pawns rows q3", "pawns rows q4",
}

// partDigests are the digests an encoder feeds besides the whole map's
// (encoder.p): cur is the digest of the section being encoded, one of the
// first four; each thing and pawn record also goes into the digest of its
// quarter.
type partDigests struct {
	d     [partCount]xxhash.Digest
	cur   *xxhash.Digest
	tmp   [128]byte // a record with its ID, to hash it in one write
	start int       // where the next record starts in the encoder's buffer
}

func (p *partDigests) init() {
	for i := range p.d {
		p.d[i].Reset()
	}
	p.cur = &p.d[partMeta]
}

// part makes part i (a section) the current part. What is buffered so
// far belongs to the previous one, so it is flushed first.
func (e *encoder) part(i int) {
	if e.p != nil {
		e.flush()
		e.p.cur = &e.p.d[i]
	}
}

// recordsStart marks the end of a section's count: the section's first
// record starts here.
func (e *encoder) recordsStart() {
	if e.p != nil {
		e.p.start = len(e.buf)
	}
}

// record hashes the record just encoded (a thing's or a pawn's: the bytes
// since the last record or recordsStart) into the digest of the quarter
// of the map's height (h) that holds row y: first the record's ID (an
// unsigned varint), then the record's bytes after its ID delta. The
// absolute ID stands in for the delta, which depends on the record before
// it, maybe in another quarter: so a quarter's hash depends only on the
// records in it. Records are self-delimiting, so the quarter streams
// together determine the whole section.
func (p *partDigests) record(e *encoder, base int, id, y, h int32) {
	rec := e.buf[p.start:]
	p.start = len(e.buf)
	n := 0 // skip the ID delta
	for n < len(rec) && rec[n] >= 0x80 {
		n++
	}
	rec = rec[min(n+1, len(rec)):]
	q := int(int64(y) * 4 / int64(max(h, 1)))
	q = max(0, min(3, q))
	d := &p.d[base+q]
	if len(rec)+binary.MaxVarintLen32 > len(p.tmp) { // a pawn with a long path
		_, _ = d.Write(binary.AppendUvarint(p.tmp[:0], uint64(uint32(id))))
		_, _ = d.Write(rec)
		return
	}
	b := binary.AppendUvarint(p.tmp[:0], uint64(uint32(id)))
	_, _ = d.Write(append(b, rec...))
}

// MapPartNames names the part hashes MapDigest appends, in order (it
// implements lockstep.MapDigester). The names are the same for every map:
//
//   - "meta": the encoding up to the terrain: header, map ID, width,
//     height, PRNG state, next ID and wild target;
//   - "terrain": the terrain bytes;
//   - "things": the thing count and every thing record;
//   - "pawns": the pawn count and every pawn record (with its path);
//   - "things rows q1" .. "things rows q4": the things whose row (Y) lies
//     in the first .. last quarter of the map's height (row y is in
//     quarter y*4/height + 1), in ID order;
//   - "pawns rows q1" .. "pawns rows q4": the same for pawns.
//
// The four sections are hashed as encoded (MarshalMap's bytes, cut at the
// section boundaries). A quarter hashes, for each of its records, the
// record's ID followed by the record's encoding after its ID delta, so it
// depends on nothing outside the quarter. The result is a fresh slice the
// caller may keep.
func (w *World) MapPartNames() []string { return slices.Clone(partNames[:]) }

// MapDigest returns MapHash(id) and appends the hashes of the map's parts
// (MapPartNames) to parts; ok is false for an unknown map, and parts is
// then returned as it was. It implements lockstep.MapDigester: when two
// machines' MapHash of a map differ, the parts that differ tell what
// diverged (meta covers the map's PRNG and next ID; the quarters narrow a
// thing or pawn difference down to a band of rows).
//
// It encodes the map once, like MapHash, feeding every byte into the whole
// map's digest and into its section's, and every thing or pawn record
// also into its quarter's. Like MapHash it only reads the world.
func (w *World) MapDigest(id int32, parts []uint64) (h uint64, out []uint64, ok bool) {
	m := w.mapByID(id)
	if m == nil {
		return 0, parts, false
	}
	p := new(partDigests)
	p.init()
	e := encoder{buf: make([]byte, 0, 8192), d: xxhash.New(), p: p}
	w.encodeMap(m, &e)
	out = slices.Grow(parts, partCount)
	for i := range p.d {
		out = append(out, p.d[i].Sum64())
	}
	return e.d.Sum64(), out, true
}
