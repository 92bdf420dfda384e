package colony

import (
	"encoding/binary"
	"slices"
)

// nibbleTerrains is the most terrain types a map may have for its terrain
// to be kept at four bits a cell.
const nibbleTerrains = 16

// terrainChunk is how many cells the encoder and the hash unpack at a time.
const terrainChunk = 16 << 10

// terrain is a map's terrain index per cell, cell y*W+x. It is kept at
// four bits a cell (low nibble first) when the content has at most
// nibbleTerrains terrain types, else at one byte a cell. Either way it
// encodes and hashes as one byte a cell: the layout is a memory matter
// only.
type terrain struct {
	b   []byte // the cells, packed two to a byte when nib
	n   int    // the number of cells
	nib bool   // four bits a cell
}

// newTerrain returns an all-zero terrain of n cells for content with
// types terrain types.
func newTerrain(n, types int) terrain {
	if types <= nibbleTerrains {
		return terrain{b: make([]byte, (n+1)/2), n: n, nib: true}
	}
	return terrain{b: make([]byte, n), n: n}
}

// packTerrain returns a terrain holding the cells of raw (one byte each,
// each below types). With keep and the one-byte layout, it holds raw
// itself rather than a copy.
func packTerrain(raw []byte, types int, keep bool) terrain {
	if types > nibbleTerrains {
		if !keep {
			raw = slices.Clone(raw)
		}
		return terrain{b: raw[:len(raw):len(raw)], n: len(raw)}
	}
	t := newTerrain(len(raw), types)
	t.setRange(0, raw)
	return t
}

// len returns the number of cells.
func (t *terrain) len() int { return t.n }

// at returns the terrain index of cell c.
func (t *terrain) at(c int32) uint8 {
	if t.nib {
		return t.b[c>>1] >> (uint(c&1) << 2) & 0xf
	}
	return t.b[c]
}

// setRange sets the cells from c on to src, one byte each.
func (t *terrain) setRange(c int, src []byte) {
	if !t.nib {
		copy(t.b[c:c+len(src)], src)
		return
	}
	i := 0
	if c&1 == 1 && len(src) > 0 {
		p := &t.b[c>>1]
		*p = *p&0x0f | src[0]<<4
		i, c = 1, c+1
	}
	dst := t.b[c>>1:]
	for ; i+16 <= len(src); i += 16 {
		binary.LittleEndian.PutUint32(dst, pack8(binary.LittleEndian.Uint64(src[i:])))
		binary.LittleEndian.PutUint32(dst[4:], pack8(binary.LittleEndian.Uint64(src[i+8:])))
		dst = dst[8:]
	}
	for ; i+1 < len(src); i += 2 {
		dst[0] = src[i]&0xf | src[i+1]<<4
		dst = dst[1:]
	}
	if i < len(src) {
		dst[0] = dst[0]&0xf0 | src[i]&0xf
	}
}

// unpack fills dst with the cells from c on, one byte each, and returns it.
func (t *terrain) unpack(dst []byte, c int) []byte {
	if !t.nib {
		copy(dst, t.b[c:c+len(dst)])
		return dst
	}
	i := 0
	if c&1 == 1 && len(dst) > 0 {
		dst[0] = t.b[c>>1] >> 4
		i, c = 1, c+1
	}
	src := t.b[c>>1:]
	for d := dst[i:]; len(d) >= 8 && len(src) >= 4; d = d[8:] {
		s := src[:4:4]
		binary.LittleEndian.PutUint64(d, uint64(nibPairs[s[0]])|uint64(nibPairs[s[1]])<<16|
			uint64(nibPairs[s[2]])<<32|uint64(nibPairs[s[3]])<<48)
		src = src[4:]
		i += 8
	}
	for ; i+1 < len(dst); i += 2 {
		v := src[0]
		dst[i], dst[i+1] = v&0xf, v>>4
		src = src[1:]
	}
	if i < len(dst) {
		dst[i] = src[0] & 0xf
	}
	return dst
}

// nibPairs[b] is packed byte b unpacked: its low nibble in the low byte,
// its high nibble in the high byte.
var nibPairs = func() (t [256]uint16) {
	for b := range t {
		t[b] = uint16(b&0xf) | uint16(b>>4)<<8
	}
	return t
}()

// pack8 packs eight cells of one byte each (all below 16, the first in the
// low byte) into four bytes of two cells each, the first in the low nibble.
func pack8(x uint64) uint32 {
	x = (x | x>>4) & 0x00ff00ff00ff00ff // lane k: cell 2k | cell 2k+1 << 4
	x = (x | x>>8) & 0x0000ffff0000ffff
	return uint32(x | x>>16)
}

// chunks calls f with the cells in order, one byte each, in pieces of at
// most terrainChunk cells. The one-byte layout is passed as it is; the
// packed one is unpacked into one reused scratch buffer, so f must not
// keep what it is given.
func (t *terrain) chunks(f func([]byte)) {
	if !t.nib {
		if t.n > 0 {
			f(t.b[:t.n])
		}
		return
	}
	buf := make([]byte, min(t.n, terrainChunk))
	for c := 0; c < t.n; c += terrainChunk {
		f(t.unpack(buf[:min(terrainChunk, t.n-c)], c))
	}
}

// clone returns a copy that shares no memory with t.
func (t *terrain) clone() terrain {
	return terrain{b: slices.Clone(t.b), n: t.n, nib: t.nib}
}
