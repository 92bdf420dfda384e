package gate

import (
	"testing"
	"time"
)

func TestGuessLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := NewGuesses(1, 2, 1, 3, -1) // 2 per address at once, 3 in all, no puzzle
	steps := []struct {
		key  string
		at   time.Duration
		want Verdict
	}{
		{"a", 0, Check},
		{"a", 0, Check},
		{"a", 0, AddrLimit}, // a's burst is spent
		{"b", 0, Check},
		{"c", 0, AllLimit}, // the global burst is spent: a fresh address gains nothing
		{"c", time.Second, Check},
		{"d", time.Second, AllLimit},
		{"a", 2 * time.Second, Check},
	}
	for i, s := range steps {
		if got := g.Attempt(s.key, t0.Add(s.at), 0, true); got != s.want {
			t.Fatalf("step %d: attempt(%s at +%v) = %v, want %v", i, s.key, s.at, got, s.want)
		}
		if n, _ := g.Puzzle(t0.Add(s.at)); n != 0 {
			t.Fatalf("step %d: a puzzle with puzzles off", i)
		}
	}
	var none *Guesses = NewGuesses(-1, 0, 0, 0, 0)
	for range 100 {
		if n, _ := none.Puzzle(t0); none.Attempt("a", t0, 0, false) != Check || n != 0 {
			t.Fatal("no limit refused an attempt or set a puzzle")
		}
	}
}

// TestGuessPuzzle: past the free burst every check needs a solved puzzle,
// a bit harder for every puzzleStep checks, up to the maximum; the checks
// never pass the documented bound, however many addresses guess, and the
// load drains at the rate in all.
func TestGuessPuzzle(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const burst, maxBits = 5, 10
	g := NewGuesses(100, 100, 1, burst, maxBits)
	hard := burst + puzzleStep*(maxBits-PuzzleBaseBits+1) // 17
	checks := 0
	for i := 0; i < 1000; i++ {
		key := string(rune('a' + i%26)) // many addresses
		bits, done := g.Puzzle(t0)
		wantBits := 0
		if checks >= burst {
			wantBits = min(maxBits, PuzzleBaseBits+(checks-burst)/puzzleStep)
		}
		if bits != wantBits {
			t.Fatalf("after %d checks: puzzle of %d bits, want %d", checks, bits, wantBits)
		}
		if bits > 0 && g.Attempt(key, t0, bits, false) != NoSolution {
			t.Fatalf("after %d checks: an unsolved puzzle was not refused", checks)
		}
		done()
		switch v := g.Attempt(key, t0, bits, true); {
		case v == Check:
			checks++
		case v == AllLimit && checks == hard:
		default:
			t.Fatalf("after %d checks (bound %d): %v", checks, hard, v)
		}
	}
	if checks != hard {
		t.Fatalf("%d checks at one instant, want the bound %d", checks, hard)
	}
	c := g.Counts()
	if c.Checked != uint64(hard) || c.Puzzles == 0 || c.Refused == 0 || c.Bits != maxBits {
		t.Fatalf("counters %+v", c)
	}
	// Three seconds drain three checks: three more are checked, at the
	// hardest puzzle.
	later := t0.Add(3 * time.Second)
	for i := 0; i < 3; i++ {
		if n, _ := g.Puzzle(later); n != maxBits || g.Attempt("z", later, maxBits, true) != Check {
			t.Fatalf("check %d after the drain refused", i)
		}
	}
	if g.Attempt("y", later, maxBits, true) != AllLimit {
		t.Fatal("a fourth check after three seconds' drain")
	}
	// Once the load is gone, no puzzle.
	if n, _ := g.Puzzle(t0.Add(time.Minute)); n != 0 {
		t.Fatalf("a puzzle of %d bits after a quiet minute", n)
	}
}

// TestGuessPuzzleSetBeforeABurst: no more free passes are set than the
// free burst has room for, and puzzles set while the load was low stop
// counting once the load is puzzleWindow checks past what they were set
// for, so connections opened in advance buy only a few checks.
func TestGuessPuzzleSetBeforeABurst(t *testing.T) {
	t0 := time.Unix(1000, 0)
	const burst = 5
	g := NewGuesses(100, 1000, 1, burst, 24)
	burstOf := func(key string) (set, checks int) {
		sets := make([]int, 100) // 100 connections opened at once
		dones := make([]func(), 100)
		for i := range sets {
			sets[i], dones[i] = g.Puzzle(t0)
		}
		for i, s := range sets {
			dones[i]()
			if g.Attempt(key, t0, s, true) == Check {
				checks++
			}
		}
		return sets[len(sets)-1], checks
	}
	// Only the free burst's 5 get free passes; the other 95 get the first
	// puzzle, 8 bits, which counts while the load less the window (8) is
	// below the top of 8 bits' band (5 + 4): loads 5 to 16. 17 checks.
	if set, checks := burstOf("a"); set != PuzzleBaseBits || checks != 17 {
		t.Fatalf("opened at a load of 0: set %d bits, %d checked; want 8 and 17", set, checks)
	}
	// At a load of 17, the puzzle is 8 + (17-5)/4 = 11 bits; it counts
	// while the load less 8 is below the top of 11 bits' band (5 + 4*4 =
	// 21): loads 17 to 28, 12 checks.
	if set, checks := burstOf("b"); set != 11 || checks != 12 {
		t.Fatalf("opened at a load of 17: set %d bits, %d checked; want 11 and 12", set, checks)
	}
}
