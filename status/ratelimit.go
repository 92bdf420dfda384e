package status

import (
	"math"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/ratelimit"
)

const (
	// maxSources bounds how many source addresses the limiter tracks.
	maxSources = 1 << 16
	// sweepEvery is how often the limiter forgets full buckets at most.
	sweepEvery = time.Second
)

// limiter is a token bucket per source IP address (after the idea of
// host's connection limiter).
type limiter struct {
	mu        sync.Mutex
	rate      float64 // tokens per second
	burst     float64
	full      time.Duration // time for an empty bucket to fill
	buckets   map[netip.Addr]ratelimit.Bucket
	lastSweep time.Time
}

// newLimiter returns a limiter, or nil (allow everything) if rate < 0.
func newLimiter(rate float64, burst int) *limiter {
	if rate < 0 {
		return nil
	}
	full := time.Duration(math.MaxInt64)
	if f := float64(burst) / rate * float64(time.Second); f < float64(full) {
		full = time.Duration(f)
	}
	return &limiter{
		rate:    rate,
		burst:   float64(burst),
		full:    full,
		buckets: make(map[netip.Addr]ratelimit.Bucket),
	}
}

// allow takes a token for ip if one is left. A nil limiter allows all.
func (l *limiter) allow(ip netip.Addr, now time.Time) bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		l.sweep(now)
	}
	b, ok := l.buckets[ip]
	if !ok && len(l.buckets) >= maxSources {
		return false
	}
	allowed := b.Take(now, l.rate, l.burst)
	l.buckets[ip] = b
	return allowed
}

// sweep forgets addresses whose buckets are full again.
func (l *limiter) sweep(now time.Time) {
	l.lastSweep = now
	for ip, b := range l.buckets {
		if now.Sub(b.Last()) >= l.full {
			delete(l.buckets, ip)
		}
	}
}

// sourceKey is the rate-limit key of a datagram's source: its IP address
// (IPv4-mapped IPv6 unmapped). Addresses that are not IP all share the
// zero key.
func sourceKey(a net.Addr) netip.Addr {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.AddrPort().Addr().Unmap()
	}
	if a == nil {
		return netip.Addr{}
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
