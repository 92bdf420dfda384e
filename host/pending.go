package host

import (
	"sync"

	"github.com/lockhost/lockhost/internal/addrkey"
)

// pendingConns counts connections that are not admitted yet, in total and
// per address (IPv6 addresses by their /64, which one machine usually
// holds whole), so that idle or slow handshakes cannot take every
// descriptor or a lot of memory. A negative limit is no limit.
type pendingConns struct {
	mu      sync.Mutex
	total   int
	byAddr  map[string]int
	max     int
	maxAddr int
}

func newPendingConns(max, maxAddr int) *pendingConns {
	return &pendingConns{byAddr: map[string]int{}, max: max, maxAddr: maxAddr}
}

// addrKey is the key an address is counted under (package addrkey).
func addrKey(ip string) string { return addrkey.Of(ip) }

// acquire counts a new connection from key, or reports false (and counts
// nothing) if the total or the address is at its limit.
func (p *pendingConns) acquire(key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.max >= 0 && p.total >= p.max || p.maxAddr >= 0 && p.byAddr[key] >= p.maxAddr {
		return false
	}
	p.total++
	p.byAddr[key]++
	return true
}

// release uncounts a connection acquire counted.
func (p *pendingConns) release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total--
	if p.byAddr[key]--; p.byAddr[key] <= 0 {
		delete(p.byAddr, key)
	}
}

// count is the number of connections counted now.
func (p *pendingConns) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}
