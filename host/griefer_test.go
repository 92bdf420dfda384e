package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// rawJoin takes a raw client through the handshake as name (rejoining
// with token when it is set) into the playing phase, and returns the
// session token the host gave, or the host's refusal.
func (c *rawClient) rawJoin(name string, token []byte) ([]byte, *wire.ServerDisconnect) {
	c.t.Helper()
	c.toUsername()
	c.send(&wire.ClientUsername{Name: name, Token: token})
	var newToken, payload []byte
	var total uint64
	for total == 0 || uint64(len(payload)) < total {
		id, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("joining as %s: %v", name, err)
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			c.t.Fatal(err)
		}
		switch p := p.(type) {
		case *wire.ServerDisconnect:
			return nil, p
		case *wire.ServerSession:
			newToken = p.Token
		case *wire.ServerWorldData:
			payload, total = append(payload, p.Data...), p.Total
		}
	}
	pl, err := snapshot.Parse(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(&wire.ClientAck{Received: total})
	c.send(&wire.ClientWorldReady{Tick: pl.Header.Granted})
	c.clockSynced(name)
	return newToken, nil
}

// wrongHashes reports a world hash that differs at the next checkpoint.
func (c *rawClient) wrongHashes(every uint64) {
	c.t.Helper()
	cp := (c.nextTick(0)/every + 1) * every
	c.nextTick(cp)
	c.send(&wire.ClientHashes{Tick: cp, World: 0xBAD})
}

// TestDesyncBudgetSurvivesRejoin: a player that sends wrong hashes is
// dropped at the desync limit; rejoining with its token does not start
// the count over (its next desync drops it at once, with no repair and
// no notice), and with a cool-down it cannot rejoin at all for a while.
// A real player plays on in sync.
func TestDesyncBudgetSurvivesRejoin(t *testing.T) {
	const every = 10
	for _, tc := range []struct {
		name     string
		cooldown time.Duration
	}{
		{"no cool-down", -1},
		{"cool-down", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every, Limit: 1}, Lag: host.LagConfig{DropCooldown: tc.cooldown}}, locksteptest.New(2, 64))
			alice := startJoiner(t, h.addr, "Alice", spectate)
			c := dialRaw(t, h.addr)
			token, d := c.rawJoin("Looper", nil)
			if d != nil {
				t.Fatalf("first join: %+v", d)
			}
			c.wrongHashes(every)
			rs := c.syncClockUntil(wire.IDServerResync).(*wire.ServerResync)
			// As a real client, claim the repair only once its data comes
			// (the host knows its own hash at the cut by then).
			c.syncClockUntil(wire.IDServerWorldData)
			c.send(&wire.ClientResynced{Tick: rs.Tick, World: 0xBAD}) // still wrong: desync 2, over the limit
			if d := c.expect(wire.IDServerDisconnect).(*wire.ServerDisconnect); d.Reason != wire.ReasonDesync {
				t.Fatalf("%+v, want Desync", d)
			}
			testkit.WaitFor(t, "the looper to leave", func() bool { return len(h.srv.Overview().Players) == 1 })

			c2 := dialRaw(t, h.addr)
			_, d = c2.rawJoin("Looper", token)
			if tc.cooldown > 0 {
				if d == nil || d.Reason != wire.ReasonDesync || !strings.Contains(d.Message, "may rejoin in") {
					t.Fatalf("rejoin during the cool-down: %+v, want Desync naming the wait", d)
				}
			} else {
				if d != nil {
					t.Fatalf("rejoin: %+v", d)
				}
				c2.wrongHashes(every)
				d := c2.expect(wire.IDServerDisconnect).(*wire.ServerDisconnect)
				if d.Reason != wire.ReasonDesync || !strings.Contains(d.Message, "3 desyncs") {
					t.Fatalf("desync after a rejoin: %+v, want a Desync drop counting all 3", d)
				}
			}
			wantDesyncs := 2
			if tc.cooldown < 0 {
				wantDesyncs = 3
			}
			testkit.WaitFor(t, "the desyncs to be counted", func() bool { return h.srv.Overview().Stats.Desyncs == wantDesyncs })
			if st := h.srv.Overview().Stats; st.Repaired != 0 || st.DesyncDrops != wantDesyncs-1 {
				t.Fatalf("stats %+v: want %d desyncs, %d drops, no repair", st, wantDesyncs, wantDesyncs-1)
			}
			checkSameHashes(t, h, (hostTick(h)/every+2)*every, alice)
		})
	}
}

// TestLagGrieferCoolsDown: a player that never advances is dropped after
// MaxHold; rejoining with its token during the cool-down is refused as
// Lagging, so it cannot freeze the session again; the others play on.
func TestLagGrieferCoolsDown(t *testing.T) {
	h := startHost(t, host.Config{TickRate: 100, Lag: host.LagConfig{MaxLag: 20, MaxHold: 300 * time.Millisecond, DropCooldown: time.Hour}}, locksteptest.New(1, 16))
	alice := startJoiner(t, h.addr, "Alice", spectate)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := joinStalled(t, ctx, h.addr)
	token, _ := s.Token()
	testkit.WaitFor(t, "the stalled player to be dropped", func() bool { return len(h.srv.Overview().Players) == 1 })
	var re *join.RejectedError
	if err := s.Run(ctx); !errors.As(err, &re) || re.Reason != wire.ReasonLagging {
		t.Fatalf("stalled player ended with %v, want Lagging", err)
	}
	if got := tryJoin(t, h.addr, "Stalled", func(c *join.Config) { c.Token = token }); got != wire.ReasonLagging {
		t.Fatalf("rejoin during the cool-down: %v, want Lagging", got)
	}
	if h.srv.Overview().Holding {
		t.Fatal("time is held after the refused rejoin")
	}
	checkSameHashes(t, h, hostTick(h)+50, alice)
}
