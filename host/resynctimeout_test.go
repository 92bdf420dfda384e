package host_test

import (
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestRepairTimeoutDropsOnce starts a repair for a client that then
// neither reads nor hangs up, so its connection lingers for a while after
// the repair times out and the host closes it. The drop is counted and
// recorded once, not again at every check until the client's leave
// arrives.
func TestRepairTimeoutDropsOnce(t *testing.T) {
	const every = 10
	h := startHost(t, host.Config{
		Desync:   host.DesyncConfig{HashEvery: every, ResyncTimeout: 300 * time.Millisecond},
		Timeouts: host.TimeoutConfig{KeepaliveEvery: 50 * time.Millisecond},
	}, locksteptest.New(2, 64))
	c := dialRaw(t, h.addr)
	c.toPlaying("Raw")
	c.desyncWorldOnly(h, every, 3*every)
	// The client stops here: the repair never goes in.
	testkit.WaitFor(t, "the repair to time out", func() bool { return h.srv.Overview().Stats.DesyncDrops > 0 })
	waitGone(t, h, "Raw", time.Now())
	if n := h.srv.Overview().Stats.DesyncDrops; n != 1 {
		t.Fatalf("%d desync drops counted, want 1", n)
	}
	dropped := 0
	for _, r := range h.srv.Overview().Desyncs {
		if r.Event == host.DesyncDropped {
			dropped++
		}
	}
	if dropped != 1 {
		t.Fatalf("%d drops recorded, want 1", dropped)
	}
}
