package snapshot

import (
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// ThinMaps are a join point's map blobs with their regenerable section
// (MapPoint.Section) left out, for joiners that make the sections
// themselves. They are built once per point and codec and shared by every
// such joiner, like the point.
type ThinMaps struct {
	// Blobs holds, by map index in the point, the map's encoding without
	// its section, compressed; a zero Blob (nil Data) for a map without a
	// section, or whose section's bytes did not match its hash.
	Blobs []Blob
	// Offsets are where each section was cut from the map's encoding.
	Offsets []uint64
}

// Size is the compressed size of the thin blobs.
func (t *ThinMaps) Size() uint64 {
	var n uint64
	for _, b := range t.Blobs {
		n += uint64(len(b.Data))
	}
	return n
}

// Thin makes the thin blobs of p's maps that have a section: each blob is
// inflated (within maxRaw when not 0), its section checked against the
// section's hash and cut out, and the rest compressed with c, maps in
// parallel on up to workers goroutines (0 means GOMAXPROCS).
func Thin(p *Point, c Compression, workers int, maxRaw int64) (*ThinMaps, error) {
	t := &ThinMaps{Blobs: make([]Blob, len(p.Maps)), Offsets: make([]uint64, len(p.Maps))}
	err := eachMap(p.Maps, workers, func(i int, m MapPoint) error {
		return t.thin(i, m, c, maxRaw)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// thin fills entry i from map m.
func (t *ThinMaps) thin(i int, m MapPoint, c Compression, maxRaw int64) error {
	s := m.Section
	if s == nil {
		return nil
	}
	limit := maxRaw
	if limit <= 0 {
		limit = int64(m.Blob.RawSize)
	}
	raw, err := Decompress(m.Blob, limit)
	if err != nil {
		return err
	}
	if s.Len > uint64(len(raw)) || s.Offset > uint64(len(raw))-s.Len {
		return nil
	}
	if xxhash.Sum64(raw[s.Offset:s.Offset+s.Len]) != s.Hash {
		return nil
	}
	rest := append(raw[:s.Offset], raw[s.Offset+s.Len:]...) // in place: the move is a memmove
	b, err := Compress(rest, c)
	if err != nil {
		return err
	}
	t.Blobs[i], t.Offsets[i] = b, s.Offset
	return nil
}

// Splice returns the encoding of a map sent thin: raw, the thin blob
// inflated, with section put back at offset (the header's MapInfo.Cut).
// It uses raw's spare capacity when there is enough, so section must not
// lie in that capacity (the fuzzer found what happens then).
func Splice(raw []byte, offset uint64, section []byte) ([]byte, error) {
	if offset > uint64(len(raw)) {
		return nil, fmt.Errorf("%w: section cut at %d of a %d-byte map", ErrMalformed, offset, len(raw))
	}
	n := len(raw) + len(section)
	var out []byte
	if cap(raw) >= n {
		out = raw[:n]
		copy(out[int(offset)+len(section):], raw[offset:])
	} else {
		out = make([]byte, n)
		copy(out, raw[:offset])
		copy(out[int(offset)+len(section):], raw[offset:])
	}
	copy(out[offset:], section)
	return out, nil
}
