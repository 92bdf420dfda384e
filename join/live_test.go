package join_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// live is a session past WorldReady, followed by Run on a goroutine,
// with the host's end for the rest of the script.
type live struct {
	s      *join.Session
	h      *fakeHost
	w      *testWorld
	runErr chan error
}

// joinLive joins a small world over tr and starts Run.
func joinLive(t *testing.T, tr transport, ctx context.Context, addr string, ends <-chan net.Conn, cfg join.Config) *live {
	t.Helper()
	w := newWorld(t, 2, 0)
	hosts := make(chan *fakeHost, 1)
	s, script, err := runCtx(t, ctx, addr, ends, cfg, func(h *fakeHost) error {
		if _, err := h.handshake(); err != nil {
			return err
		}
		if err := h.sendWorld(w.payload, uint64(len(w.payload)), chunk); err != nil {
			return err
		}
		if _, err := h.until(wire.IDClientWorldReady); err != nil {
			return err
		}
		hosts <- h
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	scriptOK(t, script)
	l := &live{s: s, h: <-hosts, w: w, runErr: make(chan error, 1)}
	runCtx, cancel := context.WithCancel(context.Background())
	go func() { l.runErr <- s.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-l.runErr
	})
	return l
}

// ended waits for Run to return and returns its error.
func (l *live) ended(t *testing.T) error {
	t.Helper()
	select {
	case err := <-l.runErr:
		l.runErr <- err // for the cleanup
		return err
	case <-time.After(testkit.DefaultWait):
		t.Fatal("Run did not return")
		return nil
	}
}

// callbacks records what the session reports through its config.
type callbacks struct {
	mu      sync.Mutex
	notices []string
	players [][]join.Player
	desyncs []join.DesyncEvent
	applied []lockstep.Command
}

func (c *callbacks) config() join.Config {
	return join.Config{
		Notice:  func(s string) { c.mu.Lock(); c.notices = append(c.notices, s); c.mu.Unlock() },
		Players: func(l []join.Player) { c.mu.Lock(); c.players = append(c.players, l); c.mu.Unlock() },
		Desync:  func(d join.DesyncEvent) { c.mu.Lock(); c.desyncs = append(c.desyncs, d); c.mu.Unlock() },
		OnApply: func(cmd lockstep.Command) { c.mu.Lock(); c.applied = append(c.applied, cmd); c.mu.Unlock() },
	}
}

func (c *callbacks) locked(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn()
}

// TestSessionFollowsHost: in the session the client echoes keepalives,
// applies granted ticks and reports how far it got, keeps the player list
// through every kind of change, takes the session token, hands notices
// and desync events to the config's callbacks, runs Do on the simulation
// goroutine, and ends Run with the host's reason when the host closes.
func TestSessionFollowsHost(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			var cb callbacks
			ctx, addr, ends := tr.start(t)
			l := joinLive(t, tr, ctx, addr, ends, cb.config())
			h, s := l.h, l.s
			token := bytes.Repeat([]byte{0xab}, wire.TokenSize)
			alice := wire.PlayerInfo{ID: 1, Name: "Alice", Status: wire.StatusPlaying}
			bob := wire.PlayerInfo{ID: 2, Name: "Bob", Status: wire.StatusDownloading}
			carol := wire.PlayerInfo{ID: 3, Name: "Carol", Spectator: true, Status: wire.StatusSpectating}
			dan := wire.PlayerInfo{ID: 4, Name: "Dan", Faction: 2}
			if err := h.send(
				&wire.ServerNotice{Text: "Bob joined"},
				&wire.ServerPlayerList{Action: wire.PlayerListFull, Players: []wire.PlayerInfo{carol, alice, bob}},
				&wire.ServerPlayerList{Action: wire.PlayerListAdd, Players: []wire.PlayerInfo{dan}},
				&wire.ServerPlayerList{Action: wire.PlayerListStatus, Players: []wire.PlayerInfo{{ID: 2, Status: wire.StatusPlaying}}},
				&wire.ServerPlayerList{Action: wire.PlayerListLatencies, Players: []wire.PlayerInfo{{ID: 2, LatencyMs: 55}, {ID: 9, LatencyMs: 1}}},
				&wire.ServerPlayerList{Action: wire.PlayerListRemove, Players: []wire.PlayerInfo{{ID: 1}}},
				&wire.ServerSession{Token: token, GraceMs: 300_000, PlayerID: 9},
				&wire.ServerDesync{State: wire.DesyncDetected, PlayerID: 2, Name: "Bob", Tick: 3, Maps: []int32{1}},
				&wire.ServerKeepalive{Seq: 42, HostTime: 123456},
			); err != nil {
				t.Fatal(err)
			}
			p, err := h.until(wire.IDClientKeepalive)
			if err != nil {
				t.Fatal(err)
			}
			if k := p.(*wire.ClientKeepalive); k.Seq != 42 || k.HostTime != 123456 {
				t.Fatalf("keepalive echoed as %+v, want seq 42 host time 123456", k)
			}

			// A command at the current tick and a grant 5 ahead.
			cmd := locksteptest.Counters{}.AddCommand(0, 3)
			cmd.Tick, cmd.Player = l.w.granted, 2
			if err := h.send(&wire.ServerTick{Tick: l.w.granted, Commands: []lockstep.Command{cmd}, Granted: l.w.granted + 5}); err != nil {
				t.Fatal(err)
			}
			for {
				p, err := h.until(wire.IDClientTickAck)
				if err != nil {
					t.Fatal(err)
				}
				if p.(*wire.ClientTickAck).Tick == l.w.granted+5 {
					break
				}
			}
			did := make(chan uint64, 1)
			if !s.Do(func(sim lockstep.Sim) { did <- sim.Tick() }) {
				t.Fatal("Do refused on a live session")
			}
			select {
			case tick := <-did:
				if tick != l.w.granted+5 {
					t.Fatalf("Do saw tick %d, want %d", tick, l.w.granted+5)
				}
			case <-time.After(testkit.DefaultWait):
				t.Fatal("Do's function never ran")
			}

			// The callbacks and Players give join's own types: statuses by
			// name, latencies as durations.
			want := []join.Player{{ID: 2, Name: "Bob", Status: "playing", Latency: 55 * time.Millisecond},
				{ID: 3, Name: "Carol", Spectator: true, Status: "spectating"}, {ID: 4, Name: "Dan", Faction: 2, Status: "joining"}}
			if got := s.Players(); !slices.Equal(got, want) {
				t.Fatalf("players %+v, want %+v", got, want)
			}
			cb.locked(func() {
				if len(cb.players) != 5 || !slices.Equal(cb.players[4], want) {
					t.Errorf("%d player list callbacks, last %+v; want 5, last %+v", len(cb.players), cb.players[len(cb.players)-1], want)
				}
				if !slices.Equal(cb.notices, []string{"Bob joined"}) {
					t.Errorf("notices %q", cb.notices)
				}
				if len(cb.desyncs) != 1 || cb.desyncs[0].PlayerID != 2 || cb.desyncs[0].Kind != join.DesyncDetected || !slices.Equal(cb.desyncs[0].Maps, []int32{1}) {
					t.Errorf("desync events %+v", cb.desyncs)
				}
				if len(cb.applied) != 1 || cb.applied[0].Tick != l.w.granted || cb.applied[0].Player != 2 {
					t.Errorf("applied %+v, want the one command at tick %d", cb.applied, l.w.granted)
				}
			})
			if tok, grace := s.Token(); !bytes.Equal(tok, token) || grace != 5*time.Minute {
				t.Errorf("token %x grace %v, want %x and 5m", tok, grace, token)
			}
			if id := s.Info().PlayerID; id != 9 {
				t.Errorf("player ID %d after Server_Session, want 9", id)
			}

			if err := h.send(&wire.ServerDisconnect{Reason: wire.ReasonServerClosing, Message: "the host is shutting down"}); err != nil {
				t.Fatal(err)
			}
			var re *join.RejectedError
			if err := l.ended(t); !errors.As(err, &re) || re.Reason != wire.ReasonServerClosing || re.Error() != "the host is shutting down" {
				t.Fatalf("Run: %v, want ServerClosing with the host's sentence", err)
			}
		})
	}
}

// TestSessionEnds: Run ends with an error that says why when the host
// goes silent for HostTimeout, sends a tick in the past, sends a second
// handshake, or hangs up.
func TestSessionEnds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   join.Config
		host  func(l *live) error
		check func(err error) bool
		want  string
	}{
		{"silent host", join.Config{HostTimeout: 300 * time.Millisecond}, func(l *live) error { return nil },
			func(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }, "went silent"},
		{"silent host after a keepalive", join.Config{HostTimeout: 300 * time.Millisecond}, func(l *live) error {
			// The deadline restarts with every packet, not only at
			// WorldReady.
			if err := l.h.send(&wire.ServerKeepalive{Seq: 1}); err != nil {
				return err
			}
			_, err := l.h.until(wire.IDClientKeepalive)
			return err
		}, func(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }, "went silent"},
		{"tick in the past", join.Config{}, func(l *live) error {
			cmd := locksteptest.Counters{}.AddCommand(0, 1)
			cmd.Tick = l.w.granted - 1
			return l.h.send(&wire.ServerTick{Tick: cmd.Tick, Commands: []lockstep.Command{cmd}, Granted: l.w.granted + 1})
		}, isProtocolError, "arrived at tick"},
		{"handshake packet", join.Config{}, func(l *live) error { return l.h.send(greeting.modList) },
			isProtocolError, "unexpected Server_ModList"},
		{"host hangs up", join.Config{}, func(l *live) error { return l.h.nc.Close() },
			func(err error) bool { return err != nil && !isProtocolError(err) }, ""},
	} {
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				ctx, addr, ends := tr.start(t)
				l := joinLive(t, tr, ctx, addr, ends, tc.cfg)
				if err := tc.host(l); err != nil {
					t.Fatal(err)
				}
				err := l.ended(t)
				if !tc.check(err) || !strings.Contains(errString(err), tc.want) {
					t.Fatalf("Run: %v (%T), want it to say %q", err, err, tc.want)
				}
				var re *join.RejectedError
				if errors.As(err, &re) {
					t.Fatalf("reads as a refusal: %v", err)
				}
			})
		}
	}
}

func isProtocolError(err error) bool {
	var pe *join.ProtocolError
	return errors.As(err, &pe)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// noClone hides a simulation's Clone, so the client hashes it on its own
// goroutine and sends each report before it reports the tick.
type noClone struct{ lockstep.Sim }

func loadNoClone(world []byte, maps []lockstep.MapBlob) (lockstep.Sim, error) {
	sim, err := locksteptest.Load(world, maps)
	return noClone{sim}, err
}

// TestHashReports: asked for a hash every tick, the client reports each
// tick it simulates, before it reports the tick itself; with jointest's
// NoHashReports it reports none.
func TestHashReports(t *testing.T) {
	for _, off := range []bool{false, true} {
		for _, tr := range transports {
			t.Run(map[bool]string{false: "reporting", true: "off"}[off]+"/"+tr.name, func(t *testing.T) {
				ctx, addr, ends := tr.start(t)
				ctx = jointest.With(ctx, jointest.Options{NoHashReports: off})
				l := joinLive(t, tr, ctx, addr, ends, join.Config{Loader: loadNoClone})
				g := l.w.granted
				if err := l.h.send(&wire.ServerSession{Token: make([]byte, wire.TokenSize), HashEvery: 1, PlayerID: 7},
					&wire.ServerTick{Tick: g, Granted: g + 4}); err != nil {
					t.Fatal(err)
				}
				var ticks []uint64
				for {
					p, err := l.h.next()
					if err != nil {
						t.Fatalf("%v; reports so far for ticks %v", err, ticks)
					}
					if r, ok := p.(*wire.ClientHashes); ok {
						if len(r.Maps) != 2 || r.World == 0 {
							t.Fatalf("report %+v, want 2 maps and a world hash", r)
						}
						ticks = append(ticks, r.Tick)
					}
					if a, ok := p.(*wire.ClientTickAck); ok && a.Tick == g+4 {
						break
					}
				}
				want := []uint64{g + 1, g + 2, g + 3, g + 4}
				if off {
					want = nil
				}
				if !slices.Equal(ticks, want) {
					t.Fatalf("hash reports for ticks %v before the tick report, want %v", ticks, want)
				}
			})
		}
	}
}

// TestLight: a light client simulates nothing after WorldReady: commands
// count as applied when they arrive, it reports the host's grant as its
// tick, and a repair is a protocol error.
func TestLight(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			var cb callbacks
			cfg := cb.config()
			cfg.Light = true
			ctx, addr, ends := tr.start(t)
			l := joinLive(t, tr, ctx, addr, ends, cfg)
			g := l.w.granted
			cmd := locksteptest.Counters{}.AddCommand(0, 1)
			cmd.Tick = g + 50
			if err := l.h.send(&wire.ServerTick{Tick: cmd.Tick, Commands: []lockstep.Command{cmd}, Granted: g + 100}); err != nil {
				t.Fatal(err)
			}
			for {
				p, err := l.h.until(wire.IDClientTickAck)
				if err != nil {
					t.Fatalf("%v; Run: %v", err, l.ended(t))
				}
				if p.(*wire.ClientTickAck).Tick == g+100 {
					break
				}
			}
			cb.locked(func() {
				if len(cb.applied) != 1 || cb.applied[0].Tick != g+50 {
					t.Errorf("applied %+v on arrival, want the command for tick %d", cb.applied, g+50)
				}
			})
			did := make(chan uint64, 1)
			l.s.Do(func(sim lockstep.Sim) { did <- sim.Tick() })
			if tick := <-did; tick != g {
				t.Fatalf("a light client simulated to tick %d, want none past %d", tick, g)
			}
			if err := l.h.send(&wire.ServerResync{Tick: g + 100, Maps: []int32{0}}); err != nil {
				t.Fatal(err)
			}
			if err := l.ended(t); !isProtocolError(err) || !strings.Contains(err.Error(), "light client") {
				t.Fatalf("Run after a repair to a light client: %v", err)
			}
		})
	}
}
