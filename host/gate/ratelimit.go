package gate

import "github.com/lockhost/lockhost/internal/ratelimit"

// maxConnSources bounds how many addresses the connection limiter tracks;
// while it is full, connections from new addresses are refused.
const maxConnSources = 1 << 16

// ConnRate is a token bucket per address key for new connections (an
// IPv6 address counts by its /64), the table the status server's reply
// limit uses too.
type ConnRate = ratelimit.Table[string]

// NewConnRate returns a limiter, or nil (allow everything) if rate < 0.
func NewConnRate(rate float64, burst int) *ConnRate {
	return ratelimit.NewTable[string](rate, burst, maxConnSources)
}
