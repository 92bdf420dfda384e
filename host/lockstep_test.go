package host_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// hostTick is the host's latest stepped tick as recorded by startHost.
func hostTick(h *testHost) uint64 { return h.log.latest() }

// joinStalled joins a player named Stalled and does not run its session:
// it steps nothing and acknowledges no tick, as a machine that froze,
// until the test calls Run with ctx. It is closed when the test ends.
func joinStalled(t *testing.T, ctx context.Context, addr string) *join.Session {
	t.Helper()
	s, err := join.Join(ctx, joinCfg(addr, "Stalled", newHashLog()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestLagWaitHoldsTimeAndResumes(t *testing.T) {
	h := startHost(t, host.Config{TickRate: 100, Lag: host.LagConfig{MaxLag: 20}}, locksteptest.New(1, 16))
	var mu sync.Mutex
	var notices []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := joinCfg(h.addr, "Stalled", newHashLog())
	cfg.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
	s, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The client does not call Run: it simulates nothing and reports
	// nothing, like a machine that froze. The host must hold time.
	ready := s.Timings().ReadyTick
	testkit.WaitFor(t, "the hold", func() bool { return h.srv.Overview().Holding })
	held := hostTick(h)
	// The host steps no further than MaxLag+1 ahead of its slowest player,
	// even when a loaded machine leaves it a backlog of ticks owed.
	if held > ready+20+1 {
		t.Fatalf("host at tick %d with a client stalled at %d and MaxLag 20", held, ready)
	}
	time.Sleep(300 * time.Millisecond) // 30 ticks' worth of chances to move
	if again := hostTick(h); again != held {
		t.Fatalf("host moved from %d to %d while holding", held, again)
	}
	// The client wakes up: it catches up, reports, and time resumes.
	go s.Run(ctx)
	testkit.WaitFor(t, "time to resume", func() bool { return hostTick(h) > held+50 })
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(notices, "\n")
	if !strings.Contains(all, "Waiting for Stalled") || !strings.Contains(all, "running again") {
		t.Fatalf("notices do not say whom the session waited for and that it resumed:\n%s", all)
	}
}

func TestLagDropDisconnects(t *testing.T) {
	h := startHost(t, host.Config{TickRate: 100, Lag: host.LagConfig{MaxLag: 20, Policy: host.LagDrop}}, locksteptest.New(1, 16))
	// Alice watches: a spectator never counts for lag, so a loaded machine
	// slowing her cannot make her the one dropped or waited for.
	alice := startJoiner(t, h.addr, "Alice", spectate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := joinStalled(t, ctx, h.addr)
	// Stalled past MaxLag, it is dropped; only then does it read its
	// backlog, up to the disconnect.
	testkit.WaitFor(t, "the stalled player to be dropped", func() bool { return len(h.srv.Overview().Players) == 1 })
	err := s.Run(ctx)
	re, ok := err.(*join.RejectedError)
	if !ok || re.Reason != wire.ReasonLagging {
		t.Fatalf("stalled client ended with %v, want a Lagging disconnect", err)
	}
	// Time never stopped for Alice.
	t0 := alice.log.latest()
	testkit.WaitFor(t, "Alice to keep advancing", func() bool { return alice.log.latest() > t0+20 })
}

func TestCommandLimits(t *testing.T) {
	h := startHost(t, host.Config{Limits: host.LimitConfig{CommandRate: 5, CommandBurst: 5, MaxCommandPayload: 100}}, locksteptest.New(2, 16))
	var mu sync.Mutex
	var notices []string
	alice, re := joinWith(t, h.addr, "Alice", func(c *join.Config) {
		c.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
	})
	if re != nil {
		t.Fatal(re)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- alice.Run(ctx) }()
	refused := func(what string) {
		t.Helper()
		testkit.WaitFor(t, "a refusal: "+what, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, n := range notices {
				if strings.Contains(n, what) {
					return true
				}
			}
			return false
		})
	}
	alice.Send(0, locksteptest.KindAdd, make([]byte, 101))
	refused("over the limit of 100")
	time.Sleep(1100 * time.Millisecond) // refusal notices are at most one a second
	alice.Send(7, locksteptest.KindAdd, []byte{1})
	refused("no map 7")
	time.Sleep(1100 * time.Millisecond)
	for i := 0; i < 20; i++ {
		alice.Send(0, locksteptest.KindAdd, []byte{1})
	}
	refused("commands per second")
	select {
	case err := <-done:
		t.Fatalf("Alice was dropped: %v", err)
	default:
	}
}

// TestBotsStayInSync runs three clients sending random commands at high
// rates for thousands of ticks; every client's map hashes must equal the
// host's at the same ticks.
func TestBotsStayInSync(t *testing.T) {
	const maps = 4
	h := startHost(t, host.Config{TickRate: 500, Limits: host.LimitConfig{CommandRate: 2000, CommandBurst: 2000}}, locksteptest.New(maps, 512))
	var js []*testJoiner
	for _, name := range []string{"Bot_A", "Bot_B", "Bot_C"} {
		js = append(js, startJoiner(t, h.addr, name))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var sent sync.Map
	for i, j := range js {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			n := 0
			for ctx.Err() == nil {
				// Mostly valid commands, some for a map that does not exist
				// and some speed changes between 1x and 3x.
				var err error
				switch r := rng.IntN(20); {
				case r == 0:
					err = j.sess.Send(maps+rng.Int32N(3), locksteptest.KindAdd, []byte{1})
				case r == 1:
					c := lockstep.SetSpeed(uint8(1 + rng.IntN(3)))
					err = j.sess.Send(c.MapID, c.Kind, c.Payload)
				default:
					err = j.sess.Send(rng.Int32N(maps), locksteptest.KindAdd, []byte{byte(rng.IntN(256))})
				}
				if err != nil {
					return
				}
				n++
				time.Sleep(time.Millisecond)
			}
			sent.Store(i, n)
		}()
	}
	// The bots send until the host has made 3000 ticks and applied 1000
	// distinct commands, however long a loaded machine takes for either.
	applied := func() int { h.log.mu.Lock(); defer h.log.mu.Unlock(); return len(h.log.cmds) }
	target := hostTick(h) + 3000
	testkit.WaitWithin(t, 2*time.Minute, "3000 ticks and 1000 commands applied", func() bool {
		return hostTick(h) >= target && applied() >= 1000
	})
	target = hostTick(h)
	cancel()
	wg.Wait()
	total := 0
	sent.Range(func(_, v any) bool { total += v.(int); return true })
	t.Logf("%d commands sent, %d distinct applied on the host over %d ticks", total, applied(), target)
	for tick := target - 2000; tick <= target; tick += 250 {
		checkSameHashes(t, h, tick, js...)
	}
}

// TestLagWaitHoldsOnlySoLong: under LagWait a client that stops advancing
// holds time for MaxHold at most, then is dropped with reason Lagging and
// time resumes for the others.
func TestLagWaitHoldsOnlySoLong(t *testing.T) {
	h := startHost(t, host.Config{TickRate: 100, Lag: host.LagConfig{MaxLag: 20, MaxHold: 500 * time.Millisecond}}, locksteptest.New(1, 16))
	// Alice watches: a spectator never counts for lag, so a loaded machine
	// slowing her cannot make her the one dropped or waited for.
	alice := startJoiner(t, h.addr, "Alice", spectate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := joinStalled(t, ctx, h.addr)
	// Held within a few ticks of MaxLag...
	testkit.WaitFor(t, "the hold", func() bool { return h.srv.Overview().Holding })
	// ...then the stalled client is dropped and time runs again.
	testkit.WaitFor(t, "the stalled player to be dropped", func() bool { return len(h.srv.Overview().Players) == 1 })
	t0 := alice.log.latest()
	testkit.WaitFor(t, "Alice to advance again", func() bool { return alice.log.latest() > t0+50 })
	err := s.Run(ctx) // reads the backlog up to the disconnect
	// The drop names the rule that made it, MaxHold, rather than the test
	// timing the hold on a clock the machine's load can skew.
	if re, ok := err.(*join.RejectedError); !ok || re.Reason != wire.ReasonLagging || !strings.Contains(re.Message, "for over 500ms") {
		t.Fatalf("stalled client ended with %v, want a Lagging disconnect for a hold of over 500ms", err)
	}
}
