package colony

import (
	"encoding/binary"
	"slices"
	"sync"

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
//
// A quarter's records are gathered in its buffer (q) and written to its
// digest a few KiB at a time: a digest's result does not depend on how
// its input is split, and one write per record cost more than hashing.
type partDigests struct {
	d     [partCount]xxhash.Digest
	q     [partCount][]byte // pending bytes of the quarter digests, in qb
	qb    [partCount - partThingsQ1][quarterFlush + 256]byte
	cur   *xxhash.Digest
	start int // where the next record starts in the encoder's buffer
	// terrain, when set, is the terrain's hash, known already: the
	// terrain bytes then go only into the whole map's digest.
	terrain *uint64
}

// quarterFlush is how many pending bytes a quarter gathers before they
// are written to its digest.
const quarterFlush = 4096

func (p *partDigests) init() {
	for i := range p.d {
		p.d[i].Reset()
	}
	for i := range p.qb {
		p.q[partThingsQ1+i] = p.qb[i][:0]
	}
	p.cur = &p.d[partMeta]
}

// sums writes what the quarters hold and appends every part's hash to
// out.
func (p *partDigests) sums(out []uint64) []uint64 {
	for i := range p.q {
		if len(p.q[i]) > 0 {
			_, _ = p.d[i].Write(p.q[i])
			p.q[i] = p.q[i][:0]
		}
	}
	for i := range p.d {
		if i == partTerrain && p.terrain != nil {
			out = append(out, *p.terrain)
			continue
		}
		out = append(out, p.d[i].Sum64())
	}
	return out
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
	q = base + max(0, min(3, q))
	p.q[q] = append(binary.AppendUvarint(p.q[q], uint64(uint32(id))), rec...)
	if len(p.q[q]) >= quarterFlush {
		_, _ = p.d[q].Write(p.q[q])
		p.q[q] = p.q[q][:0]
	}
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
	th := m.terrainHash()
	p.terrain = &th
	e := encoder{buf: make([]byte, 0, 8192), d: xxhash.New(), p: p}
	w.encodeMap(m, &e)
	return e.d.Sum64(), p.sums(slices.Grow(parts, partCount)), true
}

// terrainSum is the hash of a terrain, worked out once: terrain does not
// change once a map exists, so the map and its clones share it with the
// terrain, and a map that takes its own terrain to write (ownTerrain)
// drops it.
type terrainSum struct {
	once sync.Once
	sum  uint64
}

// terrainHash is xxhash64 of the map's terrain, hashed the first time it
// is asked for. Any number of goroutines may ask at once.
func (m *gameMap) terrainHash() uint64 {
	ts := m.terrainSum
	if ts == nil {
		// A map made before its terrain had a shared sum: hash it here.
		return m.Terrain.hash()
	}
	ts.once.Do(func() { ts.sum = m.Terrain.hash() })
	return ts.sum
}

// hash is xxhash64 of the terrain's cells at one byte each, the form they
// are encoded in.
func (t *terrain) hash() uint64 {
	if !t.nib {
		return xxhash.Sum64(t.b[:t.n])
	}
	d := xxhash.New()
	t.chunks(func(b []byte) { _, _ = d.Write(b) })
	return d.Sum64()
}
