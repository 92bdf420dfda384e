package host

import (
	"slices"
	"testing"

	"github.com/lockhost/lockhost/wire"
)

// TestMajorityOf holds the rule of docs/protocol.md, section 14.6.1: the
// largest group of equal hashes is the reference only when it is a strict
// majority of the reports and has at least two.
func TestMajorityOf(t *testing.T) {
	// a, b, c, d: four different states; a2 is a with its maps in
	// another order (the same state).
	a := &wire.ClientHashes{Tick: 60, World: 1, Maps: []wire.MapHash{{MapID: 0, Hash: 10}, {MapID: 1, Hash: 11}}}
	a2 := &wire.ClientHashes{Tick: 60, World: 1, Maps: []wire.MapHash{{MapID: 1, Hash: 11}, {MapID: 0, Hash: 10}}}
	b := &wire.ClientHashes{Tick: 60, World: 1, Maps: []wire.MapHash{{MapID: 0, Hash: 10}, {MapID: 1, Hash: 99}}} // map 1 differs
	c := &wire.ClientHashes{Tick: 60, World: 2, Maps: []wire.MapHash{{MapID: 0, Hash: 10}, {MapID: 1, Hash: 11}}} // the world differs
	d := &wire.ClientHashes{Tick: 60, World: 1, Maps: []wire.MapHash{{MapID: 0, Hash: 10}}}                       // a map missing
	for _, tc := range []struct {
		name  string
		votes []*wire.ClientHashes
		want  *wire.ClientHashes // nil: no majority
		k     int
		sizes []int
	}{
		{"none", nil, nil, 0, nil},
		{"one alone is not its own majority", []*wire.ClientHashes{a}, nil, 1, []int{1}},
		{"two agree", []*wire.ClientHashes{a, a2}, a, 2, []int{2}},
		{"one against one", []*wire.ClientHashes{a, b}, nil, 1, []int{1, 1}},
		{"two of three", []*wire.ClientHashes{b, a, a2}, a, 2, []int{2, 1}},
		{"three different", []*wire.ClientHashes{a, b, c}, nil, 1, []int{1, 1, 1}},
		{"two against two", []*wire.ClientHashes{a, b, a2, b}, nil, 2, []int{2, 2}},
		{"two of four, the others differing", []*wire.ClientHashes{a, a2, b, c}, nil, 2, []int{2, 1, 1}},
		{"three of five", []*wire.ClientHashes{c, a, b, a2, a}, a, 3, []int{3, 1, 1}},
		{"a missing map is a different state", []*wire.ClientHashes{a, d, d}, d, 2, []int{2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, k, sizes := majorityOf(tc.votes)
			if tc.want == nil && got != nil || tc.want != nil && (got == nil || !sameHashes(got, tc.want)) {
				t.Errorf("reference %+v, want %+v", got, tc.want)
			}
			if k != tc.k || !slices.Equal(sizes, tc.sizes) {
				t.Errorf("largest %d, groups %v; want %d, %v", k, sizes, tc.k, tc.sizes)
			}
		})
	}
}
