package join_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// heldSetup is a host with state hashes every 10 ticks, a Reconnector
// behind a relay following its session with Run, and a second player
// joined directly who sends commands while the first is away.
type heldSetup struct {
	h      *hosttest.Host
	relay  *testkit.Relay
	rc     *join.Reconnector
	other  *hosttest.Joiner
	joined chan *join.Session
	done   chan error
	first  *join.Session
}

func startHeld(t *testing.T, cfg host.Config) *heldSetup {
	t.Helper()
	cfg.Desync.HashEvery = 10
	h, relay, rc, _ := reconnectHost(t, cfg)
	st := &heldSetup{h: h, relay: relay, rc: rc, joined: make(chan *join.Session, 4), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := rc.Join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.first = s
	go func() { st.done <- rc.Run(ctx, s, func(n *join.Session) { st.joined <- n }) }()
	st.other = hosttest.Join(t, join.Config{Addr: h.Addr, Name: "Other", Loader: locksteptest.Load})
	return st
}

// accepted is the tick of the last hash report the host accepted from
// the player named name (0: none).
func accepted(h *hosttest.Host, name string) uint64 {
	for _, p := range h.Server.Overview().Players {
		if p.Name == name {
			return p.Accepted
		}
	}
	return 0
}

// cut waits for an accepted report of the Reconnector's player, cuts its
// connection, has the other player send n commands meanwhile, and
// returns the rejoined session.
func (st *heldSetup) cut(t *testing.T, n int) *join.Session {
	t.Helper()
	testkit.WaitFor(t, "an accepted hash report", func() bool { return accepted(st.h, "Wanderer") > 0 })
	st.relay.ResetAll()
	for i := range n {
		c := locksteptest.Counters{}.AddCommand(int32(i%8), 1)
		if err := st.other.Session.Send(c.MapID, c.Kind, c.Payload); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case s := <-st.joined:
		return s
	case err := <-st.done:
		t.Fatalf("Run ended: %v", err)
	case <-time.After(time.Minute): // bounds a hang only
		t.Fatal("no rejoin")
	}
	return nil
}

// TestReconnectorRejoinsFromHeldWorld: a player whose connection drops
// after WorldReady rejoins from the world it kept: the host sends the
// commands it missed, not the world, so the rejoin reads a small part of
// what the first join did; and its next hash report is accepted (the
// host compared it with its own state and found it equal).
func TestReconnectorRejoinsFromHeldWorld(t *testing.T) {
	st := startHeld(t, host.Config{})
	whole := st.relay.Conns()[0].Down()
	next := st.cut(t, 40)
	tm := next.Timings()
	if tm.Rejoin != wire.RejoinHeld {
		t.Fatalf("rejoin answered %v (%q), want held", tm.Rejoin, tm.RejoinWhy)
	}
	conns := st.relay.Conns()
	if len(conns) != 2 {
		t.Fatalf("%d connections, want 2", len(conns))
	}
	rejoinTick := tm.ReadyTick
	testkit.WaitFor(t, "a hash report accepted after the rejoin", func() bool { return accepted(st.h, "Wanderer") > rejoinTick })
	again := conns[1].Down()
	t.Logf("first join read %d bytes; the rejoin %d by WorldReady at tick %d (caught up %d ticks from %d)",
		whole, again, rejoinTick, tm.CatchUpTicks, tm.SnapshotTick)
	if again*50 > whole {
		t.Errorf("the rejoin read %d bytes, over 2%% of the first join's %d", again, whole)
	}
	ov := st.h.Server.Overview()
	if ov.Stats.RejoinsHeld != 1 || ov.Stats.RejoinsDownloaded != 0 || ov.Stats.Desyncs != 0 {
		t.Errorf("stats: %d held, %d downloaded, %d desyncs; want 1, 0, 0", ov.Stats.RejoinsHeld, ov.Stats.RejoinsDownloaded, ov.Stats.Desyncs)
	}
}

// TestReconnectorHeldWorldFallsBack: when the host no longer holds the
// commands since the kept world (its rejoin window passed), it says so
// and sends the world; the Reconnector lets its kept world go, loads the
// new one, and is back in step: its next hash report is accepted.
func TestReconnectorHeldWorldFallsBack(t *testing.T) {
	st := startHeld(t, host.Config{Join: host.JoinConfig{RejoinWindow: time.Millisecond}})
	whole := st.relay.Conns()[0].Down()
	next := st.cut(t, 40)
	tm := next.Timings()
	if tm.Rejoin != wire.RejoinWindow || tm.RejoinWhy == "" {
		t.Fatalf("rejoin answered %v (%q), want window with a reason", tm.Rejoin, tm.RejoinWhy)
	}
	again := st.relay.Conns()[1].Down()
	if again*2 < whole {
		t.Errorf("the fallback read %d bytes, the first join %d: want the world again", again, whole)
	}
	rejoinTick := tm.ReadyTick
	testkit.WaitFor(t, "a hash report accepted after the rejoin", func() bool { return accepted(st.h, "Wanderer") > rejoinTick })
	ov := st.h.Server.Overview()
	if ov.Stats.RejoinsHeld != 0 || ov.Stats.RejoinsDownloaded != 1 || ov.Stats.RejoinFallbacks[wire.RejoinWindow] != 1 || ov.Stats.Desyncs != 0 {
		t.Errorf("stats: %d held, %d downloaded, %v fallbacks, %d desyncs", ov.Stats.RejoinsHeld, ov.Stats.RejoinsDownloaded, ov.Stats.RejoinFallbacks, ov.Stats.Desyncs)
	}
}
