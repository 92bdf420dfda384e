package host

import (
	"testing"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// TestHoldBudget: time held adds up per player over separate holds (a
// rejoin keeps the same conduct) until the window passes.
func TestHoldBudget(t *testing.T) {
	s := newConducts(Config{Lag: LagConfig{MaxHold: time.Minute, HoldWindow: 10 * time.Minute, DropCooldown: 2 * time.Minute}})
	t0 := time.Unix(1000, 0)
	c := s.of(7)
	if s.of(7) != c {
		t.Fatal("a player's conduct is not kept")
	}
	steps := []struct {
		at    time.Duration
		held  time.Duration
		spent bool
	}{
		{0, 40 * time.Second, false},
		{2 * time.Minute, 19 * time.Second, false},  // 59 s in all
		{3 * time.Minute, 2 * time.Second, true},    // over a minute: a rejoin did not reset it
		{11 * time.Minute, 30 * time.Second, false}, // a new window
	}
	for i, st := range steps {
		if got := s.chargeHold(c, t0.Add(st.at), st.held); got != st.spent {
			t.Fatalf("step %d: spent = %v, want %v (held %v)", i, got, st.spent, c.held)
		}
	}
	s.coolDown(c, t0, wire.ReasonLagging)
	if want := t0.Add(2 * time.Minute); !c.coolUntil.Equal(want) || c.coolWhy != wire.ReasonLagging {
		t.Fatalf("cool-down until %v for %v, want %v for Lagging", c.coolUntil, c.coolWhy, want)
	}
	s.sweep(t0.Add(time.Minute), func(int32) bool { return false })
	if s.byID[7] == nil {
		t.Fatal("swept a conduct whose cool-down runs")
	}
	s.sweep(t0.Add(time.Hour), func(int32) bool { return false })
	if s.byID[7] != nil {
		t.Fatal("kept the conduct of a player long gone")
	}
}
