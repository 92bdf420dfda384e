package gate

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/addrkey"
)

// Pending is the table of connections not admitted yet (TLS,
// handshake, username), in total, per address (an IPv6 address by its
// /64, which one machine usually holds whole) and per prefix (an IPv4
// address by its /24, an IPv6 one by its /64), so that idle or slow
// handshakes cannot take every descriptor or a lot of memory.
//
// A full table does not refuse a newcomer: it closes the pending
// connection that has done least for longest, so that a real joiner, who
// goes through the handshake in milliseconds, wins any contest with
// connections that stall. Each connection is in one of four classes:
//
//   - newborn: it opened less than pendingNewborn ago;
//   - idle: it opened longer ago and has finished no handshake step (a
//     real client speaks first, at once);
//   - active: it finished a step (TLS, Client_Protocol, Client_Defs, each
//     clock-sync round, DefsOK, its username) within pendingGrace;
//   - slow: it finished some steps, but none within pendingGrace.
//
// The victim is an idle connection if there is one, else a slow one,
// else an active one, else a newborn one (a burst of newcomers evicts its
// own before a real client just starting its handshake), and last one
// whose join, its password checked, waits for the session; within a class
// one from an address penalized lately (see below) first, then the one
// whose last progress is the oldest. When the newcomer's address
// is at its share (maxAddr), the victim is one of that address's own
// connections; else when its prefix is at its share (maxPrefix), one of
// the prefix's; else, when the table is full (max), any. So an address or a network that stalls competes
// with itself first, and a full table is taken back from the stallers.
// A negative limit is no limit.
//
// A connection leaves the table when it is admitted (it is then
// downloading or playing: never evicted from here), when it ends, or when
// it is evicted.
//
// An address whose pending connection was evicted, missed its handshake
// deadline or guessed the password without the puzzle is penalized, as
// OpenSSH's PerSourcePenalties do: its new connections are refused at
// once for penaltyBase (less up to a quarter, at random), doubling with
// each further offence up to penaltyMax, so a staller that re-opens
// cannot keep churning the table. Penalties are enforced only while the
// table is at least half full: in quiet times a client that timed out
// (or others behind its NAT address) may try again at once. (A wrong
// password is not an offence: the password limits see to guessing.) An offence more than penaltyMax after
// the last penalty ended starts again from penaltyBase.
type Pending struct {
	mu                      sync.Mutex
	conns                   map[*Conn]struct{}
	byAddr, byPrefix        map[string]int
	max, maxAddr, maxPrefix int
	evicted                 uint64 // connections closed to make room
	refused                 uint64 // newcomers refused: penalized, or no room
	penalties               map[string]*penalty
}

// penalty is an address's: refused until until; level is the offences
// counted.
type penalty struct {
	until time.Time
	level int
}

// The first penalty, the longest, and how many addresses are tracked.
const (
	penaltyBase  = 2 * time.Second
	penaltyMax   = time.Minute
	maxPenalized = 1 << 16
)

// pendingGrace is how long since its last progress a pending connection
// counts as active: far longer than a real client takes for a handshake
// step on any usable link, far shorter than a staller holds a slot.
// pendingNewborn is how long after it opened a connection is evicted
// only if every other one is as new: time for a real client's first
// steps even on a busy host.
const (
	pendingGrace   = time.Second
	pendingNewborn = 500 * time.Millisecond
)

// Conn is one connection in the table.
type Conn struct {
	t            *Pending
	addr, prefix string
	opened, last time.Time // when it opened, and when it last made progress
	steps        int       // handshake steps finished
	kill         func()    // closes the connection, once it is evicted
	gone         bool      // left the table
	evicted      bool      // was evicted
	record       bool      // its address was penalized lately
	handed       bool      // its join was handed to the session
}

func NewPending(max, maxAddr, maxPrefix int) *Pending {
	return &Pending{conns: map[*Conn]struct{}{}, byAddr: map[string]int{}, byPrefix: map[string]int{},
		max: max, maxAddr: maxAddr, maxPrefix: maxPrefix, penalties: map[string]*penalty{}}
}

// addrKey is the key an address is counted under (package addrkey).
func addrKey(ip string) string { return addrkey.Of(ip) }

// Acquire enters a new connection from ip, made at now, whose kill
// closes it, evicting another connection first if a limit is reached. It
// returns nil, entering nothing, while ip's address is penalized and the
// table at least half full. kill
// runs without the table's lock held; it must not block for long.
func (p *Pending) Acquire(ip string, now time.Time, kill func()) *Conn {
	return p.AcquireKeyed(addrKey(ip), addrkey.Prefix(ip), now, kill)
}

// AcquireKeyed is Acquire for a connection counted under the address key
// addr and the network key prefix given, rather than those of its IP
// address: a relayed connection, counted per relay allocation
// (address and port) and under the relay's network.
func (p *Pending) AcquireKeyed(addr, prefix string, now time.Time, kill func()) *Conn {
	c := &Conn{t: p, addr: addr, prefix: prefix, opened: now, last: now, kill: kill}
	p.mu.Lock()
	if pen := p.penalties[c.addr]; pen != nil {
		if now.Before(pen.until) && p.pressed() {
			p.refused++
			p.mu.Unlock()
			return nil
		}
		c.record = now.Sub(pen.until) <= penaltyMax
	}
	var victim *Conn
	switch {
	case p.maxAddr >= 0 && p.byAddr[c.addr] >= p.maxAddr:
		victim = p.victim(now, func(o *Conn) bool { return o.addr == c.addr })
	case p.maxPrefix >= 0 && p.byPrefix[c.prefix] >= p.maxPrefix:
		victim = p.victim(now, func(o *Conn) bool { return o.prefix == c.prefix })
	case p.max >= 0 && len(p.conns) >= p.max:
		victim = p.victim(now, func(*Conn) bool { return true })
	}
	var evict func()
	if victim != nil {
		p.remove(victim)
		victim.evicted, evict = true, victim.kill
		p.evicted++
		if victim.addr != c.addr { // an address over its share is not punished twice
			p.Penalize(victim.addr, now)
		}
	}
	p.conns[c] = struct{}{}
	p.byAddr[c.addr]++
	p.byPrefix[c.prefix]++
	p.mu.Unlock()
	if evict != nil {
		evict()
	}
	return c
}

// pendingClass orders connections for eviction: lowest first.
func (c *Conn) class(now time.Time) int {
	switch {
	case c.handed:
		return 4 // waiting for the session's answer: the host's work, not the client's
	case now.Sub(c.opened) < pendingNewborn:
		return 3 // newborn
	case c.steps == 0:
		return 0 // idle
	case now.Sub(c.last) < pendingGrace:
		return 2 // active
	}
	return 1 // slow
}

// victim is the connection among those in that has done least for
// longest, or nil if none is. The caller holds the lock.
func (p *Pending) victim(now time.Time, in func(*Conn) bool) *Conn {
	var best *Conn
	bestClass := 0
	for c := range p.conns {
		if !in(c) {
			continue
		}
		cl := c.class(now)
		switch {
		case best == nil || cl < bestClass:
		case cl > bestClass:
			continue
		case c.record != best.record: // an address with a record goes first
			if !c.record {
				continue
			}
		case !c.last.Before(best.last):
			continue
		}
		best, bestClass = c, cl
	}
	return best
}

// remove takes c out of the table. The caller holds the lock.
func (p *Pending) remove(c *Conn) {
	c.gone = true
	delete(p.conns, c)
	if p.byAddr[c.addr]--; p.byAddr[c.addr] <= 0 {
		delete(p.byAddr, c.addr)
	}
	if p.byPrefix[c.prefix]--; p.byPrefix[c.prefix] <= 0 {
		delete(p.byPrefix, c.prefix)
	}
}

// pressed reports whether the table is at least half full, when
// penalties are enforced. The caller holds the lock.
func (p *Pending) pressed() bool { return p.max >= 0 && 2*len(p.conns) >= p.max }

// Penalize counts an offence of addr at now. The caller holds the lock.
func (p *Pending) Penalize(addr string, now time.Time) {
	pen := p.penalties[addr]
	if pen == nil {
		if len(p.penalties) >= maxPenalized {
			for k, o := range p.penalties {
				if now.Sub(o.until) > penaltyMax {
					delete(p.penalties, k)
				}
			}
			if len(p.penalties) >= maxPenalized {
				return // fail open rather than grow without bound
			}
		}
		pen = &penalty{}
		p.penalties[addr] = pen
	}
	if now.Sub(pen.until) > penaltyMax {
		pen.level = 0
	}
	if now.Before(pen.until) {
		return // one penalty at a time: its connections already in count once
	}
	pen.level++
	d := min(penaltyMax, penaltyBase<<min(pen.level-1, 10))
	// Up to a quarter less, at random, so that addresses penalized
	// together do not all come back at once.
	pen.until = now.Add(d - time.Duration(rand.Int64N(int64(d/4)+1)))
}

// Penalize penalizes the connection's address: while pending it missed a
// handshake deadline, or guessed without solving the puzzle it was set.
func (c *Conn) Penalize(now time.Time) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if !c.gone {
		c.t.Penalize(c.addr, now)
	}
}

// Release takes the connection out of the table: it was admitted or it
// ended. Later calls, and a call after an eviction, do nothing.
func (c *Conn) Release() {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if !c.gone {
		c.t.remove(c)
	}
}

// HandOver records that the connection's join, password checked, was
// handed to the session at now: what is left is the host's work, so it
// goes last.
func (c *Conn) HandOver(now time.Time) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	c.handed, c.last = true, now
}

// WasEvicted reports whether the connection was evicted.
func (c *Conn) WasEvicted() bool {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return c.evicted
}

// Progress records that the connection finished a handshake step at now.
func (c *Conn) Progress(now time.Time) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	c.steps++
	c.last = now
}

// SetKill replaces how the connection is closed on eviction (once the
// connection can be told why). If it was evicted already, kill runs now.
func (c *Conn) SetKill(kill func()) {
	c.t.mu.Lock()
	evicted := c.evicted
	c.kill = kill
	c.t.mu.Unlock()
	if evicted {
		kill()
	}
}

// Timeout is full, shortened under pressure: from half full on, in
// proportion to the room left in the table, down to a fifth of full
// when it is full. Without a total limit it is full.
func (p *Pending) Timeout(full time.Duration) time.Duration {
	if p.max <= 0 {
		return full
	}
	p.mu.Lock()
	n := len(p.conns)
	p.mu.Unlock()
	room := max(0, p.max-n)
	if 2*room >= p.max {
		return full
	}
	return max(full/5, full*time.Duration(2*room)/time.Duration(p.max))
}

// Count is the number of connections in the table now.
func (p *Pending) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Evictions is the number of connections evicted so far, and of
// newcomers refused.
func (p *Pending) Evictions() (evicted, refused uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.evicted, p.refused
}
