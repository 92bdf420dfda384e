package host_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// joinWith joins with a modified config and returns the session or the
// refusal.
func joinWith(t *testing.T, addr, name string, mod func(*join.Config)) (*join.Session, *join.RejectedError) {
	t.Helper()
	cfg := joinCfg(addr, name, newHashLog())
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := join.Join(ctx, cfg)
	if err != nil {
		re, ok := err.(*join.RejectedError)
		if !ok {
			t.Fatalf("join %s: %v", name, err)
		}
		return nil, re
	}
	t.Cleanup(s.Close)
	return s, nil
}

func TestNinthPlayerRefusedAsFull(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 16)) // default: 8 players
	for i := 0; i < 8; i++ {
		if _, re := joinWith(t, h.addr, "Player"+string(rune('A'+i)), nil); re != nil {
			t.Fatalf("player %d refused: %v", i+1, re)
		}
	}
	if _, re := joinWith(t, h.addr, "PlayerI", nil); re == nil || re.Reason != wire.ReasonServerFull {
		t.Fatalf("9th player: %v, want ServerFull", re)
	}
	// Spectators are counted apart: one still fits.
	if _, re := joinWith(t, h.addr, "Watcher", func(c *join.Config) { c.Spectate = true }); re != nil {
		t.Fatalf("spectator refused: %v", re)
	}
}

func TestPassword(t *testing.T) {
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{Password: []byte("open sesame")}}, locksteptest.New(1, 16))
	for _, tc := range []struct {
		name string
		pw   string
		want wire.Reason
		ok   bool
	}{
		{"Right", "open sesame", 0, true},
		{"Wrong", "open sesame!", wire.ReasonBadPassword, false},
		{"Missing", "", wire.ReasonBadPassword, false},
	} {
		_, re := joinWith(t, h.addr, tc.name, func(c *join.Config) { c.Password = []byte(tc.pw) })
		if tc.ok != (re == nil) || (re != nil && re.Reason != tc.want) {
			t.Fatalf("%s password: %v, want ok=%v reason %s", tc.name, re, tc.ok, tc.want)
		}
	}
	// Rules come in order: a bad name is named as such, not as a bad
	// password.
	if _, re := joinWith(t, h.addr, "X", func(c *join.Config) { c.Password = []byte("nope") }); re == nil || re.Reason != wire.ReasonUsernameLength {
		t.Fatalf("short name with a wrong password: %v, want UsernameLength", re)
	}
}

// TestRefusedAttemptsUseNoPlayerID: player IDs are given on admission,
// so joiners refused in between (a wrong or missing password, a bad
// name, a name already online) leave no gaps: the next admitted player
// gets the next ID, as if nobody had been refused.
func TestRefusedAttemptsUseNoPlayerID(t *testing.T) {
	const pw = "open sesame"
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{Password: []byte(pw)}}, locksteptest.New(1, 16))
	right := func(c *join.Config) { c.Password = []byte(pw) }
	first, re := joinWith(t, h.addr, "Alice", right)
	if re != nil {
		t.Fatalf("Alice: %v", re)
	}
	for _, tc := range []struct {
		name string
		mod  func(*join.Config)
		want wire.Reason
	}{
		{"Wrong", func(c *join.Config) { c.Password = []byte("nope") }, wire.ReasonBadPassword},
		{"Missing", nil, wire.ReasonBadPassword},
		{"A b", right, wire.ReasonUsernameChars},
		{"alice", right, wire.ReasonUsernameAlreadyOnline},
	} {
		if _, re := joinWith(t, h.addr, tc.name, tc.mod); re == nil || re.Reason != tc.want {
			t.Fatalf("%s: %v, want %s", tc.name, re, tc.want)
		}
	}
	second, re := joinWith(t, h.addr, "Bob", right)
	if re != nil {
		t.Fatalf("Bob: %v", re)
	}
	if a, b := first.Info().PlayerID, second.Info().PlayerID; a != 1 || b != 2 {
		t.Fatalf("player IDs %d and %d, want 1 and 2", a, b)
	}
}

func TestSpectators(t *testing.T) {
	h := startHost(t, host.Config{Limits: host.LimitConfig{MaxSpectators: 1}}, locksteptest.New(2, 16))
	alice := startJoiner(t, h.addr, "Alice")
	var mu sync.Mutex
	var notices []string
	spec, re := joinWith(t, h.addr, "Watcher", func(c *join.Config) {
		c.Spectate = true
		c.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
	})
	if re != nil {
		t.Fatal(re)
	}
	if _, re := joinWith(t, h.addr, "Watcher2", func(c *join.Config) { c.Spectate = true }); re == nil || re.Reason != wire.ReasonSpectatorsFull {
		t.Fatalf("second spectator: %v, want SpectatorsFull", re)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- spec.Run(ctx) }()
	if err := spec.Send(0, locksteptest.KindAdd, []byte{5}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the spectator's command to be refused", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(notices, func(s string) bool { return strings.Contains(s, "spectators cannot send commands") })
	})
	// The session goes on: Alice still advances and the spectator is
	// still connected.
	t0 := alice.log.latest()
	testkit.WaitFor(t, "Alice to advance", func() bool { return alice.log.latest() > t0+10 })
	select {
	case err := <-runErr:
		t.Fatalf("spectator dropped: %v", err)
	default:
	}
}

func (h *hashLog) latest() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var m uint64
	for tk := range h.hashes {
		m = max(m, tk)
	}
	return m
}

func TestPlayerListDeltasAndFactions(t *testing.T) {
	// Keepalives off (an hour apart), so their latency updates do not mix
	// into the count of list updates below.
	h := startHost(t, host.Config{Factions: roster.FactionsPerPlayer, Timeouts: host.TimeoutConfig{KeepaliveEvery: time.Hour, Idle: 3 * time.Hour}}, locksteptest.New(1, 16))
	var mu sync.Mutex
	var last []join.Player
	updates := 0
	cfg := joinCfg(h.addr, "Alice", newHashLog())
	cfg.Players = func(ps []join.Player) { mu.Lock(); last = ps; updates++; mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	alice, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go alice.Run(ctx)
	bob, re := joinWith(t, h.addr, "Bob", nil)
	if re != nil {
		t.Fatal(re)
	}
	if alice.Info().Faction == bob.Info().Faction {
		t.Fatalf("per-player factions: both in %d", alice.Info().Faction)
	}
	find := func(name string) (join.Player, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range last {
			if p.Name == name {
				return p, true
			}
		}
		return join.Player{}, false
	}
	// Alice's list learns of Bob as a delta, then his status, then his
	// measured latency; her own status and latency come as deltas too. The
	// host handles Alice's WorldReady and Bob's join on their own
	// goroutines, so the test waits for both without assuming an order.
	testkit.WaitFor(t, "Alice and Bob playing in Alice's list", func() bool {
		a, aok := find("Alice")
		b, bok := find("Bob")
		return aok && bok && a.Status == "playing" && b.Status == "playing" && b.Faction == bob.Info().Faction
	})
	// Bob's latency comes once his clock is synced again after WorldReady.
	testkit.WaitFor(t, "six list updates", func() bool { mu.Lock(); defer mu.Unlock(); return updates >= 6 })
	bob.Close()
	// The whole list once, then only deltas: Alice's status and latency,
	// Bob's add, status and latency, Bob's removal. With keepalives an
	// hour apart, no other latency update can come.
	testkit.WaitFor(t, "Bob removed from Alice's list after seven updates", func() bool {
		_, ok := find("Bob")
		mu.Lock()
		defer mu.Unlock()
		return !ok && updates >= 7
	})
	mu.Lock()
	defer mu.Unlock()
	if updates != 7 {
		t.Fatalf("%d player list updates, want 7 (one list, six deltas)", updates)
	}
}

func TestClockSyncRefusals(t *testing.T) {
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{ClockRetries: 4}, Timeouts: host.TimeoutConfig{Handshake: 5 * time.Second}}, locksteptest.New(1, 16))
	toClock := func(c *rawClient) *wire.ServerClock {
		c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
		c.expect(wire.IDServerModList)
		dbs := make([]wire.DefSummary, len(testDefs))
		for i, d := range testDefs {
			dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
		}
		c.send(&wire.ClientDefs{Databases: dbs})
		return c.expect(wire.IDServerClock).(*wire.ServerClock)
	}
	t.Run("wrong nonce echo", func(t *testing.T) {
		c := dialRaw(t, h.addr)
		c.t = t
		sc := toClock(c)
		c.send(&wire.ClientClock{Nonce: sc.Nonce + 1, ClientTime: time.Now().UnixMicro()})
		if d := c.disconnected(); d.Reason != wire.ReasonClockSync || !strings.Contains(d.Message, "nonce") {
			t.Fatalf("%+v, want ClockSync about the nonce", d)
		}
	})
	t.Run("clock that never settles", func(t *testing.T) {
		c := dialRaw(t, h.addr)
		c.t = t
		sc := toClock(c)
		for i := 0; ; i++ {
			// A clock that jumps by seconds every round never lands in the
			// 50 ms window.
			skew := int64(i%2*2-1) * int64(i+1) * 3_000_000
			c.send(&wire.ClientClock{Nonce: sc.Nonce, ClientTime: time.Now().UnixMicro() + skew})
			id, body, err := c.fr.Next()
			if err != nil {
				t.Fatal(err)
			}
			p, _ := wire.Decode(id, body)
			if d, ok := p.(*wire.ServerDisconnect); ok {
				if d.Reason != wire.ReasonClockSync || i != 3 {
					t.Fatalf("after %d rounds: %+v, want ClockSync after 4", i+1, d)
				}
				return
			}
			sc = p.(*wire.ServerClock)
			if int(sc.Attempt) != i+1 {
				t.Fatalf("attempt %d, want %d", sc.Attempt, i+1)
			}
		}
	})
	t.Run("skewed but steady clock is accepted", func(t *testing.T) {
		c := dialRaw(t, h.addr)
		c.t = t
		sc := toClock(c)
		const skew = 7_000_000 // 7 s ahead: the first round fails, the second corrects
		for {
			c.send(&wire.ClientClock{Nonce: sc.Nonce, ClientTime: time.Now().UnixMicro() + skew})
			id, body, err := c.fr.Next()
			if err != nil {
				t.Fatal(err)
			}
			p, _ := wire.Decode(id, body)
			switch p := p.(type) {
			case *wire.ServerDefsOK:
				if sc.Attempt == 0 {
					t.Fatal("a 7 s skew passed on the first round")
				}
				return
			case *wire.ServerClock:
				sc = p
				if p.Delta < skew-100_000 || p.Delta > skew+100_000 {
					t.Fatalf("host's offset estimate %d µs, want about %d", p.Delta, skew)
				}
			default:
				t.Fatalf("unexpected %+v", p)
			}
		}
	})
}

func TestDownloadAndCatchUpDeadlines(t *testing.T) {
	// One host per deadline, the other deadline an hour away: a Timeout
	// can then only come from the deadline under test, however slowly a
	// loaded machine runs the client.
	stallHost := startHost(t, host.Config{Timeouts: host.TimeoutConfig{DownloadStall: 300 * time.Millisecond, CatchUp: time.Hour}},
		locksteptest.New(1, 16))
	catchUpHost := startHost(t, host.Config{Timeouts: host.TimeoutConfig{DownloadStall: time.Hour, CatchUp: 300 * time.Millisecond}},
		locksteptest.New(1, 16))
	admitted := func(t *testing.T, h *testHost, name string) *rawClient {
		c := dialRaw(t, h.addr)
		c.t = t
		c.toUsername()
		c.send(&wire.ClientUsername{Name: name})
		return c
	}
	t.Run("no acknowledgement", func(t *testing.T) {
		c := admitted(t, stallHost, "Stall")
		if d := c.disconnected(); d.Reason != wire.ReasonTimeout {
			t.Fatalf("%+v, want Timeout", d)
		}
	})
	t.Run("acknowledged but never ready", func(t *testing.T) {
		c := admitted(t, catchUpHost, "Slow")
		wd := c.expect(wire.IDServerWorldData).(*wire.ServerWorldData)
		var got uint64
		for got = uint64(len(wd.Data)); got < wd.Total; got += uint64(len(wd.Data)) {
			wd = c.expect(wire.IDServerWorldData).(*wire.ServerWorldData)
		}
		c.send(&wire.ClientAck{Received: got})
		if d := c.disconnected(); d.Reason != wire.ReasonTimeout {
			t.Fatalf("%+v, want Timeout", d)
		}
	})
	t.Run("acknowledgement that lies", func(t *testing.T) {
		c := admitted(t, catchUpHost, "Liar") // no stall deadline to race the lie
		wd := c.expect(wire.IDServerWorldData).(*wire.ServerWorldData)
		c.send(&wire.ClientAck{Received: wd.Total + 1})
		if d := c.disconnected(); d.Reason != wire.ReasonBadPacket {
			t.Fatalf("%+v, want BadPacket", d)
		}
	})
}

func TestConnectionRateLimit(t *testing.T) {
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{ConnRate: 0.001, ConnBurst: 2}}, locksteptest.New(1, 16))
	for i := 0; i < 2; i++ {
		c := dialRaw(t, h.addr)
		c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
		c.expect(wire.IDServerModList)
	}
	c := dialRaw(t, h.addr)
	if d := c.disconnected(); d.Reason != wire.ReasonRateLimited {
		t.Fatalf("%+v, want RateLimited", d)
	}
	// Another address is not affected (the whole of 127/8 is loopback).
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	nc, err := d.Dial("tcp", h.addr)
	if err != nil {
		t.Skipf("cannot dial from 127.0.0.2: %v", err)
	}
	other := &rawClient{t: t, nc: nc, fr: wire.NewFrameReader(nc, wire.DefaultMaxFrame)}
	t.Cleanup(func() { nc.Close() })
	other.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	other.expect(wire.IDServerModList)
}
