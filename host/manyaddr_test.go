package host_test

import (
	"net"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/testing/attack"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// attackSources is how many addresses attack at once.
const attackSources = 300

// The password limits the attack tests use: the defaults, spelled out
// because the test helpers lift the per-address ones.
const (
	attackRateAll  = 5
	attackBurstAll = 20
	attackMaxBits  = 24
)

// TestManyAddressAttacks: for each way of stalling in the handshake, and
// for password guessing (with and without solving the host's puzzles),
// from 300 loopback addresses each in its own /24, with the default
// limits: a real joiner with the right password is admitted and reaches
// WorldReady while the attack runs (how long it took is logged; the
// figure is scripts/bench-attack's), a player admitted before it and one still
// downloading are not evicted, the players stay in sync, and the host
// checks no more passwords than the documented bound.
func TestManyAddressAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("attacks from 300 addresses")
	}
	needDescriptors(t, 4*attackSources)
	canDialFrom(t, attack.Source(attackSources-1))
	for _, tc := range []struct {
		name    string
		kind    attack.Kind
		solvers int
	}{
		{"silent", attack.Silent, 0},
		{"protocol then stop", attack.Protocol, 0},
		{"header without body", attack.Header, 0},
		{"stop after DefsOK", attack.AfterDefsOK, 0},
		{"guessing", attack.Guess, 0},
		{"guessing with puzzles solved on a core", attack.Guess, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pw := func(c *join.Config) { c.Password = []byte("sesame") }
			started := time.Now()
			h := startHost(t, host.Config{
				Admission: host.AdmissionConfig{Password: []byte("sesame"), ConnRate: 5, ConnBurst: 10, MaxPendingPerAddr: 4, MaxPendingPerPrefix: 16, PasswordRate: 0.5, PasswordBurst: 10, PasswordRateAll: attackRateAll, PasswordBurstAll: attackBurstAll, PasswordPuzzleMaxBits: attackMaxBits},
				Limits:    host.LimitConfig{MaxPlayers: 16},
			}, locksteptest.New(1, 16))
			a0 := time.Now()
			alice := startJoiner(t, h.addr, "Alice", pw)
			alone := time.Since(a0)
			admittedNotDownloading(t, h.addr, "Dawn", "sesame")
			testkit.WaitFor(t, "Dawn downloading", func() bool { return onlineAs(h, "Dawn", "downloading") })
			stop := attack.Start(attack.Config{Addr: h.addr, Kind: tc.kind, Sources: attackSources, Databases: wireDefs(),
				Pause: 500 * time.Millisecond, Solvers: tc.solvers})
			stopped := false
			var st *attack.Stats
			defer func() {
				if !stopped {
					stop()
				}
			}()
			// The attack has taken hold: the table is full, or guesses have
			// spent the free burst.
			if tc.kind == attack.Guess {
				testkit.WaitFor(t, "guesses past the free burst", func() bool {
					s := h.srv.Overview().Stats
					return s.PuzzlesIssued > 0 && s.PasswordChecks > attackBurstAll
				})
			} else {
				testkit.WaitFor(t, "the pending table full", func() bool { return h.srv.Overview().Stats.Pending >= 64 })
			}
			// Long enough for the attackers to re-open connections and for
			// the first ones to stall past the grace.
			time.Sleep(1500 * time.Millisecond)
			before, beforeAt := h.srv.Overview().Stats, time.Now()
			t0 := time.Now()
			bob := startJoiner(t, h.addr, "Bob", pw)
			took := time.Since(t0)
			during, duringAt := h.srv.Overview().Stats, time.Now()
			checkSameHashes(t, h, hostTick(h)+20, alice, bob)
			testkit.WaitFor(t, "a fresh overview", func() bool { return h.srv.Overview().At.After(t0) })
			if !onlineAs(h, "Dawn", "downloading") {
				t.Errorf("the player still downloading was dropped during the attack: %+v", h.srv.Overview().Players)
			}
			st, stopped = stop(), true
			after := h.srv.Overview().Stats
			elapsed := time.Since(started)
			t.Logf("%s: Alice joined in %v alone, Bob in %v under attack; attacker: %d conns, %d B sent, %d checked, %d refused, %d puzzles (%d solved, %d hashes, %v); host: %d pending evicted, %d checks (%d wrong), %d refused, %d puzzles, %d bits",
				tc.name, alone, took, st.Conns.Load(), st.Sent.Load(), st.Checked.Load(), st.Refused.Load(), st.Puzzles.Load(), st.Solved.Load(),
				st.Hashes.Load(), time.Duration(st.SolveTime.Load()), after.PendingEvicted, after.PasswordChecks, after.PasswordsWrong,
				after.GuessesRefused, after.PuzzlesIssued, during.PuzzleBits)
			// How long Bob took is logged, not bounded: a test on a shared
			// machine cannot tell a slow join from a loaded one. The
			// figure is scripts/bench-attack's; this test holds the logic:
			// Bob was admitted (startJoiner fails on a refusal) and agrees.
			if tc.solvers == 0 && st.Conns.Load() <= attackSources {
				t.Errorf("the attackers opened %d connections: they never re-opened one", st.Conns.Load())
			}
			// The documented bound: in T seconds at most B + 4*(M-7) + R*T
			// checks (Alice's and Bob's included).
			bound := attackBurstAll + 4*(attackMaxBits-7) + attackRateAll*elapsed.Seconds()
			if float64(after.PasswordChecks) > bound {
				t.Errorf("%d passwords checked in %v, over the bound %.0f", after.PasswordChecks, elapsed, bound)
			}
			if wrong := uint64(st.Checked.Load()); wrong > after.PasswordsWrong {
				t.Errorf("the attackers saw %d wrong guesses checked, the host counted %d", wrong, after.PasswordsWrong)
			}
			switch {
			case tc.kind != attack.Guess:
				if after.PendingEvicted == 0 {
					t.Error("the table was full but nobody was evicted")
				}
			case tc.solvers == 0:
				// Guessers that solve no puzzle get no more checks than
				// the free budget's refill (R a second) and a window's
				// worth of free passes handed out before: Bob's aside.
				limit := 1 + 8 + uint64(attackRateAll*duringAt.Sub(beforeAt).Seconds()+1)
				if more := during.PasswordChecks - before.PasswordChecks; st.Refused.Load() == 0 || more > limit {
					t.Errorf("guessers that solve no puzzle: %d refused; %d checks while Bob joined", st.Refused.Load(), more)
				}
			default:
				if st.Solved.Load() == 0 || during.PuzzleBits < 9 {
					t.Errorf("guessers that solve puzzles: %d solved, difficulty %d bits", st.Solved.Load(), during.PuzzleBits)
				}
			}
		})
	}
}

// canDialFrom skips the test unless a connection from src reaches a
// loopback listener.
func canDialFrom(t *testing.T, src net.IP) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 5 * time.Second}).Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Skipf("cannot dial from %s: %v", src, err)
	}
	c.Close()
}

// admittedNotDownloading joins as name with the password, is admitted,
// and reads nothing after the first world chunk: it stays in the
// downloading phase, no longer pending.
func admittedNotDownloading(t *testing.T, addr, name, pw string) *rawClient {
	t.Helper()
	c := dialRaw(t, addr)
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := c.expect(wire.IDServerModList).(*wire.ServerModList)
	c.send(&wire.ClientDefs{Databases: wireDefs()})
	c.syncClockUntil(wire.IDServerDefsOK)
	c.send(&wire.ClientUsername{Name: name, PasswordProof: password.Proof([]byte(pw), ml.PasswordChallenge)})
	c.syncClockUntil(wire.IDServerWorldData)
	return c
}

// onlineAs reports whether name is online with the status.
func onlineAs(h *testHost, name, status string) bool {
	for _, p := range h.srv.Overview().Players {
		if p.Name == name {
			return p.Status == status
		}
	}
	return false
}

// wireDefs is testDefs as the handshake sends them.
func wireDefs() []wire.DefSummary {
	dbs := make([]wire.DefSummary, len(testDefs))
	for i, d := range testDefs {
		dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	return dbs
}
