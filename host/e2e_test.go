package host_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

var testDefs = []defs.Summary{{Type: "ThingDef", Count: 3, Hash: 0xABCDEF}, {Type: "TerrainDef", Count: 2, Hash: 0x1234}}

// hashLog records per-map hashes by tick, from any goroutine.
type hashLog struct {
	mu     sync.Mutex
	hashes map[uint64][]uint64
	cmds   map[string]uint64 // command identity -> tick applied
}

func newHashLog() *hashLog {
	return &hashLog{hashes: map[uint64][]uint64{}, cmds: map[string]uint64{}}
}

func (h *hashLog) record(sim lockstep.Sim) {
	var hs []uint64
	for _, id := range sim.MapIDs() {
		v, _ := sim.MapHash(id)
		hs = append(hs, v)
	}
	h.mu.Lock()
	h.hashes[sim.Tick()] = hs
	h.mu.Unlock()
}

func cmdKey(c lockstep.Command) string {
	return fmt.Sprintf("%d/%d/%d/%x", c.Player, c.MapID, c.Kind, c.Payload)
}

func (h *hashLog) applied(c lockstep.Command) {
	h.mu.Lock()
	h.cmds[cmdKey(c)] = c.Tick
	h.mu.Unlock()
}

func (h *hashLog) cmdTick(key string) (uint64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.cmds[key]
	return t, ok
}

func (h *hashLog) at(tick uint64) ([]uint64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.hashes[tick]
	return v, ok
}

type testHost struct {
	addr string
	srv  *host.Server
	log  *hashLog
}

func startHost(t *testing.T, cfg host.Config, sim lockstep.Sim) *testHost {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startHostOn(t, ln, cfg, sim)
}

// startHostOn serves on ln until the test ends (hosttest.StartOn, with
// a fast tick and every tick's hashes and commands in the host's log).
func startHostOn(t *testing.T, ln net.Listener, cfg host.Config, sim lockstep.Sim) *testHost {
	t.Helper()
	th := &testHost{log: newHashLog()}
	if cfg.TickRate == 0 {
		cfg.TickRate = 200
	}
	cfg.AfterTick = func(res lockstep.TickResult, sim lockstep.Sim) {
		for _, c := range res.Accepted {
			th.log.applied(c)
		}
		if res.Stepped {
			th.log.record(sim)
		}
	}
	h := hosttest.StartOn(t, ln, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: testDefs}, sim)
	th.addr, th.srv = h.Addr, h.Server
	return th
}

type testJoiner struct {
	sess *join.Session
	log  *hashLog
	errc chan error
}

func joinCfg(addr, name string, log *hashLog) join.Config {
	return join.Config{
		Addr: addr, Name: name, Databases: testDefs, Loader: locksteptest.Load,
		OnStep: log.record, OnApply: log.applied, Logger: testkit.Quiet(),
	}
}

func startJoiner(t *testing.T, addr, name string, mods ...func(*join.Config)) *testJoiner {
	t.Helper()
	tj := &testJoiner{log: newHashLog(), errc: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := joinCfg(addr, name, tj.log)
	for _, m := range mods {
		m(&cfg)
	}
	s, err := join.Join(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("join %s: %v", name, err)
	}
	tj.sess = s
	go func() { tj.errc <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-tj.errc
	})
	return tj
}

// checkSameHashes compares every joiner's map hashes with the host's at
// tick, waiting for all to reach it.
func checkSameHashes(t *testing.T, h *testHost, tick uint64, js ...*testJoiner) {
	t.Helper()
	var want []uint64
	testkit.WaitFor(t, fmt.Sprintf("host tick %d", tick), func() bool {
		var ok bool
		want, ok = h.log.at(tick)
		return ok
	})
	for i, j := range js {
		var got []uint64
		testkit.WaitFor(t, fmt.Sprintf("joiner %d tick %d", i, tick), func() bool {
			var ok bool
			got, ok = j.log.at(tick)
			return ok
		})
		if !slices.Equal(got, want) {
			t.Fatalf("joiner %d map hashes at tick %d = %x, host %x", i, tick, got, want)
		}
	}
}

func TestTwoJoinersCommandAndHashes(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(4, 4096))
	a := startJoiner(t, h.addr, "Alice")
	// Bob loads map by map; the hashes below show both paths agree.
	b := startJoiner(t, h.addr, "Bob_2", func(c *join.Config) { c.Loader, c.MapLoader = nil, locksteptest.MapLoader })
	if a.sess.Info().PlayerID == b.sess.Info().PlayerID {
		t.Fatal("both joiners got the same player ID")
	}
	if err := a.sess.Send(2, locksteptest.KindAdd, []byte{7}); err != nil {
		t.Fatal(err)
	}
	key := cmdKey(lockstep.Command{Player: a.sess.Info().PlayerID, MapID: 2, Kind: locksteptest.KindAdd, Payload: []byte{7}})
	var hostTick uint64
	testkit.WaitFor(t, "host to apply the command", func() bool {
		var ok bool
		hostTick, ok = h.log.cmdTick(key)
		return ok
	})
	for name, j := range map[string]*testJoiner{"Alice": a, "Bob": b} {
		var tk uint64
		testkit.WaitFor(t, name+" to apply the command", func() bool {
			var ok bool
			tk, ok = j.log.cmdTick(key)
			return ok
		})
		if tk != hostTick {
			t.Errorf("%s applied the command at tick %d, host at %d", name, tk, hostTick)
		}
	}
	checkSameHashes(t, h, hostTick+5, a, b)
}

func TestJoinWhileCommandsFlow(t *testing.T) {
	h := startHost(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Hour}}, locksteptest.New(3, 2048))
	a := startJoiner(t, h.addr, "Alice")
	stop := make(chan struct{})
	var sent sync.WaitGroup
	sent.Add(1)
	go func() {
		defer sent.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if a.sess.Send(int32(i%3), locksteptest.KindAdd, []byte{byte(i)}) != nil {
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	// Bob may reuse Alice's join point (max age an hour, however slowly a loaded machine joins): then he receives
	// the commands queued since it as well as the live ones.
	b := startJoiner(t, h.addr, "Bob")
	time.Sleep(100 * time.Millisecond)
	close(stop)
	sent.Wait()
	// Catch every tick up to one well past the last command.
	var last uint64
	testkit.WaitFor(t, "a tick after the commands", func() bool {
		h.log.mu.Lock()
		defer h.log.mu.Unlock()
		for _, tk := range h.log.cmds {
			last = max(last, tk)
		}
		return len(h.log.cmds) > 10
	})
	checkSameHashes(t, h, last+10, a, b)
	// Bob reuses Alice's point unless the refresh rule finds a fresh one
	// cheaper than replaying the ticks since (with maps this small it
	// often does): then the host cut a second point for him.
	reused := b.sess.Timings().SnapshotTick == a.sess.Timings().SnapshotTick
	if reused && b.sess.Timings().SnapshotTick >= b.sess.Timings().ReadyTick {
		t.Errorf("Bob caught up no ticks from Alice's point: snapshot %d ready %d", b.sess.Timings().SnapshotTick, b.sess.Timings().ReadyTick)
	}
	if st := h.srv.Overview().Stats; !reused && st.JoinPoints < 2 {
		t.Errorf("Bob's point (tick %d) is not Alice's (tick %d), yet the host cut %d join points", b.sess.Timings().SnapshotTick, a.sess.Timings().SnapshotTick, st.JoinPoints)
	}
}

// rejection joins and expects a refusal with reason.
func rejection(t *testing.T, cfg join.Config) *join.RejectedError {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := join.Join(ctx, cfg)
	if err == nil {
		s.Close()
		t.Fatalf("join as %q succeeded", cfg.Name)
	}
	var re *join.RejectedError
	if !errors.As(err, &re) {
		t.Fatalf("join as %q: %v, want a rejection", cfg.Name, err)
	}
	return re
}

func TestUsernameRules(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 16))
	startJoiner(t, h.addr, "Alice")
	for _, tc := range []struct {
		name string
		want wire.Reason
	}{
		{"Al", wire.ReasonUsernameLength},
		{"A234567890123456", wire.ReasonUsernameLength},
		{"Al ice", wire.ReasonUsernameChars},
		{"Alé", wire.ReasonUsernameChars},
		{"alice", wire.ReasonUsernameAlreadyOnline},
		{"ALICE", wire.ReasonUsernameAlreadyOnline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			re := rejection(t, joinCfg(h.addr, tc.name, newHashLog()))
			if re.Reason != tc.want {
				t.Fatalf("reason %s (%q), want %s", re.Reason, re.Message, tc.want)
			}
		})
	}
	// Names at the limits are fine.
	startJoiner(t, h.addr, "Bob")
	startJoiner(t, h.addr, "A23456789012345")
}

func TestServerFull(t *testing.T) {
	h := startHost(t, host.Config{Limits: host.LimitConfig{MaxPlayers: 1}}, locksteptest.New(1, 16))
	startJoiner(t, h.addr, "Alice")
	if re := rejection(t, joinCfg(h.addr, "Bob", newHashLog())); re.Reason != wire.ReasonServerFull {
		t.Fatalf("reason %s, want ServerFull", re.Reason)
	}
}

func TestProtocolAndDefsMismatch(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 16))
	cfg := joinCfg(h.addr, "Alice", newHashLog())
	for _, tc := range []struct {
		v     uint32
		older string
	}{{wire.ProtocolVersion + 1, "the host is older"}, {wire.MinProtocolVersion - 1, "this client is older"}} {
		// Over a raw connection: the host's answer to each version.
		c := dialRaw(t, h.addr)
		c.send(&wire.ClientProtocol{Protocol: tc.v})
		d := c.disconnected()
		if d.Reason != wire.ReasonProtocol || !strings.Contains(d.Message, tc.older) {
			t.Fatalf("protocol %d: %s %q, want Protocol saying %q", tc.v, d.Reason, d.Message, tc.older)
		}
	}
	// The join tool announcing another version reads the refusal.
	ctx, cancel := context.WithTimeout(jointest.With(context.Background(), jointest.Options{Protocol: wire.ProtocolVersion + 1}), 20*time.Second)
	defer cancel()
	var re *join.RejectedError
	if _, err := join.Join(ctx, cfg); !errors.As(err, &re) || re.Reason != wire.ReasonProtocol {
		t.Fatalf("join tool with a newer protocol: %v, want refused as Protocol", err)
	}
	cfg = joinCfg(h.addr, "Alice", newHashLog())
	cfg.Databases = []defs.Summary{
		{Type: "ThingDef", Count: 3, Hash: 0xABCDEF},
		{Type: "TerrainDef", Count: 3, Hash: 0x1234},
		{Type: "RecipeDef", Count: 1, Hash: 1},
	}
	re = rejection(t, cfg)
	if re.Reason != wire.ReasonDefs {
		t.Fatalf("reason %s, want Defs", re.Reason)
	}
	want := []uint8{uint8(defs.StatusOK), uint8(defs.StatusCountDiff), uint8(defs.StatusNotFound)}
	if !slices.Equal(re.Statuses, want) {
		t.Fatalf("statuses %v, want %v", re.Statuses, want)
	}
	if want := "2 of your 3 def databases differ and 0 of the host's 2 are missing."; !strings.Contains(re.Message, want) {
		t.Fatalf("message %q, want it to say %q", re.Message, want)
	}
	// A client that lacks a database the host has is refused too, and the
	// statuses alone say so: one per declared database, then one Missing
	// per host database left out, in the host's type order.
	cfg.Databases = testDefs[:1]
	re = rejection(t, cfg)
	want = []uint8{uint8(defs.StatusOK), uint8(defs.StatusMissing)}
	if re.Reason != wire.ReasonDefs || !slices.Equal(re.Statuses, want) {
		t.Fatalf("missing database: reason %s, statuses %v, want Defs and %v", re.Reason, re.Statuses, want)
	}
	if want := "0 of your 1 def databases differ and 1 of the host's 2 are missing."; !strings.Contains(re.Message, want) {
		t.Fatalf("missing database: message %q, want it to say %q", re.Message, want)
	}
}
