package ratelimit

import (
	"testing"
	"time"
)

func TestTable(t *testing.T) {
	t0 := time.Unix(1000, 0)
	l := NewTable[string](2, 3, 0)
	for i := range 3 {
		if !l.Allow("a", t0) {
			t.Fatalf("attempt %d of the burst refused", i)
		}
	}
	if l.Allow("a", t0) {
		t.Fatal("fourth attempt at once allowed")
	}
	if !l.Allow("b", t0) {
		t.Fatal("another key shares the bucket")
	}
	if !l.Allow("a", t0.Add(500*time.Millisecond)) || l.Allow("a", t0.Add(500*time.Millisecond)) {
		t.Fatal("want exactly one token after half a second at 2/s")
	}
	if l.Allow("a", t0) {
		t.Fatal("allowed with the clock going backwards")
	}
	// Buckets full again are forgotten at the next sweep.
	l.Allow("c", t0.Add(time.Hour))
	if n := l.Len(); n != 1 {
		t.Fatalf("%d keys after the sweep, want 1", n)
	}
}

func TestTableBound(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const max = 100
	l := NewTable[int](1, 3, max)
	for i := range max {
		if !l.Allow(i, t0) {
			t.Fatalf("key %d refused below the bound", i)
		}
	}
	if l.Allow(max, t0) {
		t.Fatal("new key allowed with a full table")
	}
	if !l.Allow(0, t0) {
		t.Fatal("known key refused with a full table")
	}
	// Once the buckets are full again the sweep makes room.
	if !l.Allow(max, t0.Add(4*time.Second)) {
		t.Fatal("new key refused after the table was swept")
	}
	unbounded := NewTable[int](1, 3, 0)
	for i := range 3 * max {
		if !unbounded.Allow(i, t0) {
			t.Fatalf("key %d refused by a table with no bound", i)
		}
	}
}

func TestNilTable(t *testing.T) {
	off := NewTable[string](-1, 0, 0)
	if off != nil {
		t.Fatal("rate -1 made a table")
	}
	for range 10 {
		if !off.Allow("x", time.Unix(0, 0)) {
			t.Fatal("nil table refused")
		}
	}
	if off.Len() != 0 {
		t.Fatal("nil table tracks keys")
	}
}

func TestPeekTakesNothing(t *testing.T) {
	now := time.Unix(1000, 0)
	tb := NewTable[string](1, 2, 2)
	for range 5 {
		if !tb.Peek("a", now) {
			t.Fatal("peek at a full bucket refused")
		}
	}
	tb.Allow("a", now)
	tb.Allow("a", now)
	if tb.Peek("a", now) {
		t.Fatal("peek at an empty bucket allowed")
	}
	if !tb.Peek("a", now.Add(time.Second)) {
		t.Fatal("peek after a refill refused")
	}
	tb.Allow("b", now)
	if tb.Peek("c", now) {
		t.Fatal("peek at a new key in a full table allowed")
	}
}
