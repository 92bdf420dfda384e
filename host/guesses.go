package host

import (
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/ratelimit"
)

// guessLimiter bounds password checks per address (an IPv6 address by
// its /64) and across all addresses, without locking out a client that
// knows the password. A relay host's arbiter proofs (relaypeer.go) are
// guesses of the same kind and spend the same budget: a connection that
// proves the password, the arbiter secret or both is one attempt, its
// puzzle set on the password challenge, or the arbiter challenge when
// the session has no password.
//
// Per address it is a token bucket: an attempt over it is refused
// unchecked. Across all addresses it keeps a leaky count of the checks
// made (load), draining at grate a second. While the load is below the
// free burst (gburst) a client gets no puzzle; above it, a client must
// solve a proof of work on its challenge (package password) whose
// difficulty grows by a bit for every puzzleStep checks more in the load,
// from puzzleBaseBits up to maxBits. The puzzle is set with the mod list
// and answered with the username; if the load grew so much meanwhile that
// even puzzleWindow checks less would call for a harder puzzle, the
// answer no longer counts. A check is made only while the load
// stays within hard = gburst + puzzleStep*(maxBits-puzzleBaseBits+1):
// in any T seconds at most hard + grate*T checks, however many addresses
// guess. Guessers who want more checks pay in work, doubling every
// puzzleStep checks; a real client pays one puzzle of the difficulty the
// guessing reached, and gets its password checked. With puzzles off
// (maxBits < 0) hard is gburst: the global bucket alone, which locks
// everyone out once guessers spend it. The wire spec (package wire)
// documents the same rule.
type guessLimiter struct {
	mu            sync.Mutex
	byAddr        map[string]*ratelimit.Bucket
	rate, burst   float64 // per address
	grate, gburst float64 // in all: the load's drain and the free burst
	maxBits       int     // the hardest puzzle; -1: none
	hard          float64 // the most the load may reach
	load          float64 // checks made, drained at grate
	free          int     // free passes (no puzzle) set and not yet used
	last          time.Time
	calls         int
	counts        guessCounts
}

// guessCounts are the limiter's counters, for Stats.
type guessCounts struct {
	checked, refused, puzzles uint64 // attempts checked and refused, puzzles set
	passwords, wrong          uint64 // passwords checked, and found wrong
	arbiters, wrongArbiter    uint64 // arbiter proofs checked, and found wrong
	bits                      int    // the difficulty a newcomer gets now
}

// The puzzle's first difficulty, how many checks more in the load add a
// bit, and how many checks more the load may have taken since a puzzle
// (or a free pass) was set for it to count still.
const (
	puzzleBaseBits = 8
	puzzleStep     = 4
	puzzleWindow   = 8
)

// A guess's verdict.
type guessVerdict int

const (
	guessCheck      guessVerdict = iota // check the password
	guessAddrLimit                      // over the address's rate
	guessNoSolution                     // the puzzle set was not solved, or is too easy by now
	guessAllLimit                       // over the bound for all addresses
)

// newGuessLimiter returns a limiter, or nil (no limit) for a negative rate.
func newGuessLimiter(rate float64, burst int, grate float64, gburst int, maxBits int) *guessLimiter {
	if rate < 0 {
		return nil
	}
	g := &guessLimiter{byAddr: map[string]*ratelimit.Bucket{}, rate: rate, burst: float64(burst),
		grate: grate, gburst: float64(gburst), maxBits: maxBits, hard: float64(gburst)}
	if maxBits >= 0 {
		g.hard += float64(puzzleStep * (maxBits - puzzleBaseBits + 1))
	}
	return g
}

// drain lets the load leak up to now. The caller holds the lock.
func (g *guessLimiter) drain(now time.Time) {
	if !g.last.IsZero() && now.After(g.last) {
		g.load = max(0, g.load-now.Sub(g.last).Seconds()*g.grate)
	}
	if now.After(g.last) {
		g.last = now
	}
}

// bitsAt is the difficulty for the load now. The caller holds the lock.
func (g *guessLimiter) bitsAt() int { return g.bitsFor(g.load) }

// bitsFor is the difficulty for a load.
func (g *guessLimiter) bitsFor(load float64) int {
	if g.maxBits < 0 || load < g.gburst {
		return 0
	}
	return min(g.maxBits, puzzleBaseBits+int((load-g.gburst)/puzzleStep))
}

// puzzle returns the difficulty of the puzzle to set a client whose
// password will be checked (0 for none), and done, to call once the
// client's attempt is decided or its connection ends. Free passes (no
// puzzle) are set only while the load and the passes still out stay
// below the free burst, so that the free passes set are honoured.
func (g *guessLimiter) puzzle(now time.Time) (n int, done func()) {
	if g == nil {
		return 0, func() {}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.drain(now)
	done = func() {}
	switch {
	case g.maxBits < 0:
	case g.load+float64(g.free) < g.gburst:
		g.free++
		done = sync.OnceFunc(func() {
			g.mu.Lock()
			g.free--
			g.mu.Unlock()
		})
	default:
		n = max(puzzleBaseBits, g.bitsAt())
		g.counts.puzzles++
	}
	g.counts.bits = n
	return n, done
}

// attempt decides on an attempt from key at now; set is the difficulty of
// the puzzle the client was set (0: none), solved whether it solved it.
// The puzzle counts only if it would still be set for a load puzzleWindow
// checks below the load now: puzzles (or free passes) handed out cheaply
// before a burst of guesses do not all buy checks once it came, yet a
// client solving its puzzle while a few other checks are made keeps it. A refused attempt spends
// nothing in all, so one address over its limit does not drain
// everyone's.
func (g *guessLimiter) attempt(key string, now time.Time, set int, solved bool) guessVerdict {
	if g == nil {
		return guessCheck
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
	v := guessCheck
	g.drain(now)
	switch {
	case !b.Take(now, g.rate, g.burst):
		v = guessAddrLimit
	case !solved || set < g.bitsFor(g.load-puzzleWindow):
		v = guessNoSolution
	case g.load+1 > g.hard:
		v = guessAllLimit
	default:
		g.load++
		g.counts.checked++
	}
	if v != guessCheck {
		g.counts.refused++
	}
	g.counts.bits = 0
	if g.maxBits >= 0 && g.load+float64(g.free) >= g.gburst {
		g.counts.bits = max(puzzleBaseBits, g.bitsAt()) // what a newcomer gets
	}
	return v
}

// passwordChecked counts a password checked, ok when it was right.
func (g *guessLimiter) passwordChecked(ok bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.counts.passwords++
	if !ok {
		g.counts.wrong++
	}
	g.mu.Unlock()
}

// arbiterChecked counts an arbiter proof checked, ok when it was right.
func (g *guessLimiter) arbiterChecked(ok bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.counts.arbiters++
	if !ok {
		g.counts.wrongArbiter++
	}
	g.mu.Unlock()
}

// snapshot returns the counters.
func (g *guessLimiter) snapshot() guessCounts {
	if g == nil {
		return guessCounts{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.counts
}
