package host_test

import (
	"sync"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
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
