package host_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/rawclient"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// heldWorldLog is the host's world hash at every tick it stepped to: the
// hash a client reports at a checkpoint.
type heldWorldLog struct {
	mu    sync.Mutex
	world map[uint64]uint64
}

func (w *heldWorldLog) at(tick uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.world[tick]
}

// heldHost serves a two-map counters world with hashes every 10 ticks
// (unless cfg says otherwise), logging its world hashes.
func heldHost(t *testing.T, cfg host.Config) (*hosttest.Host, *heldWorldLog) {
	t.Helper()
	wl := &heldWorldLog{world: map[uint64]uint64{}}
	if cfg.Desync.HashEvery == 0 {
		cfg.Desync.HashEvery = 10
	}
	cfg.AfterTick = func(res lockstep.TickResult, sim lockstep.Sim) {
		if res.Stepped {
			wl.mu.Lock()
			wl.world[sim.Tick()] = sim.WorldHash()
			wl.mu.Unlock()
		}
	}
	return hosttest.Start(t, cfg, host.Content{GameVersion: "counters 1"}, locksteptest.New(2, 256)), wl
}

// player is the view of the player named name on h, or nil.
func player(h *hosttest.Host, name string) *host.PlayerView {
	for _, p := range h.Server.Overview().Players {
		if p.Name == name {
			return &p
		}
	}
	return nil
}

// dropPlayer joins name through a relay, waits until the host accepted a
// hash report of it (when wantCheck), cuts its connection and waits for
// the host to see it gone. It returns its token and the tick of the last
// report the host accepted before the cut.
func dropPlayer(t *testing.T, h *hosttest.Host, cfg join.Config, wantCheck bool) ([]byte, uint64) {
	t.Helper()
	px := testkit.StartRelay(t, h.Addr)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg.Addr, cfg.Loader, cfg.Logger = px.Addr(), locksteptest.Load, testkit.Quiet()
	s, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Run(ctx)
	var token []byte
	testkit.WaitFor(t, "a session token", func() bool { token, _ = s.Token(); return token != nil })
	testkit.WaitFor(t, "the player in", func() bool {
		p := player(h, cfg.Name)
		return p != nil && (p.Status == "playing" || p.Status == "spectating")
	})
	var acc uint64
	if wantCheck {
		testkit.WaitFor(t, "an accepted hash report", func() bool { p := player(h, cfg.Name); return p != nil && p.Accepted > 0 })
	}
	if p := player(h, cfg.Name); p != nil {
		acc = p.Accepted
	}
	px.ResetAll()
	testkit.WaitFor(t, "the player gone", func() bool { return player(h, cfg.Name) == nil })
	return token, acc
}

// checksFrom are the reports a client that stepped from tick from on
// would have sent, with the host's own world hashes: 16 checkpoints.
func checksFrom(wl *heldWorldLog, from uint64) []wire.HeldCheck {
	var out []wire.HeldCheck
	for t := from; len(out) < wire.MaxHeldChecks; t += 10 {
		out = append(out, wire.HeldCheck{Tick: t, World: wl.at(t)})
	}
	return out
}

// rawRejoin rejoins with token naming held and returns the host's
// Server_Session and the first packet after it that is a world chunk or
// a tick carrying commands.
func rawRejoin(t *testing.T, addr string, token []byte, held *wire.HeldWorld) (*wire.ServerSession, wire.Packet) {
	t.Helper()
	c := rawclient.Dial(t, addr, time.Minute)
	c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := rawclient.Expect[*wire.ServerModList](c, wire.IDServerModList)
	c.Send(&wire.ClientDefs{Databases: ml.Databases})
	rawclient.Expect[*wire.ServerDefsOK](c, wire.IDServerDefsOK)
	c.Send(&wire.ClientUsername{Name: "Back", Token: token, Held: held})
	ss := rawclient.Expect[*wire.ServerSession](c, wire.IDServerSession)
	p, _ := c.Until(wire.IDServerWorldData)
	return ss, p
}

// expectFallback checks that the host answered a held world with result
// want, said why, sent the world and counted it.
func expectFallback(t *testing.T, h *hosttest.Host, ss *wire.ServerSession, next wire.Packet, want wire.RejoinResult) {
	t.Helper()
	if ss.Rejoin != want || ss.Why == "" || ss.Granted != 0 {
		t.Fatalf("Server_Session rejoin %v %q granted %d, want %v with a reason", ss.Rejoin, ss.Why, ss.Granted, want)
	}
	if _, ok := next.(*wire.ServerWorldData); !ok {
		t.Fatalf("after the session came %T, want the world", next)
	}
	st := h.Server.Overview().Stats
	if st.RejoinsHeld != 0 || st.RejoinsDownloaded != 1 || st.RejoinFallbacks[want] != 1 {
		t.Errorf("stats: %d held, %d downloaded, fallbacks %v; want 0, 1 and one %v", st.RejoinsHeld, st.RejoinsDownloaded, st.RejoinFallbacks, want)
	}
}

// TestHeldRejoinAhead: a held world whose tick is past the host's (the
// host restarted from an older save) gets the world, and why.
func TestHeldRejoinAhead(t *testing.T) {
	h, wl := heldHost(t, host.Config{})
	token, acc := dropPlayer(t, h, join.Config{Name: "Bob"}, true)
	ss, next := rawRejoin(t, h.Addr, token, &wire.HeldWorld{Tick: 1 << 40, Checks: checksFrom(wl, acc)})
	expectFallback(t, h, ss, next, wire.RejoinAhead)
}

// TestHeldRejoinHashes: a held world whose reports do not include the
// last one the host accepted, with its world hash, gets the world.
func TestHeldRejoinHashes(t *testing.T) {
	h, wl := heldHost(t, host.Config{})
	token, acc := dropPlayer(t, h, join.Config{Name: "Bob"}, true)
	checks := checksFrom(wl, acc)
	for i := range checks {
		checks[i].World ^= 1 // the same ticks, other worlds
	}
	ss, next := rawRejoin(t, h.Addr, token, &wire.HeldWorld{Tick: acc, Checks: checks})
	expectFallback(t, h, ss, next, wire.RejoinHashes)
}

// TestHeldRejoinUnchecked: on a host that asks for no hashes, nothing of
// the player's world was ever compared: it gets the world.
func TestHeldRejoinUnchecked(t *testing.T) {
	h, _ := heldHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: -1}})
	token, _ := dropPlayer(t, h, join.Config{Name: "Bob"}, false)
	ss, next := rawRejoin(t, h.Addr, token, &wire.HeldWorld{Tick: 1, Checks: []wire.HeldCheck{{Tick: 0, World: 0}}})
	expectFallback(t, h, ss, next, wire.RejoinUnchecked)
}

// TestHeldRejoinNotPlaying: a spectator's token names no world the host
// checked: it gets the world.
func TestHeldRejoinNotPlaying(t *testing.T) {
	h, wl := heldHost(t, host.Config{})
	token, _ := dropPlayer(t, h, join.Config{Name: "Eve", Spectate: true}, false)
	ss, next := rawRejoin(t, h.Addr, token, &wire.HeldWorld{Tick: 10, Checks: checksFrom(wl, 10)})
	expectFallback(t, h, ss, next, wire.RejoinNotPlaying)
}

// TestHeldRejoinWindow: a held world older than the rejoin window (kept
// a millisecond here) gets the world, even with every hash right.
func TestHeldRejoinWindow(t *testing.T) {
	h, wl := heldHost(t, host.Config{Join: host.JoinConfig{RejoinWindow: time.Millisecond}})
	token, acc := dropPlayer(t, h, join.Config{Name: "Bob"}, true)
	testkit.WaitFor(t, "the host a second past the report", func() bool { return h.Server.Overview().Tick > acc+120 })
	ss, next := rawRejoin(t, h.Addr, token, &wire.HeldWorld{Tick: acc, Checks: checksFrom(wl, acc)})
	expectFallback(t, h, ss, next, wire.RejoinWindow)
}

// TestHeldRejoinTooLarge: commands missed whose replay would take more
// than half the send queue are not replayed: the world is sent. (3000 of
// them: laid out as a replay, a counter command takes about 8 bytes.)
func TestHeldRejoinTooLarge(t *testing.T) {
	h, wl := heldHost(t, host.Config{Limits: host.LimitConfig{SendQueueBytes: 16 << 10, CommandRate: 10000, CommandBurst: 10000}})
	token, acc := dropPlayer(t, h, join.Config{Name: "Bob"}, true)
	other := hosttest.Join(t, join.Config{Addr: h.Addr, Name: "Other", Loader: locksteptest.Load})
	// In batches of 300, each stamped before the next is sent: their
	// ticks, about 9 KiB, never fill Other's 16 KiB queue.
	for range 10 {
		before := h.Server.Overview().Stats.Commands
		for i := range 300 {
			c := locksteptest.Counters{}.AddCommand(int32(i%2), 1)
			if err := other.Session.Send(c.MapID, c.Kind, c.Payload); err != nil {
				t.Fatal(err)
			}
		}
		testkit.WaitFor(t, "the commands stamped", func() bool { return h.Server.Overview().Stats.Commands >= before+300 })
	}
	ss, next := rawRejoin(t, h.Addr, token, &wire.HeldWorld{Tick: acc, Checks: checksFrom(wl, acc)})
	expectFallback(t, h, ss, next, wire.RejoinTooLarge)
}

// TestHeldRejoinRepair: a player found desynced and not repaired yet
// when it dropped holds a world the host cannot trust: it gets the world.
func TestHeldRejoinRepair(t *testing.T) {
	h, wl := heldHost(t, host.Config{})
	px := testkit.StartRelay(t, h.Addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := join.Join(ctx, join.Config{Addr: px.Addr(), Name: "Bob", Loader: locksteptest.Load, Logger: testkit.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	go s.Run(ctx)
	var token []byte
	testkit.WaitFor(t, "an accepted hash report", func() bool { p := player(h, "Bob"); return p != nil && p.Accepted > 0 })
	acc := player(h, "Bob").Accepted
	px.SetDelay(time.Second) // the repair cannot finish before the cut
	s.Do(func(sim lockstep.Sim) { _ = sim.Apply(locksteptest.Counters{}.AddCommand(0, 5)) })
	testkit.WaitFor(t, "the desync found", func() bool { p := player(h, "Bob"); return p != nil && p.Repairing })
	token, _ = s.Token()
	px.ResetAll()
	testkit.WaitFor(t, "the player gone", func() bool { return player(h, "Bob") == nil })
	ss, next := rawRejoin(t, h.Addr, token, &wire.HeldWorld{Tick: acc, Checks: checksFrom(wl, acc)})
	expectFallback(t, h, ss, next, wire.RejoinRepair)
}

// TestHeldRejoinRelayWithoutArbiter: a relay host replays the commands a
// player missed from its own window, checked against the reports it
// compared with its arbiter's, with no arbiter online at the rejoin: no
// upload is asked for, and the player is back in play.
func TestHeldRejoinRelayWithoutArbiter(t *testing.T) {
	h := startRelay(t, host.Config{Desync: host.DesyncConfig{HashEvery: 10}}, &syncbuf.Buffer{})
	actx, leaveArbiter := context.WithCancel(context.Background())
	defer leaveArbiter()
	acfg := joinCfg(h.Addr, "Arb", newHashLog())
	acfg.ArbiterSecret = relaySecret
	acfg.World = func() (lockstep.Sim, error) { return noisy(t, 3, 16<<10), nil }
	arb, err := join.Join(actx, acfg)
	if err != nil {
		t.Fatal(err)
	}
	arbDone := make(chan error, 1)
	go func() { arbDone <- arb.Run(actx) }()

	px := testkit.StartRelay(t, h.Addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc := &join.Reconnector{Config: joinCfg(px.Addr(), "Bob", newHashLog()), Backoff: 50 * time.Millisecond, For: time.Minute}
	s, err := rc.Join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan *join.Session, 1)
	go func() { _ = rc.Run(ctx, s, func(n *join.Session) { joined <- n }) }()
	testkit.WaitFor(t, "a report compared with the arbiter's", func() bool { p := player(h, "Bob"); return p != nil && p.Accepted > 0 })
	uploads := h.Server.Overview().Stats.JoinPoints
	leaveArbiter()
	<-arbDone
	testkit.WaitFor(t, "the arbiter gone", func() bool { return player(h, "Arb") == nil })
	px.ResetAll()
	var next *join.Session
	select {
	case next = <-joined:
	case <-time.After(time.Minute): // bounds a hang only
		t.Fatal("no rejoin")
	}
	if tm := next.Timings(); tm.Rejoin != wire.RejoinHeld {
		t.Fatalf("rejoin answered %v (%q), want held", tm.Rejoin, tm.RejoinWhy)
	}
	conns := px.Conns()
	if first, again := conns[0].Down(), conns[1].Down(); again*10 > first {
		t.Errorf("the rejoin read %d bytes, the first join %d", again, first)
	}
	testkit.WaitFor(t, "Bob playing", func() bool { p := player(h, "Bob"); return p != nil && p.Status == "playing" })
	if got := h.Server.Overview().Stats.JoinPoints; got != uploads {
		t.Errorf("%d join points cut after the rejoin, was %d: the rejoin asked for a world", got, uploads)
	}
}

// noisy is a counters world of maps maps whose state does not compress:
// every cell stepped over, so each map's blob is about size bytes.
func noisy(t *testing.T, maps, size int) lockstep.Sim {
	t.Helper()
	sim := locksteptest.New(maps, size)
	for i := range maps {
		if err := sim.Apply(locksteptest.Counters{}.AddCommand(int32(i), int8(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	for range size {
		sim.Step()
	}
	return sim
}

// TestHeldRejoinNoHashesWhileCatchingUp: a client catching up a replay
// (r = 1) sends only Client_WorldReady and the packets of every phase
// until it is ready: a Client_Hashes before its Client_WorldReady is a
// wrong packet (section 6.6).
func TestHeldRejoinNoHashesWhileCatchingUp(t *testing.T) {
	h, wl := heldHost(t, host.Config{})
	token, acc := dropPlayer(t, h, join.Config{Name: "Bob"}, true)
	c := rawclient.Dial(t, h.Addr, time.Minute)
	c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := rawclient.Expect[*wire.ServerModList](c, wire.IDServerModList)
	c.Send(&wire.ClientDefs{Databases: ml.Databases})
	rawclient.Expect[*wire.ServerDefsOK](c, wire.IDServerDefsOK)
	c.Send(&wire.ClientUsername{Name: "Back", Token: token, Held: &wire.HeldWorld{Tick: acc, Checks: checksFrom(wl, acc)}})
	if ss := rawclient.Expect[*wire.ServerSession](c, wire.IDServerSession); ss.Rejoin != wire.RejoinHeld {
		t.Fatalf("rejoin result %v (%q); want held", ss.Rejoin, ss.Why)
	}
	c.Send(&wire.ClientHashes{Tick: acc + 10, World: wl.at(acc + 10)})
	p, _ := c.Until(wire.IDServerDisconnect)
	if d := p.(*wire.ServerDisconnect); d.Reason != wire.ReasonBadPacket {
		t.Fatalf("a hash report while catching up: %v %q; want BadPacket", d.Reason, d.Message)
	}
}
