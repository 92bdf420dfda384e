// Package ratelimit holds lockhost's rate limits: Bucket, the token bucket
// of one key (the host's limit on commands per player uses it directly),
// and Table, a bounded table of buckets per key that both the host's limit
// on new connections per address and the status server's limit on
// replies per address use.
package ratelimit

import "time"

// Bucket is a token bucket that holds up to burst tokens and refills at
// rate tokens per second. The caller passes rate and burst to each Take
// (always the same pair for one bucket), so a table of buckets need not
// store them per entry. The zero Bucket is unused; its first Take finds
// it full. A Bucket is not safe for concurrent use.
type Bucket struct {
	tokens  float64
	last    time.Time // when tokens was last brought up to date
	started bool      // tokens and last are set
}

// Take brings the bucket's tokens up to date at now and takes one if one
// is left, reporting whether it did. A now before the bucket's last
// refill adds nothing and leaves the bucket's time where it was, so a
// clock going backwards gains no tokens.
func (b *Bucket) Take(now time.Time, rate, burst float64) bool {
	if !b.started {
		b.tokens, b.last, b.started = burst, now, true
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(burst, b.tokens+d.Seconds()*rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Last returns the time of the bucket's latest refill (the latest now
// Take was given that did not go backwards), or the zero time if the
// bucket is unused. A table sweep forgets buckets idle long enough to be
// full again.
func (b *Bucket) Last() time.Time {
	return b.last
}
