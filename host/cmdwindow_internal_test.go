package host

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

func cmdAt(tick uint64, seq uint32, payload int) lockstep.Command {
	return lockstep.Command{Tick: tick, Seq: seq, Payload: make([]byte, payload)}
}

// TestCmdWindowSince: the commands after a position are those of its
// tick from its applied count on and every later tick's; a position
// before the window's first whole tick is not served.
func TestCmdWindowSince(t *testing.T) {
	w := newCmdWindow(time.Minute, 1<<20, 3)
	w.add([]lockstep.Command{cmdAt(5, 0, 1), cmdAt(5, 1, 1), cmdAt(7, 0, 1)})
	for _, c := range []struct {
		tick    uint64
		applied uint32
		want    int
		ok      bool
	}{
		{2, 0, 0, false}, {3, 0, 3, true}, {5, 0, 3, true}, {5, 1, 2, true}, {5, 2, 1, true}, {6, 0, 1, true}, {7, 1, 0, true}, {9, 0, 0, true},
	} {
		got, ok := w.since(c.tick, c.applied)
		if ok != c.ok || len(got) != c.want {
			t.Errorf("since(%d, %d) = %d commands, %v; want %d, %v", c.tick, c.applied, len(got), ok, c.want, c.ok)
		}
	}
}

// TestCmdWindowBounds: past its byte bound the window lets the oldest
// tick go whole, and past its time it lets go of the ticks stamped
// before then; what it keeps it keeps from a whole tick on.
func TestCmdWindowBounds(t *testing.T) {
	w := newCmdWindow(10*time.Second, 3*(commandCost+10), 0)
	w.add([]lockstep.Command{cmdAt(1, 0, 10), cmdAt(1, 1, 10), cmdAt(2, 0, 10)})
	w.add([]lockstep.Command{cmdAt(3, 0, 10)}) // over the bound: tick 1 goes whole
	if _, ok := w.since(1, 1); ok || w.from != 2 {
		t.Fatalf("after the byte bound: from %d, tick 1 still served", w.from)
	}
	if got, ok := w.since(2, 0); !ok || len(got) != 2 || w.bytes != 2*(commandCost+10) {
		t.Fatalf("since(2, 0) = %d commands, %v; %d bytes held", len(got), ok, w.bytes)
	}
	t0 := time.Unix(1000, 0)
	w.advance(t0, 3)                     // the host at tick 3 now
	w.advance(t0.Add(5*time.Second), 60) // still inside the window
	if w.from != 2 {
		t.Fatalf("from %d after 5 s, want 2", w.from)
	}
	w.advance(t0.Add(11*time.Second), 120) // tick 3 was stamped over 10 s ago
	if _, ok := w.since(3, 0); ok || w.from != 4 || w.bytes != 0 {
		t.Fatalf("after the time bound: from %d, %d bytes, tick 3 still served", w.from, w.bytes)
	}
	if _, ok := w.since(4, 0); !ok {
		t.Fatal("tick 4 on is held (nothing was stamped there)")
	}
}

// TestReplayRaw: the replay lays the commands out so that they read
// back as they were, the host's speed with them; over the limit it is
// refused.
func TestReplayRaw(t *testing.T) {
	cmds := []lockstep.Command{cmdAt(5, 1, 2), cmdAt(7, 0, 2), cmdAt(7, 1, 2)}
	raw, ok := replayRaw(cmds, 2, 1<<20)
	if !ok {
		t.Fatal("refused")
	}
	got, speed, err := wire.DecodeReplay(raw)
	if err != nil || speed != 2 || len(got) != len(cmds) {
		t.Fatalf("read back %d commands at speed %d: %v", len(got), speed, err)
	}
	for i := range cmds {
		if got[i].Tick != cmds[i].Tick || got[i].Seq != cmds[i].Seq || !bytes.Equal(got[i].Payload, cmds[i].Payload) {
			t.Errorf("command %d read back as %+v, want %+v", i, got[i], cmds[i])
		}
	}
	if _, ok := replayRaw(cmds, 2, len(raw)-1); ok {
		t.Fatal("a replay over the limit was not refused")
	}
}

// TestCmdWindowMemory measures what a minute of commands at 100 a second
// (colony's average payload is about 9 bytes) costs the window on the
// heap, against the bytes it counts for its bound: the count must not
// fall below what the heap holds by more than half, or the byte bound
// would not bound the memory.
func TestCmdWindowMemory(t *testing.T) {
	const perMinute = 100 * 60
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := newCmdWindow(time.Hour, 1<<30, 0)
	for i := range perMinute {
		w.add([]lockstep.Command{{Tick: uint64(i), MapID: 1, Kind: 2, Player: 3, Payload: make([]byte, 9)}})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("a minute at 100 commands/s: %d commands, %.2f MiB counted, %.2f MiB on the heap", perMinute,
		float64(w.bytes)/(1<<20), float64(heap)/(1<<20))
	if heap > 2*w.bytes {
		t.Errorf("the heap holds %d bytes, the window counts %d", heap, w.bytes)
	}
	runtime.KeepAlive(w)
}
