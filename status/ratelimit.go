package status

import (
	"net"
	"net/netip"

	"github.com/lockhost/lockhost/internal/ratelimit"
)

// maxSources bounds how many source addresses the limiter tracks.
const maxSources = 1 << 16

// limiter is a token bucket per source IP address, the table the host's
// connection limit uses too.
type limiter = ratelimit.Table[netip.Addr]

// newLimiter returns a limiter, or nil (allow everything) if rate < 0.
func newLimiter(rate float64, burst int) *limiter {
	return ratelimit.NewTable[netip.Addr](rate, burst, maxSources)
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
