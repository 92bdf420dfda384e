package host_test

import (
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestReportAtWorldReadyTick pins docs/protocol.md section 9.3: a player
// may report the checkpoint at the tick of its own Client_WorldReady (it
// need not: the reference client reports from its next step on).
// Client_WorldReady is no hash report, so the report is not "at or below
// the previous one"; the host compares it like any other, here finding
// the wrong world hash a desync at that tick.
func TestReportAtWorldReadyTick(t *testing.T) {
	const every = 10
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, locksteptest.New(2, 64))
	startJoiner(t, h.addr, "Alice")
	// Alice is past WorldReady once the host compared a report of hers:
	// from then on the host takes a checkpoint at every multiple of every.
	testkit.WaitFor(t, "a report of Alice's compared", func() bool { return h.srv.Overview().Stats.HashReports > 0 })
	// A loaded machine's host may skip the checkpoint at the player's
	// WorldReady tick (its hashing fell behind): that report cannot be
	// compared and is counted unchecked. Another player then tries again.
	for i, name := range []string{"Bob", "Bob2", "Bob3"} {
		if reportAtReadyTick(t, h, name, every) {
			return
		}
		t.Logf("attempt %d: the host had no checkpoint at %s's WorldReady tick; again with another player", i+1, name)
	}
	t.Fatal("three players' reports at their WorldReady tick found no checkpoint to compare them with")
}

// reportAtReadyTick joins a raw player name that reports, at the tick of
// its Client_WorldReady, a wrong world hash, and checks the host's
// Server_Desync for it. It returns false if the host counted a report it
// could not compare and no desync came within 50 ticks after.
func reportAtReadyTick(t *testing.T, h *testHost, name string, every uint64) bool {
	t.Helper()
	floor := h.srv.Overview().Tick + 1
	bob := dialRaw(t, h.addr)
	bob.toUsername()
	bob.send(&wire.ClientUsername{Name: name})
	id := bob.syncClockUntil(wire.IDServerSession).(*wire.ServerSession).PlayerID
	var payload []byte
	var total uint64
	for total == 0 || uint64(len(payload)) < total {
		wd := bob.syncClockUntil(wire.IDServerWorldData).(*wire.ServerWorldData)
		payload, total = append(payload, wd.Data...), wd.Total
	}
	p, err := snapshot.Parse(payload)
	if err != nil {
		t.Fatal(err)
	}
	bob.send(&wire.ClientAck{Received: total})
	ready := max(p.Header.Tick, floor)
	ready = (ready + every - 1) / every * every // a checkpoint tick, at least the header's
	for max(bob.granted, p.Header.Granted) < ready {
		bob.syncClockUntil(wire.IDServerTick)
	}
	maps, ok := h.log.at(ready)
	if !ok {
		t.Fatalf("the host logged no hashes at tick %d", ready)
	}
	unchecked := h.srv.Overview().Stats.HashReportsUnchecked
	bob.send(&wire.ClientWorldReady{Tick: ready})
	bob.send(&wire.ClientHashes{Tick: ready, World: 1, Maps: []wire.MapHash{{MapID: 0, Hash: maps[0]}, {MapID: 1, Hash: maps[1]}}})
	var giveUp uint64
	for {
		d, ok := bob.syncClockUntilOneOf(wire.IDServerDesync, wire.IDServerTick).(*wire.ServerDesync)
		if !ok {
			bob.send(&wire.ClientTickAck{Tick: bob.granted}) // keep up, as a player does
			if giveUp == 0 && h.srv.Overview().Stats.HashReportsUnchecked > unchecked {
				giveUp = bob.granted + 50
			}
			if giveUp != 0 && bob.granted > giveUp {
				bob.nc.Close()
				return false
			}
			continue
		}
		if d.PlayerID != id || d.State != wire.DesyncDetected || d.Tick != ready || !d.World {
			t.Fatalf("desync %+v, want %s's (player %d) world detected at his WorldReady tick %d", d, name, id, ready)
		}
		bob.nc.Close()
		return true
	}
}
