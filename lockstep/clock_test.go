package lockstep

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Unix(0, 0)
	c := NewClock(60, t0)
	if c.Interval() != time.Second/60 {
		t.Fatalf("interval %v", c.Interval())
	}
	total := 0
	// Wake-ups at uneven, late times: one second yields 60 ticks.
	for _, ms := range []int{10, 20, 40, 100, 300, 530, 700, 1000} {
		total += c.Due(t0.Add(time.Duration(ms)*time.Millisecond), 1, 1000)
	}
	if total != 60 {
		t.Fatalf("%d ticks in one second at 60/s", total)
	}
	// Speed 3 owes three times as many; paused owes none.
	if n := c.Due(t0.Add(1100*time.Millisecond), 3, 1000); n != 18 {
		t.Fatalf("100 ms at speed 3: %d ticks, want 18", n)
	}
	if n := c.Due(t0.Add(2100*time.Millisecond), 0, 1000); n != 0 {
		t.Fatalf("paused: %d ticks", n)
	}
	// A long stall is capped, and the excess is not carried over.
	if n := c.Due(t0.Add(12100*time.Millisecond), 1, 30); n != 30 {
		t.Fatalf("after a 10 s stall: %d ticks, want the cap of 30", n)
	}
	if n := c.Due(t0.Add(12100*time.Millisecond+time.Second/60), 1, 30); n != 1 {
		t.Fatalf("after the cap: %d ticks, want 1", n)
	}
}
