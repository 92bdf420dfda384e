package lockstep

import "time"

// Clock turns wall time into the ticks owed at a rate and a speed, so a
// late wake-up (a busy machine, a garbage collection) is made up on the
// next one instead of being lost: over time the host keeps its rate.
type Clock struct {
	interval time.Duration // one tick at speed 1
	last     time.Time
	credit   time.Duration // time owed, scaled by speed
}

// NewClock returns a clock of rate ticks per second at speed 1, started at
// now.
func NewClock(rate int, now time.Time) *Clock {
	return &Clock{interval: time.Second / time.Duration(rate), last: now}
}

// Interval is one tick at speed 1.
func (c *Clock) Interval() time.Duration { return c.interval }

// Due returns how many ticks to simulate at now, at most max; anything owed
// beyond max is forgotten so that a long stall does not turn into a burst.
// Speed 0 (paused) owes nothing.
func (c *Clock) Due(now time.Time, speed uint8, max int) int {
	elapsed := now.Sub(c.last)
	c.last = now
	if elapsed < 0 {
		elapsed = 0
	}
	c.credit += elapsed * time.Duration(speed)
	n := int(c.credit / c.interval)
	if n > max {
		n = max
		c.credit = 0
	} else {
		c.credit -= time.Duration(n) * c.interval
	}
	return n
}
