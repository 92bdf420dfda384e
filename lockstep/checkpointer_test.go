package lockstep_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// TestHasherWorkers: hashing maps in parallel gives what one goroutine
// gives, and with versions the cache still works.
func TestHasherWorkers(t *testing.T) {
	c := busyCounters(t, 9)
	one := lockstep.Hasher{}
	for _, workers := range []int{2, 4, 16} {
		par := lockstep.Hasher{Workers: workers, UseVersions: true}
		for range 3 {
			want := one.Take(c)
			got := par.Take(c)
			if got.Tick != want.Tick || got.World != want.World || !slices.EqualFunc(got.Maps, want.Maps, func(a, b lockstep.MapCheckpoint) bool {
				return a.ID == b.ID && a.Hash == b.Hash
			}) {
				t.Fatalf("%d workers: %+v, one goroutine %+v", workers, got, want)
			}
			checkCheckpoint(t, got, c)
			c.Step()
		}
	}
}

// TestCheckpointerClones: a Cloner is cloned at Take and hashed on the
// checkpointer's goroutine; the checkpoints come in order and equal the
// state at each Take, though the original has moved on.
func TestCheckpointerClones(t *testing.T) {
	c := busyCounters(t, 4)
	got := make(chan lockstep.Checkpoint, 16)
	cp := lockstep.NewCheckpointer(true, 2, func(x lockstep.Checkpoint) { got <- x })
	defer cp.Close()
	var h lockstep.Hasher
	for i := range 5 {
		if _, ok := cp.Take(c); ok {
			t.Fatal("a Cloner was hashed on the calling goroutine")
		}
		w := h.Take(c)
		c.Step()
		if err := c.Apply(add(1, 3)); err != nil {
			t.Fatal(err)
		}
		// The original has moved on; the checkpoint is of the state at
		// Take. Waiting for it before the next Take keeps the queue
		// empty, so none is skipped however slowly the hashing runs.
		select {
		case g := <-got:
			if g.Tick != w.Tick || g.World != w.World {
				t.Fatalf("checkpoint %d: tick %d world %016x, want tick %d world %016x", i, g.Tick, g.World, w.Tick, w.World)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("checkpoint %d never came", i)
		}
	}
	if cp.Skipped() != 0 {
		t.Fatalf("%d skipped", cp.Skipped())
	}
}

// TestCheckpointerInline: a simulation that cannot clone is hashed at
// once, on the calling goroutine.
func TestCheckpointerInline(t *testing.T) {
	c := busyCounters(t, 3)
	cp := lockstep.NewCheckpointer(false, 4, func(lockstep.Checkpoint) { t.Error("out called for an inline checkpoint") })
	defer cp.Close()
	x, ok := cp.Take(noVersions{c})
	if !ok {
		t.Fatal("not hashed inline")
	}
	checkCheckpoint(t, x, c)
}

// TestCheckpointerSkipsWhenBehind: with the hashing goroutine stuck, clones
// do not pile up: past a short queue, checkpoints are skipped and counted.
func TestCheckpointerSkipsWhenBehind(t *testing.T) {
	c := busyCounters(t, 2)
	release := make(chan struct{})
	cp := lockstep.NewCheckpointer(false, 1, func(lockstep.Checkpoint) { <-release })
	for range 10 {
		cp.Take(c)
		c.Step()
	}
	if s := cp.Skipped(); s < 6 || s > 8 {
		t.Fatalf("%d skipped of 10 with one hashing and two queued", s)
	}
	close(release)
	cp.Close()
	if _, ok := cp.Take(c); ok {
		t.Fatal("Take after Close hashed inline")
	}
}

var _ lockstep.Cloner = (*locksteptest.Counters)(nil)
