package host_test

import (
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// silentPlayer plays without ever reporting state hashes: it answers
// clock rounds and keepalives and acknowledges every grant, so the lag
// policy never holds for it, until the host disconnects it or until
// stop reports true (checked after each tick).
func (c *rawClient) silentPlayer(stop func() bool) *wire.ServerDisconnect {
	c.t.Helper()
	for {
		id, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("silent player: %v", err)
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			c.t.Fatal(err)
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
		case *wire.ServerKeepalive:
			c.send(&wire.ClientKeepalive{Seq: p.Seq, HostTime: p.HostTime})
		case *wire.ServerTick:
			c.send(&wire.ClientTickAck{Tick: p.Granted})
			if stop != nil && stop() {
				return nil
			}
		case *wire.ServerDisconnect:
			return p
		}
	}
}

// unverified reports whether the host's overview marks name unverified.
func unverified(h *testHost, name string) bool {
	for _, p := range h.srv.Overview().Players {
		if p.Name == name {
			return p.Unverified
		}
	}
	return false
}

// TestUnverifiedPlayerMarked checks that a player that never reports
// hashes is marked unverified while one that does (the join tool) is
// not, and that without DropUnverified nobody is dropped for it.
func TestUnverifiedPlayerMarked(t *testing.T) {
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: 10}, Lag: host.LagConfig{MaxLag: 20}}, locksteptest.New(2, 64))
	startJoiner(t, h.addr, "Honest")
	c := dialRaw(t, h.addr)
	c.toPlaying("Silent")
	start := h.srv.Overview().Tick
	if d := c.silentPlayer(func() bool { return unverified(h, "Silent") }); d != nil {
		t.Fatalf("the silent player was dropped without --drop-unverified: %+v", d)
	}
	o := h.srv.Overview()
	if o.Tick-start < 40 {
		t.Errorf("marked unverified %d ticks after WorldReady; the rule is 2 intervals (20) past max lag (20)", o.Tick-start)
	}
	for _, p := range o.Players {
		if p.Name == "Honest" && p.Unverified {
			t.Error("the join tool, which reports its hashes, is marked unverified")
		}
	}
}

// TestDropUnverified checks that DropUnverified drops a player that never
// reports hashes, with reason Desync.
func TestDropUnverified(t *testing.T) {
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: 10, DropUnverified: 3}, Lag: host.LagConfig{MaxLag: 20}}, locksteptest.New(2, 64))
	c := dialRaw(t, h.addr)
	c.toPlaying("Silent")
	d := c.silentPlayer(nil)
	if d.Reason != wire.ReasonDesync {
		t.Fatalf("dropped with %s (%q), want Desync", d.Reason, d.Message)
	}
	t.Logf("dropped: %s", d.Message)
	// The overview is published at the end of the session's tick, which
	// can come after the client reads its disconnect.
	testkit.WaitFor(t, "the unverified drop counted in the overview", func() bool {
		return h.srv.Overview().Stats.UnverifiedDrops >= 1
	})
	if n := h.srv.Overview().Stats.UnverifiedDrops; n != 1 {
		t.Errorf("UnverifiedDrops = %d, want 1", n)
	}
}
