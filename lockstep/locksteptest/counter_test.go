package locksteptest

import (
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

// TestMapHashIsEncodingHash: a map's hash, streamed without a copy, is
// the xxhash of the map's encoding as MarshalMap gives it, before and
// after its state changed, for an empty map as for a large one.
func TestMapHashIsEncodingHash(t *testing.T) {
	for _, size := range []int{0, 1, 64 << 10} {
		c := New(2, size)
		check := func(when string) {
			t.Helper()
			for _, id := range c.MapIDs() {
				b, err := c.MarshalMap(id)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := c.MapHash(id)
				if !ok || got != xxhash.Sum64(b) {
					t.Fatalf("%d cells, %s: map %d hash %x (%v), want %x", size, when, id, got, ok, xxhash.Sum64(b))
				}
			}
		}
		check("at the start")
		if err := c.Apply(lockstep.Command{MapID: 1, Kind: KindAdd, Payload: []byte{3}}); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			c.Step()
		}
		check("after 100 ticks")
		if _, ok := c.MapHash(9); ok {
			t.Fatal("a hash for a map that does not exist")
		}
	}
}
