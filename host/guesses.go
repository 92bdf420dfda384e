package host

import (
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/ratelimit"
)

// guessLimiter bounds password attempts per address (an IPv6 address by
// its /64) and across all addresses, so that many addresses together
// cannot guess faster than the global rate. Every attempt spends a token
// of both buckets before the password is checked; an attempt that finds
// either empty is refused unchecked, so it tells a guesser nothing.
type guessLimiter struct {
	mu            sync.Mutex
	global        ratelimit.Bucket
	byAddr        map[string]*ratelimit.Bucket
	rate, burst   float64 // per address
	grate, gburst float64 // in all
	calls         int
}

// newGuessLimiter returns a limiter, or nil (no limit) for a negative rate.
func newGuessLimiter(rate float64, burst int, grate float64, gburst int) *guessLimiter {
	if rate < 0 {
		return nil
	}
	return &guessLimiter{byAddr: map[string]*ratelimit.Bucket{}, rate: rate, burst: float64(burst),
		grate: grate, gburst: float64(gburst)}
}

// attempt spends a token for an attempt from key and reports whether the
// attempt may be checked. A refused attempt spends nothing globally, so
// one address over its limit does not drain everyone's.
func (g *guessLimiter) attempt(key string, now time.Time) bool {
	if g == nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	if g.calls%1024 == 0 {
		full := time.Duration(g.burst / g.rate * float64(time.Second))
		for k, b := range g.byAddr {
			if now.Sub(b.Last()) > full {
				delete(g.byAddr, k)
			}
		}
	}
	b := g.byAddr[key]
	if b == nil {
		b = new(ratelimit.Bucket)
		g.byAddr[key] = b
	}
	return b.Take(now, g.rate, g.burst) && g.global.Take(now, g.grate, g.gburst)
}
