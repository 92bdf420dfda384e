package gate

import (
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/ratelimit"
)

// Guesses bounds password checks per address (an IPv6 address by
// its /64) and across all addresses, without locking out a client that
// knows the password. A relay host's arbiter proofs (package host, relaypeer.go) are
// guesses of the same kind and spend the same budget: a connection that
// proves the password, the arbiter secret or both is one attempt, its
// Puzzle set on the password challenge, or the arbiter challenge when
// the session has no password.
//
// Per address it is a token bucket: an attempt over it is refused
// unchecked. Across all addresses it keeps a leaky count of the checks
// made (load), draining at grate a second. While the load is below the
// free burst (gburst) a client gets no puzzle; above it, a client must
// solve a proof of work on its challenge (package password) whose
// difficulty grows by a bit for every puzzleStep checks more in the load,
// from PuzzleBaseBits up to maxBits. The puzzle is set with the mod list
// and answered with the username; if the load grew so much meanwhile that
// even puzzleWindow checks less would call for a harder puzzle, the
// answer no longer counts. A check is made only while the load
// stays within hard = gburst + puzzleStep*(maxBits-PuzzleBaseBits+1):
// in any T seconds at most hard + grate*T checks, however many addresses
// guess. Guessers who want more checks pay in work, doubling every
// puzzleStep checks; a real client pays one puzzle of the difficulty the
// guessing reached, and gets its password checked. With puzzles off
// (maxBits < 0) hard is gburst: the global bucket alone, which locks
// everyone out once guessers spend it. The wire spec (package wire)
// documents the same rule.
type Guesses struct {
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
	counts        GuessCounts
}

// GuessCounts are the limiter's counters, for the host's Stats.
type GuessCounts struct {
	Checked, Refused, Puzzles uint64 // attempts checked and refused, puzzles set
	Passwords, Wrong          uint64 // passwords checked, and found wrong
	Arbiters, WrongArbiter    uint64 // arbiter proofs checked, and found wrong
	Bits                      int    // the difficulty a newcomer gets now
}

// The puzzle's first difficulty, how many checks more in the load add a
// bit, and how many checks more the load may have taken since a puzzle
// (or a free pass) was set for it to count still.
const (
	PuzzleBaseBits = 8
	puzzleStep     = 4
	puzzleWindow   = 8
)

// A guess's verdict.
type Verdict int

const (
	Check      Verdict = iota // check the password
	AddrLimit                 // over the address's rate
	NoSolution                // the puzzle set was not solved, or is too easy by now
	AllLimit                  // over the bound for all addresses
)

// NewGuesses returns a limiter, or nil (no limit) for a negative rate.
func NewGuesses(rate float64, burst int, grate float64, gburst int, maxBits int) *Guesses {
	if rate < 0 {
		return nil
	}
	g := &Guesses{byAddr: map[string]*ratelimit.Bucket{}, rate: rate, burst: float64(burst),
		grate: grate, gburst: float64(gburst), maxBits: maxBits, hard: float64(gburst)}
	if maxBits >= 0 {
		g.hard += float64(puzzleStep * (maxBits - PuzzleBaseBits + 1))
	}
	return g
}

// drain lets the load leak up to now. The caller holds the lock.
func (g *Guesses) drain(now time.Time) {
	if !g.last.IsZero() && now.After(g.last) {
		g.load = max(0, g.load-now.Sub(g.last).Seconds()*g.grate)
	}
	if now.After(g.last) {
		g.last = now
	}
}

// bitsAt is the difficulty for the load now. The caller holds the lock.
func (g *Guesses) bitsAt() int { return g.bitsFor(g.load) }

// bitsFor is the difficulty for a load.
func (g *Guesses) bitsFor(load float64) int {
	if g.maxBits < 0 || load < g.gburst {
		return 0
	}
	return min(g.maxBits, PuzzleBaseBits+int((load-g.gburst)/puzzleStep))
}

// Puzzle returns the difficulty of the puzzle to set a client whose
// password will be checked (0 for none), and done, to call once the
// client's attempt is decided or its connection ends. Free passes (no
// Puzzle) are set only while the load and the passes still out stay
// below the free burst, so that the free passes set are honoured.
func (g *Guesses) Puzzle(now time.Time) (n int, done func()) {
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
		n = max(PuzzleBaseBits, g.bitsAt())
		g.counts.Puzzles++
	}
	g.counts.Bits = n
	return n, done
}

// Attempt decides on an attempt from key at now; set is the difficulty of
// the puzzle the client was set (0: none), solved whether it solved it.
// The puzzle counts only if it would still be set for a load puzzleWindow
// checks below the load now: puzzles (or free passes) handed out cheaply
// before a burst of guesses do not all buy checks once it came, yet a
// client solving its puzzle while a few other checks are made keeps it. A refused attempt spends
// nothing in all, so one address over its limit does not drain
// everyone's.
func (g *Guesses) Attempt(key string, now time.Time, set int, solved bool) Verdict {
	if g == nil {
		return Check
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
	v := Check
	g.drain(now)
	switch {
	case !b.Take(now, g.rate, g.burst):
		v = AddrLimit
	case !solved || set < g.bitsFor(g.load-puzzleWindow):
		v = NoSolution
	case g.load+1 > g.hard:
		v = AllLimit
	default:
		g.load++
		g.counts.Checked++
	}
	if v != Check {
		g.counts.Refused++
	}
	g.counts.Bits = 0
	if g.maxBits >= 0 && g.load+float64(g.free) >= g.gburst {
		g.counts.Bits = max(PuzzleBaseBits, g.bitsAt()) // what a newcomer gets
	}
	return v
}

// PasswordChecked counts a password checked, ok when it was right.
func (g *Guesses) PasswordChecked(ok bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.counts.Passwords++
	if !ok {
		g.counts.Wrong++
	}
	g.mu.Unlock()
}

// ArbiterChecked counts an arbiter proof checked, ok when it was right.
func (g *Guesses) ArbiterChecked(ok bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.counts.Arbiters++
	if !ok {
		g.counts.WrongArbiter++
	}
	g.mu.Unlock()
}

// Counts returns the counters.
func (g *Guesses) Counts() GuessCounts {
	if g == nil {
		return GuessCounts{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.counts
}
