package host_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestRejoinWithToken drops a player's connection mid-session; the player
// rejoins with its token as the same player ID, name and faction, and its
// map hashes equal the host's.
func TestRejoinWithToken(t *testing.T) {
	h := startHost(t, host.Config{Factions: roster.FactionsPerPlayer, Timeouts: host.TimeoutConfig{Idle: time.Minute}}, locksteptest.New(2, 256))
	startJoiner(t, h.addr, "Alice")
	px := testkit.StartRelay(t, h.addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log1 := newHashLog()
	bob, err := join.Join(ctx, joinCfg(px.Addr(), "Bob", log1))
	if err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- bob.Run(ctx) }()
	var token []byte
	testkit.WaitFor(t, "Bob's session token", func() bool { token, _ = bob.Token(); return token != nil })
	first := bob.Info()

	// The network drops Bob (the host has not noticed yet: its timeout is a
	// minute), and Bob comes back with his token.
	px.Stall(true)
	bob.Close()
	<-runErr
	log2 := newHashLog()
	cfg := joinCfg(h.addr, "SomeoneElse", log2) // the token, not the name, says who
	cfg.Token = token
	again, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatalf("rejoin: %v", err)
	}
	defer again.Close()
	go again.Run(ctx)
	second := again.Info()
	if second.PlayerID != first.PlayerID || second.Faction != first.Faction {
		t.Fatalf("rejoined as player %d faction %d, was %d faction %d", second.PlayerID, second.Faction, first.PlayerID, first.Faction)
	}
	var name string
	testkit.WaitFor(t, "Bob in his own list", func() bool {
		for _, p := range again.Players() {
			if p.ID == second.PlayerID {
				name = p.Name
			}
		}
		return name != ""
	})
	if name != "Bob" {
		t.Fatalf("rejoined as %q", name)
	}
	tj := &testJoiner{sess: again, log: log2}
	checkSameHashes(t, h, h.log.latest()+10, tj)

	// The token was good once: using it again is refused clearly.
	cfg.Token = token
	if _, err := join.Join(ctx, cfg); err == nil {
		t.Fatal("a used token was accepted again")
	} else {
		var re *join.RejectedError
		if !errors.As(err, &re) || re.Reason != wire.ReasonBadToken {
			t.Fatalf("used token: %v, want BadToken", err)
		}
	}
}
