package host

import (
	"testing"
	"time"
)

func TestGuessLimiter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	g := newGuessLimiter(1, 2, 1, 3) // 2 per address at once, 3 in all
	steps := []struct {
		key  string
		at   time.Duration
		want bool
	}{
		{"a", 0, true},
		{"a", 0, true},
		{"a", 0, false}, // a's burst is spent
		{"b", 0, true},
		{"c", 0, false}, // the global burst is spent: a fresh address gains nothing
		{"c", time.Second, true},
		{"d", time.Second, false},
		{"a", 2 * time.Second, true},
	}
	for i, s := range steps {
		if got := g.attempt(s.key, t0.Add(s.at)); got != s.want {
			t.Fatalf("step %d: attempt(%s at +%v) = %v, want %v", i, s.key, s.at, got, s.want)
		}
	}
	var none *guessLimiter = newGuessLimiter(-1, 0, 0, 0)
	for range 100 {
		if !none.attempt("a", t0) {
			t.Fatal("no limit refused an attempt")
		}
	}
}
