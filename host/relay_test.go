package host_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// relaySecret is the arbiter secret of the relay tests.
var relaySecret = []byte("correct horse battery")

// worldLog records the world hash at every tick a client stepped to.
type worldLog struct {
	mu sync.Mutex
	at map[uint64]uint64
}

func (w *worldLog) record(sim lockstep.Sim) {
	w.mu.Lock()
	w.at[sim.Tick()] = sim.WorldHash()
	w.mu.Unlock()
}

// newest returns the newest tick recorded at or below limit, and its hash.
func (w *worldLog) newest(limit uint64) (tick, hash uint64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for t, h := range w.at {
		if t <= limit && (!ok || t > tick) {
			tick, hash, ok = t, h, true
		}
	}
	return tick, hash, ok
}

func (w *worldLog) hash(tick uint64) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	h, ok := w.at[tick]
	return h, ok
}

// relayClient is a Go client of a relay session: a player, or the
// arbiter with the test world.
type relayClient struct {
	sess   *join.Session
	log    *hashLog
	worlds *worldLog
	// readyHash is the world hash it reported in WorldReady.
	readyHash uint64
}

// startRelay serves a relay host on loopback whose log goes to logs.
func startRelay(t *testing.T, cfg host.Config, logs *syncbuf.Buffer) *hosttest.Host {
	t.Helper()
	if cfg.TickRate == 0 {
		cfg.TickRate = 200
	}
	cfg.Relay.ArbiterSecret = relaySecret
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return hosttest.StartRelay(t, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: testDefs})
}

// joinRelay joins addr as name and follows the session until the test
// ends; with arbiter, it is the arbiter and its world is a test world of
// three maps.
func joinRelay(t *testing.T, addr, name string, arbiter bool, mods ...func(*join.Config)) *relayClient {
	t.Helper()
	return joinRelayFrom(t, nil, addr, name, arbiter, mods...)
}

// joinRelayFrom is joinRelay from the loopback source address src (nil:
// the system's choice, 127.0.0.1): 127.0.0.0/8 is all loopback on Linux,
// so a test can give its clients networks of their own.
func joinRelayFrom(t *testing.T, src net.IP, addr, name string, arbiter bool, mods ...func(*join.Config)) *relayClient {
	t.Helper()
	rc := &relayClient{log: newHashLog(), worlds: &worldLog{at: map[uint64]uint64{}}}
	cfg := joinCfg(addr, name, rc.log)
	cfg.OnStep = func(sim lockstep.Sim) { rc.log.record(sim); rc.worlds.record(sim) }
	if arbiter {
		cfg.ArbiterSecret = relaySecret
		cfg.World = func() (lockstep.Sim, error) { return locksteptest.New(3, 2048), nil }
	}
	for _, m := range mods {
		m(&cfg)
	}
	base := context.Background()
	if src != nil {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 10 * time.Second}
		cfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}
	}
	ctx, cancel := context.WithCancel(base)
	s, err := join.Join(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("join %s: %v", name, err)
	}
	rc.sess, rc.readyHash = s, s.Sim().WorldHash()
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-errc
	})
	return rc
}

// joiner is c as checkSameHashes takes it.
func (c *relayClient) joiner() *testJoiner { return &testJoiner{sess: c.sess, log: c.log} }

// sendAdd has c add v on map m and returns the command's key.
func (c *relayClient) sendAdd(t *testing.T, m int32, v byte) string {
	t.Helper()
	if err := c.sess.Send(m, locksteptest.KindAdd, []byte{v}); err != nil {
		t.Fatal(err)
	}
	return cmdKey(lockstep.Command{Player: c.sess.Info().PlayerID, MapID: m, Kind: locksteptest.KindAdd, Payload: []byte{v}})
}

// TestRelaySession runs a relay session on loopback: the Go arbiter
// uploads the world of a new session, two players join and play, and a
// third joins mid-game from a join point the arbiter uploads at the host's
// request, and is in step with the arbiter: the same world hash at
// WorldReady and the same hashes after.
func TestRelaySession(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: 300 * time.Millisecond}}, &logs)

	// A player before the world: refused, the arbiter has not uploaded.
	_, err := join.Join(context.Background(), joinCfg(h.Addr, "Early", newHashLog()))
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonGeneric || !strings.Contains(re.Message, "no world yet") {
		t.Fatalf("a player before the world: %v, want refused with no world yet", err)
	}

	arb := joinRelay(t, h.Addr, "Arbiter", true)
	if !strings.Contains(logs.String(), "world uploaded") {
		t.Fatalf("the host did not log the world's upload:\n%s", logs.String())
	}
	alice := joinRelay(t, h.Addr, "Alice", false)
	bob := joinRelay(t, h.Addr, "Bob", false)

	keys := []string{alice.sendAdd(t, 2, 7), bob.sendAdd(t, 0, 9), alice.sendAdd(t, 1, 3)}
	var last uint64
	for _, k := range keys {
		testkit.WaitFor(t, "the arbiter to apply "+k, func() bool {
			tk, ok := arb.log.cmdTick(k)
			last = max(last, tk)
			return ok
		})
		for name, c := range map[string]*relayClient{"Alice": alice, "Bob": bob} {
			var tk uint64
			testkit.WaitFor(t, name+" to apply "+k, func() bool {
				var ok bool
				tk, ok = c.log.cmdTick(k)
				return ok
			})
			if want, _ := arb.log.cmdTick(k); tk != want {
				t.Errorf("%s applied %s at tick %d, the arbiter at %d", name, k, tk, want)
			}
		}
	}

	// Carol comes after the join point aged out: the host asks the
	// arbiter for one at her admission.
	time.Sleep(400 * time.Millisecond)
	before := strings.Count(logs.String(), "join point asked of the arbiter")
	carol := joinRelay(t, h.Addr, "Carol", false)
	if after := strings.Count(logs.String(), "join point asked of the arbiter"); after <= before {
		t.Fatalf("Carol joined without a join point asked of the arbiter (%d asks before, %d after)", before, after)
	}
	// The upload streams to Carol as it comes; its end is logged by the
	// arbiter's reader, which may come just after Carol is in.
	testkit.WaitFor(t, "the host to log the arbiter's join point", func() bool { return strings.Contains(logs.String(), "join point uploaded") })
	tm := carol.sess.Timings()
	if tm.SnapshotTick <= last {
		t.Fatalf("Carol's join point is at tick %d, not after the commands (last at %d)", tm.SnapshotTick, last)
	}
	var want uint64
	testkit.WaitFor(t, fmt.Sprintf("the arbiter at tick %d", tm.ReadyTick), func() bool {
		var ok bool
		want, ok = arb.worlds.hash(tm.ReadyTick)
		return ok
	})
	if carol.readyHash != want {
		t.Fatalf("Carol's WorldReady hash at tick %d is %x, the arbiter's %x", tm.ReadyTick, carol.readyHash, want)
	}
	// And they stay in step with commands after her join.
	k := carol.sendAdd(t, 1, 5)
	var at uint64
	testkit.WaitFor(t, "the arbiter to apply Carol's command", func() bool {
		var ok bool
		at, ok = arb.log.cmdTick(k)
		return ok
	})
	checkSameHashes(t, &testHost{log: arb.log}, at+5, alice.joiner(), bob.joiner(), carol.joiner())
}

// TestRelayRefusals: a wrong arbiter secret is refused with
// BadArbiterSecret, and a player that uploads is disconnected and logged.
func TestRelayRefusals(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{}, &logs)
	joinRelay(t, h.Addr, "Arbiter", true)

	cfg := joinCfg(h.Addr, "Mallory", newHashLog())
	cfg.ArbiterSecret = []byte("correct horse batterY")
	_, err := join.Join(context.Background(), cfg)
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonBadArbiterSecret {
		t.Fatalf("a wrong arbiter secret: %v, want refused with BadArbiterSecret", err)
	}
	if !strings.Contains(logs.String(), "arbiter proof refused") {
		t.Errorf("the host did not log the wrong proof:\n%s", logs.String())
	}

	c := dialRaw(t, h.Addr)
	c.toPlaying("Eve")
	c.send(&wire.ClientUpload{Request: 1, Total: 3, Data: []byte{1, 2, 3}})
	d := c.disconnected()
	if d.Reason != wire.ReasonBadPacket || !strings.Contains(d.Message, "Only the session's arbiter may upload") {
		t.Fatalf("a player's upload: %+v, want BadPacket from the arbiter rule", d)
	}
	testkit.WaitFor(t, "the refused upload in the host's log", func() bool {
		return strings.Contains(logs.String(), "upload refused: not the arbiter")
	})
}

// TestRelayNeedsRelay: an arbiter secret offered to a host that is not a
// relay host is not sent; the join fails saying why.
func TestRelayNeedsRelay(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 16))
	cfg := joinCfg(h.addr, "Arbiter", newHashLog())
	cfg.ArbiterSecret = relaySecret
	if _, err := join.Join(context.Background(), cfg); !errors.Is(err, join.ErrNotRelay) {
		t.Fatalf("an arbiter joining a simulating host: %v, want ErrNotRelay", err)
	}
}

// TestRelayRepair: the arbiter's hash reports are the reference. A
// player whose map is corrupted is found at the next checkpoint and
// repaired with that map as the arbiter uploads it, and is in step again.
func TestRelayRepair(t *testing.T) {
	var logs syncbuf.Buffer
	const every = 30
	h := startRelay(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, &logs)
	arb := joinRelay(t, h.Addr, "Arbiter", true)
	var bobEvents eventLog
	bob := joinRelay(t, h.Addr, "Bob", false, func(c *join.Config) { c.Desync = bobEvents.desync })

	const badMap = 1
	var corruptAt, corrupted atomic.Uint64
	corruptAt.Store(math.MaxUint64)
	var aliceEvents eventLog
	alice := joinRelay(t, h.Addr, "Alice", false, func(c *join.Config) {
		c.Resynced = aliceEvents.resynced
		rec := c.OnStep
		c.OnStep = func(sim lockstep.Sim) {
			if sim.Tick() >= corruptAt.Load() && corrupted.Load() == 0 {
				if err := sim.(*locksteptest.Counters).Perturb(badMap); err != nil {
					t.Error(err)
				}
				corrupted.Store(sim.Tick())
			}
			rec(sim)
		}
	})
	corruptAt.Store(alice.sess.Timings().ReadyTick + every)

	var detected join.DesyncEvent
	testkit.WaitFor(t, "Bob to hear of Alice's desync", func() bool {
		var ok bool
		detected, ok = bobEvents.find(join.DesyncDetected)
		return ok
	})
	if detected.Name != "Alice" || !slices.Equal(detected.Maps, []int32{badMap}) {
		t.Fatalf("desync event %+v, want Alice's map %d", detected, badMap)
	}
	testkit.WaitFor(t, "the repair", func() bool {
		_, ok := bobEvents.find(join.DesyncRepaired)
		return ok
	})
	for _, want := range []string{"repair asked of the arbiter", "from=arbiter"} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("the host's log has no %q:\n%s", want, logs.String())
		}
	}
	aliceEvents.mu.Lock()
	rs := slices.Clone(aliceEvents.resyncs)
	aliceEvents.mu.Unlock()
	if len(rs) != 1 || rs[0].Full || !slices.Equal(rs[0].Maps, []int32{badMap}) {
		t.Fatalf("Alice's repairs: %+v, want one of map %d", rs, badMap)
	}
	k := bob.sendAdd(t, 0, 4)
	var at uint64
	testkit.WaitFor(t, "the arbiter to apply Bob's command", func() bool {
		var ok bool
		at, ok = arb.log.cmdTick(k)
		return ok
	})
	checkSameHashes(t, &testHost{log: arb.log}, at+every, alice.joiner(), bob.joiner())
}

// TestRelayStandby: a second arbiter stands by as a player; when the
// first leaves it takes over, and the next joiner's join point is its
// upload.
func TestRelayStandby(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: 200 * time.Millisecond}}, &logs)
	first := joinRelay(t, h.Addr, "Arbiter", true)
	second := joinRelay(t, h.Addr, "Standby", true)
	if n := strings.Count(logs.String(), "arbiter active"); n != 0 {
		t.Fatalf("%d arbiters made active while the first is there (the first needs none)", n)
	}
	first.sess.Close()
	testkit.WaitFor(t, "the standby to take over", func() bool {
		return strings.Contains(logs.String(), fmt.Sprintf("msg=\"arbiter active\" player=%d", second.sess.Info().PlayerID))
	})
	time.Sleep(300 * time.Millisecond) // the join point ages out
	carol := joinRelay(t, h.Addr, "Carol", false)
	want := fmt.Sprintf("arbiter=%d", second.sess.Info().PlayerID)
	if !strings.Contains(logs.String(), want) {
		t.Fatalf("Carol's join point was not asked of the standby (%s):\n%s", want, logs.String())
	}
	tm := carol.sess.Timings()
	var hash uint64
	testkit.WaitFor(t, "the standby at Carol's tick", func() bool {
		var ok bool
		hash, ok = second.worlds.hash(tm.ReadyTick)
		return ok
	})
	if carol.readyHash != hash {
		t.Fatalf("Carol's WorldReady hash at tick %d is %x, the standby's %x", tm.ReadyTick, carol.readyHash, hash)
	}
}

// TestRelaySaveResume: a relay host saves its latest join point and the
// commands since (the blobs as the arbiter uploaded them), and a relay
// host started from that save carries the same world on: an arbiter that
// joins it downloads the save and is where the first arbiter was, and a
// player that joins after is in step with it.
func TestRelaySaveResume(t *testing.T) {
	var logs syncbuf.Buffer
	path := filepath.Join(t.TempDir(), "relay.lhsave")
	h := startRelay(t, host.Config{Save: host.SaveConfig{Path: path, Every: -1}, Join: host.JoinConfig{JoinPointMaxAge: 100 * time.Millisecond}}, &logs)
	arb := joinRelay(t, h.Addr, "Arbiter", true)
	alice := joinRelay(t, h.Addr, "Alice", false)
	k := alice.sendAdd(t, 2, 6)
	testkit.WaitFor(t, "the arbiter to apply Alice's command", func() bool {
		_, ok := arb.log.cmdTick(k)
		return ok
	})
	time.Sleep(200 * time.Millisecond)
	joinRelay(t, h.Addr, "Carol", false) // a join point from the arbiter, after the command
	k2 := alice.sendAdd(t, 0, 2)         // and one command after that point
	testkit.WaitFor(t, "the arbiter to apply Alice's second command", func() bool {
		_, ok := arb.log.cmdTick(k2)
		return ok
	})
	h.Stop(t) // the final save

	f, err := saves.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := f.ReadBody()
	if err != nil {
		t.Fatal(err)
	}
	hd := saved.Header
	if hd.Tick == 0 || hd.Granted <= hd.Tick || len(hd.Commands) == 0 {
		t.Fatalf("the save holds the point at tick %d, the grant %d and %d command lists; want a point after the world's start and the commands since", hd.Tick, hd.Granted, len(hd.Commands))
	}
	// The first arbiter's session ends with the host; the last grant it
	// got may be short of the saved one (the host saved after its last
	// tick went out, and stopped): it is compared at the newest tick it
	// reached, which the saved commands replay through.
	testkit.WaitFor(t, "the first arbiter's session to end", func() bool { return !arb.sess.Do(func(lockstep.Sim) {}) })
	at, want, ok := arb.worlds.newest(hd.Granted)
	if !ok || at <= hd.Tick {
		t.Fatalf("the first arbiter reached tick %d (ok %v), not past the saved point at %d", at, ok, hd.Tick)
	}

	var logs2 syncbuf.Buffer
	h2 := startRelay(t, host.Config{Relay: host.RelayConfig{Resume: saved}}, &logs2)
	arb2 := joinRelay(t, h2.Addr, "Arbiter", true)
	var got uint64
	testkit.WaitFor(t, fmt.Sprintf("the new arbiter at tick %d", at), func() bool {
		var ok bool
		got, ok = arb2.worlds.hash(at)
		return ok || arb2.sess.Timings().ReadyTick >= at
	})
	if got == 0 && arb2.sess.Timings().ReadyTick == at {
		got = arb2.readyHash
	}
	if got != want {
		t.Fatalf("after the resume the world hash at tick %d is %x, before it was %x", at, got, want)
	}
	dave := joinRelay(t, h2.Addr, "Dave", false)
	var ref uint64
	testkit.WaitFor(t, "the new arbiter at Dave's tick", func() bool {
		var ok bool
		ref, ok = arb2.worlds.hash(dave.sess.Timings().ReadyTick)
		return ok
	})
	if dave.readyHash != ref {
		t.Fatalf("Dave's WorldReady hash %x differs from the arbiter's %x", dave.readyHash, ref)
	}
}

// muteArbiter is a raw client that proves the arbiter secret to the relay
// host at addr, uploads the world of a new session (the spec's worked
// upload) and says WorldReady; it answers nothing after that.
func muteArbiter(t *testing.T, addr string) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := c.expect(wire.IDServerModList).(*wire.ServerModList)
	c.send(&wire.ClientDefs{Databases: ml.Databases})
	c.syncClockUntil(wire.IDServerDefsOK)
	c.send(&wire.ClientUsername{Name: "Mute", ArbiterProof: password.ArbiterProof(relaySecret, ml.ArbiterChallenge)})
	req := c.syncClockUntil(wire.IDServerUploadRequest).(*wire.ServerUploadRequest)
	payload := relayWorkedUpload(t)
	c.send(&wire.ClientUpload{Request: req.Request, Total: uint64(len(payload)), Data: payload})
	if res := c.syncClockUntil(wire.IDServerUploadResult).(*wire.ServerUploadResult); res.Result != wire.UploadAccepted {
		t.Fatalf("the world upload: %+v", res)
	}
	c.send(&wire.ClientWorldReady{Tick: 0})
	return c
}

// TestRelayArbiterSilent: an arbiter that never answers a join point
// request leaves the joiner waiting no longer than the wait limit (it is
// refused, Timeout), and the next joiner's admission cancels the request
// and makes a new one.
func TestRelayArbiterSilent(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond}, Relay: host.RelayConfig{UploadWait: 300 * time.Millisecond}}, &logs)

	// A raw arbiter: it uploads the world, then answers nothing.
	c := muteArbiter(t, h.Addr)
	go func() { // keep reading, answering clock rounds, until the test ends
		for {
			if _, _, err := c.fr.Next(); err != nil {
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond) // the first point ages past its 1 ms

	_, err := join.Join(context.Background(), joinCfg(h.Addr, "Alice", newHashLog()))
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonTimeout || !strings.Contains(re.Message, "did not upload the world in time") {
		t.Fatalf("a joiner the arbiter leaves waiting: %v, want Timeout", err)
	}
	asked := strings.Count(logs.String(), "join point asked of the arbiter")
	_, _ = join.Join(context.Background(), joinCfg(h.Addr, "Bob", newHashLog()))
	if !strings.Contains(logs.String(), "join point request cancelled") {
		t.Fatalf("the unanswered request was not cancelled:\n%s", logs.String())
	}
	if n := strings.Count(logs.String(), "join point asked of the arbiter"); n <= asked {
		t.Fatalf("Bob's admission made no new request (%d before, %d after)", asked, n)
	}
}

// TestRelayPausedCut: a join point cut while the game is paused names the
// commands of its tick the host applied, engine commands (a pause while
// paused) included, so that the arbiter cuts after all of them: a player's
// command applied after the pause is in the joiner's world (or in the
// commands after its point), and the joiner agrees with the others.
func TestRelayPausedCut(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: 300 * time.Millisecond}}, &logs)
	arb := joinRelay(t, h.Addr, "Arbiter", true)
	alice := joinRelay(t, h.Addr, "Alice", false)

	if err := h.Server.Pause("test"); err != nil {
		t.Fatal(err)
	}
	// The tick that applies the pause still steps: Alice's command comes
	// once the session is paused, so that both are stamped one tick.
	testkit.WaitFor(t, "the session paused", func() bool { return h.Server.Overview().Speed == 0 })
	// Paused, a second pause is one more engine command at the paused
	// tick, before Alice's: the cut must come after both.
	if err := h.Server.Pause("test"); err != nil {
		t.Fatal(err)
	}
	k := alice.sendAdd(t, 1, 4) // applied at the paused tick, after the pause
	var at uint64
	testkit.WaitFor(t, "the arbiter to apply Alice's command", func() bool {
		var ok bool
		at, ok = arb.log.cmdTick(k)
		return ok
	})
	time.Sleep(400 * time.Millisecond) // the point ages out: Carol's is cut now, paused
	carol := joinRelay(t, h.Addr, "Carol", false)
	if tm := carol.sess.Timings(); tm.SnapshotTick != at {
		t.Fatalf("Carol's join point is at tick %d, want the paused tick %d", tm.SnapshotTick, at)
	}
	if !strings.Contains(logs.String(), fmt.Sprintf("tick=%d applied=2", at)) {
		t.Errorf("the paused cut did not count the pause and Alice's command (want tick=%d applied=2):\n%s", at, logs.String())
	}
	if _, err := h.Server.Resume("test"); err != nil {
		t.Fatal(err)
	}
	checkSameHashes(t, &testHost{log: arb.log}, at+5, alice.joiner(), carol.joiner())
}

// TestRelayArbiterLeavesMidRequest: the active arbiter leaves with a join
// point request unanswered. The standby, which has simulated past that
// cut, is not handed it (it could not hold there, and would be cut off
// as broken); the joiner waiting on it is refused at once, to join
// again, and the next joiner gets a point the standby uploads.
func TestRelayArbiterLeavesMidRequest(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond}, Relay: host.RelayConfig{UploadWait: time.Minute}}, &logs)

	// A raw arbiter: it uploads the world, then answers nothing.
	c := muteArbiter(t, h.Addr)
	asked := make(chan uint64, 1)
	go func() { // keep reading until a join point request comes
		for {
			id, body, err := c.fr.Next()
			if err != nil {
				return
			}
			if id == wire.IDServerUploadRequest {
				var r wire.ServerUploadRequest
				if err := wire.Unmarshal(body, &r); err != nil {
					t.Error(err)
				}
				asked <- r.Tick
				return
			}
		}
	}()
	standby := joinRelay(t, h.Addr, "Standby", true)
	time.Sleep(20 * time.Millisecond) // the world's point ages past its 1 ms

	aliceErr := make(chan error, 1)
	go func() {
		_, err := join.Join(context.Background(), joinCfg(h.Addr, "Alice", newHashLog()))
		aliceErr <- err
	}()
	cut := <-asked
	// The active arbiter leaves, Alice's request unanswered, once the
	// standby has simulated past its cut.
	testkit.WaitFor(t, "the standby past the cut", func() bool { _, ok := standby.worlds.hash(cut + 2); return ok })
	c.nc.Close()
	var re *join.RejectedError
	if err := <-aliceErr; !errors.As(err, &re) || re.Reason != wire.ReasonTimeout || !strings.Contains(re.Message, "arbiter left") {
		t.Fatalf("the joiner whose join point the leaving arbiter never uploaded: %v, want refused (Timeout) saying the arbiter left", err)
	}
	testkit.WaitFor(t, "the standby active", func() bool { return strings.Contains(logs.String(), "msg=\"arbiter active\"") })
	bob := joinRelay(t, h.Addr, "Bob", false)
	if ps, _ := h.Server.Players(); !slices.ContainsFunc(ps, func(p host.AdminPlayer) bool { return p.Name == "Standby" }) {
		t.Fatalf("the standby was dropped when it took over: %+v\n%s", ps, logs.String())
	}
	tm := bob.sess.Timings()
	var want uint64
	testkit.WaitFor(t, fmt.Sprintf("the standby at tick %d", tm.ReadyTick), func() bool {
		var ok bool
		want, ok = standby.worlds.hash(tm.ReadyTick)
		return ok
	})
	if bob.readyHash != want {
		t.Fatalf("Bob's WorldReady hash at tick %d is %x, the standby's %x", tm.ReadyTick, bob.readyHash, want)
	}
}
