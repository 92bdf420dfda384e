package lockstep_test

import (
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// cloneCounter is a Counters world that counts its clones.
type cloneCounter struct {
	*locksteptest.Counters
	clones int
}

func (c *cloneCounter) Clone() lockstep.Sim {
	c.clones++
	return c.Counters.Clone()
}

// TestCheckpointerSkipsWithoutCloning: a checkpoint skipped because the
// queue is full costs no clone; every checkpoint not skipped costs one.
func TestCheckpointerSkipsWithoutCloning(t *testing.T) {
	c := &cloneCounter{Counters: busyCounters(t, 2)}
	release := make(chan struct{})
	cp := lockstep.NewCheckpointer(false, 1, func(lockstep.Checkpoint) { <-release })
	for range 10 {
		cp.Take(c)
		c.Step()
	}
	skipped := cp.Skipped()
	close(release)
	cp.Close()
	if skipped < 6 || skipped > 8 {
		t.Fatalf("%d skipped of 10 with one hashing and two queued", skipped)
	}
	if c.clones != 10-int(skipped) {
		t.Fatalf("%d clones for %d checkpoints taken and %d skipped", c.clones, 10-skipped, skipped)
	}
}
