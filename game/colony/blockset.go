package colony

// blockSet is the set of cells an impassable building stands on: a bitmap
// cut in pages of blockCells cells, a page allocated only when one of its
// cells is first set. Impassable buildings are few and clustered, so a
// dense bitmap (one bit per cell, a quarter of packed terrain's memory) would
// be almost all zeros; this costs one pointer per page instead, plus the
// pages that hold a blocked cell. It is derived data, never encoded.
type blockSet struct {
	pages []*[blockWords]uint64
}

const (
	blockShift = 12              // log2 of blockCells
	blockCells = 1 << blockShift // cells per page
	blockWords = blockCells / 64 // 64-bit words per page
)

// newBlockSet returns an empty set for a map of cells cells.
func newBlockSet(cells int) blockSet {
	return blockSet{pages: make([]*[blockWords]uint64, (cells+blockCells-1)/blockCells)}
}

// has reports whether cell c is blocked.
func (b *blockSet) has(c int32) bool {
	p := b.pages[c>>blockShift]
	return p != nil && p[(c>>6)&(blockWords-1)]&(1<<(uint32(c)&63)) != 0
}

// set blocks cell c (on) or clears it.
func (b *blockSet) set(c int32, on bool) {
	p := b.pages[c>>blockShift]
	if p == nil {
		if !on {
			return
		}
		p = new([blockWords]uint64)
		b.pages[c>>blockShift] = p
	}
	bit := uint64(1) << (uint32(c) & 63)
	if on {
		p[(c>>6)&(blockWords-1)] |= bit
	} else {
		p[(c>>6)&(blockWords-1)] &^= bit
	}
}

// word returns the bits of cells 64k..64k+63, zero past the map's end.
func (b *blockSet) word(k int) uint64 {
	if k < 0 || k>>6 >= len(b.pages) {
		return 0
	}
	if p := b.pages[k>>6]; p != nil {
		return p[k&(blockWords-1)]
	}
	return 0
}

// equal reports whether b and o hold the same cells.
func (b *blockSet) equal(o *blockSet) bool {
	if len(b.pages) != len(o.pages) {
		return false
	}
	for k := range len(b.pages) * blockWords {
		if b.word(k) != o.word(k) {
			return false
		}
	}
	return true
}
