package host_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// gatedCounters is a Counters world whose clones hash their maps only
// while gate is not write-locked: with it locked, the host's checkpoint
// hashing stalls as on a loaded machine, and its checkpoints are skipped.
type gatedCounters struct {
	*locksteptest.Counters
	gate *sync.RWMutex
}

func (g gatedCounters) Clone() lockstep.Sim {
	return gatedClone{Sim: g.Counters.Clone(), gate: g.gate}
}

type gatedClone struct {
	lockstep.Sim
	gate *sync.RWMutex
}

func (c gatedClone) MapHash(id int32) (uint64, bool) {
	c.gate.RLock()
	defer c.gate.RUnlock()
	return c.Sim.MapHash(id)
}

// TestReportOnSkippedCheckpointIsCounted: a hash report whose tick's
// checkpoint the host skipped cannot be compared. It is counted as
// unchecked, ends nothing, and the client's next report is compared.
func TestReportOnSkippedCheckpointIsCounted(t *testing.T) {
	const every = 10
	var gate sync.RWMutex
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, gatedCounters{Counters: locksteptest.New(2, 64), gate: &gate})
	c := dialRaw(t, h.addr)
	c.toPlaying("Raw")
	stats := func() host.Stats { return h.srv.Overview().Stats }
	// readTicks answers clock rounds and acknowledges ticks until done.
	readTicks := func(done func() bool) {
		t.Helper()
		for !done() {
			c.send(&wire.ClientTickAck{Tick: c.nextTick(0)})
		}
	}

	gate.Lock()
	skipped := stats().CheckpointsSkipped
	readTicks(func() bool { return stats().CheckpointsSkipped > skipped })
	// The clone queue is full now and stays full while the gate is shut,
	// so every checkpoint past the host's present tick is skipped.
	cp := (h.log.latest()/every + 2) * every
	readTicks(func() bool { return h.log.latest() > cp+every })
	maps, _ := h.log.at(cp)
	before := stats()
	c.send(&wire.ClientHashes{Tick: cp, World: 1, Maps: []wire.MapHash{{MapID: 0, Hash: maps[0]}, {MapID: 1, Hash: maps[1]}}})
	gate.Unlock()
	readTicks(func() bool { return stats().HashReportsUnchecked > before.HashReportsUnchecked })
	if st := stats(); st.HashReportsUnchecked != before.HashReportsUnchecked+1 || st.HashReports != before.HashReports || st.Desyncs != 0 {
		t.Fatalf("stats %+v after one report on a skipped checkpoint, from %+v", st, before)
	}

	// The next report is compared: its wrong world hash starts a repair.
	rs := c.desyncWorldOnly(h, every, cp+every)
	if !rs.Full {
		t.Fatalf("%+v, want a full repair", rs)
	}
	if st := stats(); st.HashReports != before.HashReports+1 || st.Desyncs != 1 {
		t.Fatalf("stats %+v: want the second report compared and a desync", st)
	}
}

// TestCheckpointsOnlyWhileSomeoneIsReady: a host with nobody past
// WorldReady hashes nothing; once a player is in, it checkpoints and
// compares the player's reports; when the player leaves, it stops again.
func TestCheckpointsOnlyWhileSomeoneIsReady(t *testing.T) {
	const every = 10
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, locksteptest.New(2, 64))
	stats := func() host.Stats { return h.srv.Overview().Stats }
	testkit.WaitFor(t, "the host to pass five intervals", func() bool { return h.log.latest() > 5*every })
	if n := stats().Checkpoints; n != 0 {
		t.Fatalf("%d checkpoints taken with nobody in", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	s, err := join.Join(ctx, joinCfg(h.addr, "Alice", newHashLog()))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	testkit.WaitFor(t, "Alice's reports to be compared", func() bool { return stats().HashReports >= 3 })
	if st := stats(); st.Checkpoints < 3 || st.Desyncs != 0 {
		t.Fatalf("stats %+v: want checkpoints, no desync", st)
	}
	cancel()
	<-done
	testkit.WaitFor(t, "Alice to be gone", func() bool { return len(h.srv.Overview().Players) == 0 })
	n := stats().Checkpoints
	from := h.log.latest()
	testkit.WaitFor(t, "the host to pass five more intervals", func() bool { return h.log.latest() > from+5*every })
	if m := stats().Checkpoints; m != n {
		t.Fatalf("%d checkpoints taken after everyone left", m-n)
	}
}

// TestReportBeforeFirstCheckpointIsUnchecked: a player's first report
// may be for a tick the host passed while nobody was ready, so took no
// checkpoint at. It is counted as unchecked, without the notice a report
// older than the host's window gets.
func TestReportBeforeFirstCheckpointIsUnchecked(t *testing.T) {
	const every = 10
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, locksteptest.New(2, 64))
	testkit.WaitFor(t, "the host to pass five intervals", func() bool { return h.log.latest() > 5*every })
	c := dialRaw(t, h.addr)
	c.toPlaying("Raw")
	maps, _ := h.log.at(2 * every)
	c.send(&wire.ClientHashes{Tick: 2 * every, Maps: []wire.MapHash{{MapID: 0, Hash: maps[0]}, {MapID: 1, Hash: maps[1]}}})
	for h.srv.Overview().Stats.HashReportsUnchecked == 0 {
		if n, ok := c.syncClockUntilOneOf(wire.IDServerTick, wire.IDServerNotice).(*wire.ServerNotice); ok {
			t.Fatalf("notice %q for a report inside the window", n.Text)
		}
		c.send(&wire.ClientTickAck{Tick: c.granted})
	}
	if st := h.srv.Overview().Stats; st.HashReportsUnchecked != 1 || st.HashReports != 0 || st.Desyncs != 0 {
		t.Fatalf("stats %+v: want the one report unchecked", st)
	}
}
