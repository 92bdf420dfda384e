package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/operator/metrics"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
	dto "github.com/prometheus/client_model/go"
)

var testDefs = []defs.Summary{{Type: "ThingDef", Count: 3, Hash: 0xABCDEF}}

// startHost serves a small counters world on loopback with obs as its
// observer until the test ends.
func startHost(t *testing.T, obs host.Observer) (*host.Server, string) {
	t.Helper()
	return startHostWith(t, host.Config{Observer: obs})
}

// startHostWith is startHost with more of the host's settings.
func startHostWith(t *testing.T, cfg host.Config) (*host.Server, string) {
	t.Helper()
	h := hosttest.Start(t, cfg,
		host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: testDefs}, locksteptest.New(4, 4096))
	return h.Server, h.Addr
}

func joinConfig(addr, name string) join.Config {
	return join.Config{Addr: addr, Name: name, Databases: testDefs, Loader: locksteptest.Load, Logger: testkit.Quiet()}
}

// eventually scrapes url until check returns nil or a minute passes.
func eventually(t *testing.T, url string, check func(map[string]*dto.MetricFamily) error) map[string]*dto.MetricFamily {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		fams := scrape(t, url)
		err := check(fams)
		if err == nil {
			return fams
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute of scrapes: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestRealHostJoins joins a real host twice, is refused once, and checks
// what /metrics says about it.
func TestRealHostJoins(t *testing.T) {
	m := metrics.New()
	srv, addr := startHost(t, m)
	reg, err := metrics.NewRegistry(m, srv)
	if err != nil {
		t.Fatal(err)
	}
	url := serve(t, reg)

	alice := hosttest.Join(t, joinConfig(addr, "Alice")).Session
	hosttest.Join(t, joinConfig(addr, "Bob"))
	// Names are unique case-insensitively: this one is refused.
	_, err = join.Join(context.Background(), joinConfig(addr, "alice"))
	var rej *join.RejectedError
	if !errors.As(err, &rej) || rej.Reason != wire.ReasonUsernameAlreadyOnline {
		t.Fatalf("joining as a second alice: %v, want refused as already online", err)
	}
	const sent = 5
	for i := range sent {
		if err := alice.Send(int32(i%4), locksteptest.KindAdd, []byte{1}); err != nil {
			t.Fatalf("send: %v", err)
		}
	}

	fams := eventually(t, url, func(f map[string]*dto.MetricFamily) error {
		joined := value(f, "lockhost_joins_total", "outcome", "joined", "reason", "")
		refused := value(f, "lockhost_joins_total", "outcome", "refused", "reason", "UsernameAlreadyOnline")
		if joined != 2 || refused != 1 {
			return fmt.Errorf("joins: %v joined, %v refused as already online; want 2 and 1", joined, refused)
		}
		if n := value(f, "lockhost_players_online", "role", "player"); n != 2 {
			return fmt.Errorf("%v players online, want 2", n)
		}
		if n := value(f, "lockhost_commands_total", "result", "accepted"); n < sent {
			return fmt.Errorf("%v commands accepted, want %d", n, sent)
		}
		if tick := value(f, "lockhost_session_tick"); tick <= 0 {
			return fmt.Errorf("session tick %v", tick)
		}
		return nil
	})
	if f := fams["lockhost_joins_total"]; len(f.GetMetric()) != 2 {
		t.Errorf("%d join outcome series, want 2 (joined, refused): %v", len(f.GetMetric()), f)
	}
	if v := value(fams, "lockhost_bytes_sent_total"); v <= 0 {
		t.Errorf("bytes sent %v", v)
	}
	for _, name := range []string{"Alice", "Bob"} {
		if v := value(fams, "lockhost_player_ticks_behind", "player", name); v < 0 {
			t.Errorf("no ticks-behind series for %s", name)
		}
	}
	if h := find(fams, "lockhost_join_duration_seconds", "outcome", "joined").GetHistogram(); h.GetSampleCount() != 2 || h.GetSampleSum() <= 0 {
		t.Errorf("join durations of joined: %d samples summing %v s, want 2", h.GetSampleCount(), h.GetSampleSum())
	}

	// Each phase histogram counts the joins that completed the phase: both
	// admitted joins completed all of them; the refused one got past the
	// handshake but never downloaded.
	reached := map[string]uint64{}
	joins := srv.Overview().Joins
	if len(joins) != 3 {
		t.Fatalf("overview lists %d joins, want 3: %+v", len(joins), joins)
	}
	for _, r := range joins {
		for _, p := range r.Phases {
			reached[p.Phase]++
		}
		if r.Outcome == host.JoinOK && len(r.Phases) != len(host.JoinPhases) {
			t.Errorf("admitted join of %s lists phases %+v, want all of %v", r.Name, r.Phases, host.JoinPhases)
		}
	}
	for _, phase := range host.JoinPhases {
		h := find(fams, "lockhost_join_phase_duration_seconds", "phase", phase).GetHistogram()
		if h.GetSampleCount() != reached[phase] {
			t.Errorf("phase %s: %d samples, but %d joins reached it", phase, h.GetSampleCount(), reached[phase])
		}
		if h.GetSampleCount() < 2 || h.GetSampleSum() <= 0 {
			t.Errorf("phase %s: %d samples summing %v s, want at least the 2 admitted joins", phase, h.GetSampleCount(), h.GetSampleSum())
		}
	}
	if n := find(fams, "lockhost_join_phase_duration_seconds", "phase", "download").GetHistogram().GetSampleCount(); n != 2 {
		t.Errorf("download phase: %d samples, want 2 (the refused join never downloaded)", n)
	}
	if n := find(fams, "lockhost_join_phase_duration_seconds", "phase", "handshake").GetHistogram().GetSampleCount(); n != 3 {
		t.Errorf("handshake phase: %d samples, want 3 (every attempt got through it)", n)
	}
}
