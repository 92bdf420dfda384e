package ratelimit

import (
	"math"
	"sync"
	"time"
)

// SweepEvery is how often, at most, a Table forgets the buckets that have
// filled up again.
const SweepEvery = time.Second

// Table is a token bucket per key (a source address): rate tokens per
// second, bursts of burst, for at most maxKeys keys at once. While it
// tracks maxKeys keys, a new key is refused, which bounds its memory under
// a flood from many addresses. A bucket that has been idle long enough to
// be full again is forgotten. A nil Table allows everything. A Table is
// safe for concurrent use.
type Table[K comparable] struct {
	mu        sync.Mutex
	rate      float64 // tokens per second
	burst     float64
	full      time.Duration // time for an empty bucket to fill
	maxKeys   int
	buckets   map[K]Bucket
	lastSweep time.Time
}

// NewTable returns a table, or nil (allow everything) if rate < 0.
// maxKeys <= 0 means no bound.
func NewTable[K comparable](rate float64, burst, maxKeys int) *Table[K] {
	if rate < 0 {
		return nil
	}
	full := time.Duration(math.MaxInt64)
	if f := float64(burst) / rate * float64(time.Second); f < float64(full) {
		full = time.Duration(f)
	}
	return &Table[K]{rate: rate, burst: float64(burst), full: full, maxKeys: maxKeys, buckets: make(map[K]Bucket)}
}

// Allow takes a token for key if one is left, reporting whether it did.
func (t *Table[K]) Allow(key K, now time.Time) bool {
	if t == nil {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Sub(t.lastSweep) >= SweepEvery {
		t.sweep(now)
	}
	b, ok := t.buckets[key]
	if !ok && t.maxKeys > 0 && len(t.buckets) >= t.maxKeys {
		return false
	}
	allowed := b.Take(now, t.rate, t.burst)
	t.buckets[key] = b
	return allowed
}

// Len is the number of keys the table tracks.
func (t *Table[K]) Len() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.buckets)
}

// sweep forgets keys whose buckets are full again.
func (t *Table[K]) sweep(now time.Time) {
	t.lastSweep = now
	for k, b := range t.buckets {
		if now.Sub(b.Last()) >= t.full {
			delete(t.buckets, k)
		}
	}
}

// Peek reports whether Allow would allow key at now, taking nothing: a
// limit on failures checks it before an attempt and takes a token only
// when the attempt fails.
func (t *Table[K]) Peek(key K, now time.Time) bool {
	if t == nil {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.buckets[key]
	if !ok {
		return t.maxKeys <= 0 || len(t.buckets) < t.maxKeys
	}
	return b.Take(now, t.rate, t.burst) // on a copy: the table's bucket keeps its tokens
}
