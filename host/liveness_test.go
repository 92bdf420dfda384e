package host_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
)

func TestSilentClientTimesOut(t *testing.T) {
	// 3 s: long enough that Alice, echoing every 100 ms keepalive, is never
	// silent that long on a loaded machine; short enough to wait for.
	h := startHost(t, host.Config{Timeouts: host.TimeoutConfig{Idle: 3 * time.Second, KeepaliveEvery: 100 * time.Millisecond}}, locksteptest.New(1, 64))
	var mu sync.Mutex
	var notices []string
	alice := startJoiner(t, h.addr, "Alice", func(c *join.Config) {
		c.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
	})
	px := testkit.StartRelay(t, h.addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bobLog := newHashLog()
	cfg := joinCfg(px.Addr(), "Bob", bobLog)
	cfg.HostTimeout = time.Hour // Bob must not give up first
	bob, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go bob.Run(ctx)
	testkit.WaitFor(t, "Bob to play a while", func() bool { return bobLog.latest() > bob.Timings().ReadyTick+20 })
	px.Stall(true) // Bob's machine goes silent: no FIN, nothing
	// testkit.WaitFor gives up after 20 s, below the 30 s default Timeout: the drop
	// must come from the configured 1 s.
	testkit.WaitFor(t, "Bob to be dropped as timed out", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range notices {
			if strings.Contains(n, "Bob left the session (timed out)") {
				return true
			}
		}
		return false
	})
	t0 := alice.log.latest()
	testkit.WaitFor(t, "Alice to keep playing", func() bool { return alice.log.latest() > t0+20 })
}

func TestRTTNearInjectedDelay(t *testing.T) {
	h := startHost(t, host.Config{Timeouts: host.TimeoutConfig{KeepaliveEvery: 100 * time.Millisecond}}, locksteptest.New(1, 64))
	var mu sync.Mutex
	var bobRTT int32 = -1
	startJoiner(t, h.addr, "Alice", func(c *join.Config) {
		c.Players = func(ps []join.Player) {
			for _, p := range ps {
				if p.Name == "Bob" {
					mu.Lock()
					bobRTT = int32(p.Latency.Milliseconds())
					mu.Unlock()
				}
			}
		}
	})
	px := testkit.StartRelay(t, h.addr)
	px.SetDelay(40 * time.Millisecond) // 80 ms round trip
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bob, err := join.Join(ctx, joinCfg(px.Addr(), "Bob", newHashLog()))
	if err != nil {
		t.Fatal(err)
	}
	go bob.Run(ctx)
	// Every sample crosses the proxy both ways, so no measured round trip
	// can be under 80 ms; the upper bound only catches a wrong unit or a
	// wait counted in, with room for any scheduling delay a loaded machine
	// adds to a loopback round trip.
	inRange := func(ms int32) bool { return ms >= 80 && ms <= 1000 }
	testkit.WaitFor(t, "Bob's latency near 80 ms in Alice's list", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return inRange(bobRTT)
	})
	time.Sleep(1200 * time.Millisecond) // keepalive rounds refine it
	mu.Lock()
	defer mu.Unlock()
	t.Logf("Bob's latency as Alice sees it: %d ms (injected: 80 ms round trip)", bobRTT)
	if !inRange(bobRTT) {
		t.Fatalf("latency %d ms for an 80 ms round trip", bobRTT)
	}
}

func TestJoinerNoticesSilentHost(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 64))
	px := testkit.StartRelay(t, h.addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := joinCfg(px.Addr(), "Bob", newHashLog())
	cfg.HostTimeout = 500 * time.Millisecond
	bob, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bob.Run(ctx) }()
	px.Stall(true)
	// 20 s is below the 30 s default HostTimeout: the end must come from
	// the configured 500 ms.
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "went silent") {
			t.Fatalf("Run ended with %v, want the host gone silent", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the joiner did not notice the silent host")
	}

}
