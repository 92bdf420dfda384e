package host

import (
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/ratelimit"
)

// rateLimiter is a token bucket per address key (addrKey: an IPv6 address
// counts by its /64) for new connections.
type rateLimiter struct {
	mu      sync.Mutex
	rate    float64 // tokens per second
	burst   float64
	buckets map[string]*ratelimit.Bucket
	calls   int
}

func newRateLimiter(rate float64, burst int) *rateLimiter {
	if rate < 0 {
		return nil
	}
	return &rateLimiter{rate: rate, burst: float64(burst), buckets: make(map[string]*ratelimit.Bucket)}
}

// allow takes a token for ip if one is left. A nil limiter allows all.
func (l *rateLimiter) allow(ip string, now time.Time) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls%1024 == 0 {
		l.sweep(now)
	}
	b := l.buckets[ip]
	if b == nil {
		b = new(ratelimit.Bucket)
		l.buckets[ip] = b
	}
	return b.Take(now, l.rate, l.burst)
}

// sweep forgets addresses whose buckets are full again.
func (l *rateLimiter) sweep(now time.Time) {
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	for ip, b := range l.buckets {
		if now.Sub(b.Last()) > full {
			delete(l.buckets, ip)
		}
	}
}
