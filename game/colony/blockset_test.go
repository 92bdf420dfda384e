package colony

import (
	"math/rand/v2"
	"testing"
)

// TestBlockSet checks the paged set against a dense bitmap, across page
// edges and on a map whose cell count is not a multiple of a page or a
// word, including cells cleared again and words read past the end.
func TestBlockSet(t *testing.T) {
	for _, cells := range []int{1, 63, 64, 65, blockCells - 1, blockCells, blockCells + 1, 3*blockCells + 77} {
		b := newBlockSet(cells)
		dense := make([]uint64, (cells+63)/64)
		rng := rand.New(rand.NewPCG(uint64(cells), 1))
		for range 4 * cells {
			c := int32(rng.IntN(cells))
			on := rng.IntN(3) > 0
			b.set(c, on)
			if on {
				dense[c>>6] |= 1 << (uint32(c) & 63)
			} else {
				dense[c>>6] &^= 1 << (uint32(c) & 63)
			}
		}
		for c := range int32(cells) {
			if want := dense[c>>6]&(1<<(uint32(c)&63)) != 0; b.has(c) != want {
				t.Fatalf("%d cells: has(%d) = %v, want %v", cells, c, !want, want)
			}
		}
		for k := -1; k < len(dense)+blockWords+1; k++ {
			want := uint64(0)
			if k >= 0 && k < len(dense) {
				want = dense[k]
			}
			if got := b.word(k); got != want {
				t.Fatalf("%d cells: word(%d) = %x, want %x", cells, k, got, want)
			}
		}
		other := newBlockSet(cells)
		if cells > 64 && !b.equal(&b) || b.equal(&other) != (b.word(0) == 0 && allZero(dense)) {
			t.Fatalf("%d cells: equal disagrees with the bits", cells)
		}
	}
}

// TestBlockSetClearAllocatesNothing: clearing a cell of a page never set
// allocates no page, so a map without impassable buildings holds none.
func TestBlockSetClearAllocatesNothing(t *testing.T) {
	b := newBlockSet(10 * blockCells)
	for c := range int32(10 * blockCells) {
		b.set(c, false)
	}
	for i, p := range b.pages {
		if p != nil {
			t.Fatalf("page %d allocated by clearing", i)
		}
	}
}

func allZero(v []uint64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
