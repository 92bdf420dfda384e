package ratelimit

import (
	"testing"
	"time"
)

func TestTake(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		ms   int  // when, after t0
		want bool // whether Take gets a token
	}
	for _, tc := range []struct {
		name        string
		rate, burst float64
		steps       []step
	}{
		{"burst then empty", 2, 3, []step{{0, true}, {0, true}, {0, true}, {0, false}, {0, false}}},
		{"refill at rate", 2, 3, []step{{0, true}, {0, true}, {0, true}, {499, false}, {500, true}, {500, false}, {1000, true}}},
		{"half tokens add up", 2, 1, []step{{0, true}, {250, false}, {500, true}}},
		{"refill caps at burst", 10, 2, []step{{0, true}, {0, true}, {60000, true}, {60000, true}, {60000, false}}},
		{"clock backwards adds nothing", 1, 1, []step{{5000, true}, {0, false}, {5999, false}, {6000, true}}},
		{"first take starts full", 1, 2, []step{{3000, true}, {3000, true}, {3000, false}}},
		{"rate 0 never refills", 0, 2, []step{{0, true}, {0, true}, {0, false}, {3600000, false}}},
		{"burst below 1 gives nothing", 100, 0.5, []step{{0, false}, {1000, false}}},
		{"sub-token burst refills to its cap only", 100, 1.5, []step{{0, true}, {0, false}, {1000, true}, {1000, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Bucket
			for i, s := range tc.steps {
				if got := b.Take(at(s.ms), tc.rate, tc.burst); got != s.want {
					t.Fatalf("step %d (at +%d ms): Take = %v, want %v", i, s.ms, got, s.want)
				}
			}
		})
	}
}

func TestLast(t *testing.T) {
	var b Bucket
	if !b.Last().IsZero() {
		t.Fatalf("unused bucket's Last = %v, want zero", b.Last())
	}
	t0 := time.Unix(1000, 0)
	b.Take(t0, 1, 1)
	if !b.Last().Equal(t0) {
		t.Fatalf("Last = %v after a Take at %v", b.Last(), t0)
	}
	b.Take(t0.Add(-time.Second), 1, 1)
	if !b.Last().Equal(t0) {
		t.Fatalf("Last = %v after a Take going backwards, want %v", b.Last(), t0)
	}
	// A refused Take still brings the bucket up to date.
	b.Take(t0.Add(time.Second), 1, 1)
	b.Take(t0.Add(1500*time.Millisecond), 1, 1)
	if want := t0.Add(1500 * time.Millisecond); !b.Last().Equal(want) {
		t.Fatalf("Last = %v, want %v", b.Last(), want)
	}
}
