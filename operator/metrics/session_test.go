package metrics_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/operator/metrics"
	"github.com/lockhost/lockhost/testing/hosttest"
	dto "github.com/prometheus/client_model/go"
)

// TestRealHostRefusalsChatLeaves drives a real host into every refusal
// reason, a player's and the operator's chat line, a leave, a drop and
// an operator action, and
// checks each series /metrics shows for them.
func TestRealHostRefusalsChatLeaves(t *testing.T) {
	m := metrics.New()
	// One command, then none: a second is over the rate however slow the
	// machine.
	srv, addr := startHostWith(t, host.Config{Observer: m, Limits: host.LimitConfig{CommandRate: 1e-9, CommandBurst: 1}})
	reg, err := metrics.NewRegistry(m, srv)
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, reg)

	alice := hosttest.Join(t, joinConfig(addr, "Alice")).Session
	for range 3 {
		if err := alice.Send(0, locksteptest.KindAdd, []byte{1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := alice.Send(0, lockstep.KindReserved+1, nil); err != nil {
		t.Fatal(err)
	}
	if err := alice.Chat("hello"); err != nil {
		t.Fatal(err)
	}
	cfg := joinConfig(addr, "Eve")
	cfg.Spectate = true
	eve, err := join.Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := eve.Send(0, locksteptest.KindAdd, []byte{1}); err != nil {
		t.Fatal(err)
	}
	bob, err := join.Join(context.Background(), joinConfig(addr, "Bob"))
	if err != nil {
		t.Fatal(err)
	}
	bob.Close()
	if err := srv.Say("test", "an operator's line"); err != nil {
		t.Fatal(err)
	}

	want := []struct {
		name   string
		labels []string
		v      float64
	}{
		{"lockhost_commands_refused_total", []string{"reason", "rate"}, 2},
		{"lockhost_commands_refused_total", []string{"reason", "invalid"}, 1},
		{"lockhost_commands_refused_total", []string{"reason", "spectator"}, 1},
		{"lockhost_commands_total", []string{"result", "refused"}, 4},
		{"lockhost_chat_messages_total", []string{"result", "relayed"}, 2},
		{"lockhost_players_departed_total", []string{"how", "dropped"}, 1},
		{"lockhost_admin_actions_total", nil, 1},
	}
	check := func(f map[string]*dto.MetricFamily) error {
		for _, w := range want {
			if got := value(f, w.name, w.labels...); got != w.v {
				return fmt.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.v)
			}
		}
		return nil
	}
	eventually(t, url, check)

	// The spectator's refusal is counted before Eve leaves, on purpose.
	if err := eve.Leave("test over"); err != nil {
		t.Fatal(err)
	}
	want = append(want, struct {
		name   string
		labels []string
		v      float64
	}{"lockhost_players_departed_total", []string{"how", "left"}, 1})
	eventually(t, url, check)
}
