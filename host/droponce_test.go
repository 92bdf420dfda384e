package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// spectate makes a joiner a spectator.
func spectate(c *join.Config) { c.Spectate = true }

// waitGone waits for an overview taken after since that no longer lists
// the named player: the host has seen it leave.
func waitGone(t *testing.T, h *testHost, name string, since time.Time) {
	t.Helper()
	testkit.WaitFor(t, name+" to leave", func() bool {
		o := h.srv.Overview()
		return o.At.After(since) && !slices.ContainsFunc(o.Players, func(p host.PlayerView) bool { return p.Name == name })
	})
}

// TestLagDropDropsOnce stalls a client under LagDrop. The client neither
// reads nor hangs up, so its connection lingers for a while after the
// host closes it; the host must drop it once, not again every tick until
// its leave arrives.
func TestLagDropDropsOnce(t *testing.T) {
	var logs syncbuf.Buffer
	h := startHost(t, host.Config{TickRate: 100,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Lag:    host.LagConfig{MaxLag: 20, Policy: host.LagDrop},
	}, locksteptest.New(1, 16))
	// Alice watches: a spectator never counts for lag, so a loaded machine
	// slowing her cannot make her the one dropped or waited for.
	startJoiner(t, h.addr, "Alice", spectate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := joinStalled(t, ctx, h.addr)
	// The client does not call Run: it acknowledges no tick.
	testkit.WaitFor(t, "the stalled player to be dropped", func() bool { return strings.Contains(logs.String(), "dropping a lagging player") })
	waitGone(t, h, "Stalled", time.Now())
	line := fmt.Sprintf(`msg="dropping a lagging player" player=%d `, s.Info().PlayerID)
	if n := strings.Count(logs.String(), line); n != 1 {
		t.Fatalf("the stalled player was dropped %d times, want once", n)
	}
}

// TestRejoinWrongPasswordKeepsToken rejoins with the right token but a
// wrong password: it is refused as BadPassword, and the token still works
// with the right password, as the same player. Both when the host has
// seen the old connection leave and when it still holds it.
func TestRejoinWrongPasswordKeepsToken(t *testing.T) {
	for _, lingering := range []bool{false, true} {
		name := "left"
		if lingering {
			name = "lingering"
		}
		t.Run(name, func(t *testing.T) {
			h := startHost(t, host.Config{Admission: host.AdmissionConfig{Password: []byte("secret")}, Timeouts: host.TimeoutConfig{Idle: time.Minute}}, locksteptest.New(2, 256))
			startJoiner(t, h.addr, "Alice", func(c *join.Config) { c.Password = []byte("secret") })
			addr := h.addr
			var px *testkit.Relay
			if lingering {
				// Through a proxy that can hold Bob's hang-up from the host.
				px = testkit.StartRelay(t, h.addr)
				addr = px.Addr()
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := joinCfg(addr, "Bob", newHashLog())
			cfg.Password = []byte("secret")
			bob, err := join.Join(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			runErr := make(chan error, 1)
			go func() { runErr <- bob.Run(ctx) }()
			var token []byte
			testkit.WaitFor(t, "Bob's session token", func() bool { token, _ = bob.Token(); return token != nil })
			first := bob.Info()
			if lingering {
				px.Stall(true) // the host does not notice Bob is gone
			}
			bob.Close()
			<-runErr
			if !lingering {
				waitGone(t, h, "Bob", time.Now())
			}

			cfg = joinCfg(h.addr, "Bob", newHashLog())
			cfg.Token = token
			cfg.Password = []byte("wrong")
			_, err = join.Join(ctx, cfg)
			var re *join.RejectedError
			if !errors.As(err, &re) || re.Reason != wire.ReasonBadPassword {
				t.Fatalf("rejoin with a wrong password: %v, want BadPassword", err)
			}

			cfg.Password = []byte("secret")
			again, err := join.Join(ctx, cfg)
			if err != nil {
				t.Fatalf("rejoin with the right password after a refused one: %v", err)
			}
			defer again.Close()
			if second := again.Info(); second.PlayerID != first.PlayerID {
				t.Fatalf("rejoined as player %d, was %d", second.PlayerID, first.PlayerID)
			}
		})
	}
}
