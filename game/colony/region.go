package colony

import (
	"math/bits"
	"slices"
)

// Regions: the connected areas pawns can walk in. A job whose target lies
// in another region than the pawn cannot be reached, so it is refused
// without a path search.
//
// Pawns move to the eight neighbours but never cut a corner: a diagonal
// step needs both orthogonal cells passable, and then the cell is reachable
// through them anyway. So regions are the 4-connected components of the
// passable cells. Only equality of labels matters (0 for an impassable
// cell), so how labels are numbered does not affect the simulation.
//
// A region map stores each row's passable spans, not a label per cell:
// memory grows with the spans (a few per row on generated terrain), not
// with the area. A change of passability (an impassable building built or
// gone) rescans only its row and then relabels the spans with a union-find
// pass, which costs time in proportion to the spans, not the cells.

// span is a maximal run of passable cells in one row, x0..x1 inclusive.
// MaxSide fits in 16 bits.
type span struct{ x0, x1 uint16 }

type regionMap struct {
	spans []span  // row by row, each row by x
	start []int32 // spans of row y are spans[start[y]:start[y+1]]
	label []int32 // region of each span, >= 1
	dirty []bool  // rows to rescan
	ndirt int     // number of dirty rows
}

// touch marks row y for a rescan: its passability changed.
func (g *regionMap) touch(y int32) {
	if !g.dirty[y] {
		g.dirty[y] = true
		g.ndirt++
	}
}

// regionOf returns the region of cell c, 0 if c is impassable.
func (m *gameMap) regionOf(r *rules, c int32) int32 {
	g := m.regions(r)
	x, y := uint16(c%m.W), c/m.W
	row := g.spans[g.start[y]:g.start[y+1]]
	lo, hi := 0, len(row)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if row[mid].x1 < x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(row) && row[lo].x0 <= x {
		return g.label[int(g.start[y])+lo]
	}
	return 0
}

// regions returns the region map, building or refreshing it as needed.
func (m *gameMap) regions(r *rules) *regionMap {
	g := m.reg
	switch {
	case g == nil:
		g = &regionMap{dirty: make([]bool, m.H)}
		g.spans, g.start = m.scanRows(r, nil, nil, nil)
		g.relabel(m.H)
		m.reg = g
	case g.ndirt > 0:
		g.spans, g.start = m.scanRows(r, g.spans, g.start, g.dirty)
		clear(g.dirty)
		g.ndirt = 0
		g.relabel(m.H)
	}
	return g
}

// passTables tell which terrains are passable, for scanning rows.
type passTables struct {
	one [256]uint64 // by terrain: 1 if passable
	two [256]uint64 // by packed byte (two cells): bit 0 the low cell, bit 1 the high
}

func newPassTables(r *rules) *passTables {
	pt := &passTables{}
	for i, t := range r.terrains {
		if t.passable {
			pt.one[i] = 1
		}
	}
	for b := range pt.two {
		pt.two[b] = pt.one[b&0xf] | pt.one[b>>4]<<1
	}
	return pt
}

// passBits sets pb to the passable terrain of the w cells from c on, bit
// i of pb[k] for cell c+64k+i, bits past the last cell zero. buf is
// scratch of at least w bytes. A packed row starting on a whole byte is
// read two cells a byte; other rows are unpacked first.
func (t *terrain) passBits(pb []uint64, c, w int, pt *passTables, buf []byte) {
	full := w / 64 // 64-cell chunks
	var row []byte
	if t.nib && c&1 == 0 {
		packed := t.b[c>>1 : c>>1+full*32]
		for k := range full {
			var v uint64
			for i := 0; i < 32; i += 8 {
				b := packed[k*32+i : k*32+i+8 : k*32+i+8]
				v |= (pt.two[b[0]] | pt.two[b[1]]<<2 | pt.two[b[2]]<<4 | pt.two[b[3]]<<6 |
					pt.two[b[4]]<<8 | pt.two[b[5]]<<10 | pt.two[b[6]]<<12 | pt.two[b[7]]<<14) << uint(2*i)
			}
			pb[k] = v
		}
		t.unpack(buf[full*64:w], c+full*64) // the tail, as bytes
		row = buf[:w]
	} else {
		row = t.unpack(buf[:w], c)
		for k := range full {
			var v uint64
			for i := 0; i < 64; i += 8 {
				b := row[k*64+i : k*64+i+8 : k*64+i+8]
				v |= (pt.one[b[0]] | pt.one[b[1]]<<1 | pt.one[b[2]]<<2 | pt.one[b[3]]<<3 |
					pt.one[b[4]]<<4 | pt.one[b[5]]<<5 | pt.one[b[6]]<<6 | pt.one[b[7]]<<7) << uint(i)
			}
			pb[k] = v
		}
	}
	if full < len(pb) {
		var v uint64
		for i, x := range row[full*64 : w] {
			v |= pt.one[x] << uint(i)
		}
		pb[full] = v
	}
}

// scanRows returns the spans of every row: rows marked in dirty (every
// row when old is nil) are scanned, the others copied from old.
func (m *gameMap) scanRows(r *rules, old []span, oldStart []int32, dirty []bool) ([]span, []int32) {
	pt := newPassTables(r)
	W := int(m.W)
	pb := make([]uint64, (W+63)/64) // the passable cells of one row
	rowBuf := make([]uint8, W)      // one row's terrain, one byte a cell
	start := make([]int32, m.H+1)
	scratch := takeSpanScratch()
	spans := slices.Grow(scratch[:0], max(len(old), int(m.H)))
	for y := range int(m.H) {
		start[y] = int32(len(spans))
		if old != nil && !dirty[y] {
			spans = append(spans, old[oldStart[y]:oldStart[y+1]]...)
			continue
		}
		m.Terrain.passBits(pb, y*W, W, pt, rowBuf)
		for k := range pb {
			pb[k] &^= m.blockedBits(y*W + k*64)
		}
		for x := 0; ; {
			x = nextBit(pb, x, false)
			if x >= W {
				break
			}
			e := min(W, nextBit(pb, x, true))
			spans = append(spans, span{uint16(x), uint16(e - 1)})
			x = e
		}
	}
	start[m.H] = int32(len(spans))
	out := slices.Clone(spans)
	putSpanScratch(spans)
	return out, start
}

// Span scratch: rows are scanned into a reused buffer, and the map keeps
// an exact copy. Appending into a fresh slice instead grew it by copying
// a few times per map, and a world's load paid for each copy and for
// touching its fresh memory (in a 204 MiB world's join, 0.2 of the 0.3
// CPU-s its region scans took). The buffers wait on a channel, which,
// unlike a sync.Pool, the garbage collector does not empty: a join
// collects often while it loads.
var spanScratch = make(chan []span, 4)

// maxSpanScratch is the largest buffer kept (spans): a bigger one, from an
// unusually fragmented map, is left to the garbage collector.
const maxSpanScratch = 4 << 20

func takeSpanScratch() []span {
	select {
	case b := <-spanScratch:
		return b
	default:
		return nil
	}
}

func putSpanScratch(b []span) {
	if cap(b) > maxSpanScratch {
		return
	}
	select {
	case spanScratch <- b[:0]:
	default:
	}
}

// blockedBits returns the 64 blocked bits of cells c..c+63 (zeros past
// the last cell).
func (m *gameMap) blockedBits(c int) uint64 {
	k, off := c>>6, uint(c&63)
	v := m.blocked.word(k) >> off
	if off != 0 {
		v |= m.blocked.word(k+1) << (64 - off)
	}
	return v
}

// nextBit returns the first index >= x whose bit is set (clear when
// inverted is true), or len(bits)*64 if there is none.
func nextBit(row []uint64, x int, inverted bool) int {
	k := x >> 6
	if k >= len(row) {
		return len(row) * 64
	}
	var flip uint64
	if inverted {
		flip = ^uint64(0)
	}
	if v := (row[k] ^ flip) >> uint(x&63); v != 0 {
		return x + bits.TrailingZeros64(v)
	}
	for k++; k < len(row); k++ {
		if v := row[k] ^ flip; v != 0 {
			return k*64 + bits.TrailingZeros64(v)
		}
	}
	return len(row) * 64
}

// relabel joins spans of neighbouring rows that overlap and labels each
// span with its component.
func (g *regionMap) relabel(h int32) {
	n := len(g.spans)
	if cap(g.label) >= n {
		g.label = g.label[:n]
	} else {
		g.label = make([]int32, n)
	}
	parent := g.label // union-find parents first, labels after
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(i int32) int32 {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for y := int32(0); y+1 < h; y++ {
		a0, b0 := g.start[y], g.start[y+1]
		a, b := g.spans[a0:b0], g.spans[b0:g.start[y+2]]
		i, j := 0, 0
		for i < len(a) && j < len(b) {
			switch {
			case a[i].x1 < b[j].x0:
				i++
				continue
			case b[j].x1 < a[i].x0:
				j++
				continue
			}
			ra, rb := find(a0+int32(i)), find(b0+int32(j))
			if ra < rb {
				parent[rb] = ra
			} else if rb < ra {
				parent[ra] = rb
			}
			if a[i].x1 < b[j].x1 {
				i++
			} else {
				j++
			}
		}
	}
	// Roots have the lowest index of their component, so one pass in
	// index order resolves every span to its root.
	for i := range parent {
		p := parent[i]
		if p != int32(i) {
			parent[i] = parent[p]
		}
	}
	for i := range parent {
		parent[i]++
	}
}
