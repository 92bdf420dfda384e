package host

import "github.com/lockhost/lockhost/internal/ratelimit"

// maxConnSources bounds how many addresses the connection limiter tracks;
// while it is full, connections from new addresses are refused.
const maxConnSources = 1 << 16

// rateLimiter is a token bucket per address key for new connections (an
// IPv6 address counts by its /64), the table the status server's reply
// limit uses too.
type rateLimiter = ratelimit.Table[string]

// newRateLimiter returns a limiter, or nil (allow everything) if rate < 0.
func newRateLimiter(rate float64, burst int) *rateLimiter {
	return ratelimit.NewTable[string](rate, burst, maxConnSources)
}
