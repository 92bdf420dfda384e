package host

import (
	"testing"
	"time"
)

// TestTickRate: the overview's ticks per second are the ticks made over
// the last whole second or more, on the times it is given.
func TestTickRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r tickRate
	steps := []struct {
		at   time.Duration
		tick uint64
		want float64
	}{
		{0, 10, 0},                      // the first observation sets the start
		{500 * time.Millisecond, 40, 0}, // under a second: no figure yet
		{time.Second, 70, 60},           // 60 ticks in 1 s
		{1500 * time.Millisecond, 200, 60},
		{3 * time.Second, 130, 30}, // 60 ticks in 2 s
	}
	for _, s := range steps {
		if got := r.observe(t0.Add(s.at), s.tick); got != s.want {
			t.Fatalf("at %v tick %d: %.1f ticks/s, want %.1f", s.at, s.tick, got, s.want)
		}
	}
}
