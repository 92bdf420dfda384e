package lockstep_test

import (
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// plainHash has a world hash and no way to combine map hashes.
type plainHash uint64

func (p plainHash) WorldHash() uint64 { return uint64(p) }

// sumHash combines map hashes by summing them, so the test can tell a
// combined hash from WorldHash.
type sumHash struct{ plainHash }

func (sumHash) WorldHashOf(hs []uint64) uint64 {
	var n uint64 = 1000
	for _, h := range hs {
		n += h
	}
	return n
}

// TestWorldHashFrom: map hashes are combined only by a WorldHasher and
// only when given; otherwise the state's own WorldHash answers.
func TestWorldHashFrom(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   interface{ WorldHash() uint64 }
		hs   []uint64
		want uint64
	}{
		{"plain, hashes ignored", plainHash(7), []uint64{1, 2}, 7},
		{"plain, no hashes", plainHash(7), nil, 7},
		{"hasher combines", sumHash{7}, []uint64{1, 2}, 1003},
		{"hasher, no maps", sumHash{7}, []uint64{}, 1000},
		{"hasher, nil hashes", sumHash{7}, nil, 7},
	} {
		if got := lockstep.WorldHashFrom(tc.st, tc.hs); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
