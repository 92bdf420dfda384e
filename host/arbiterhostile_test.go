package host_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/operator/admin"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/testing/attack"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// arbiterGuessers is how many addresses guess the arbiter secret at once.
const arbiterGuessers = 100

// TestArbiterGuessesBounded: a relay host without a password, its arbiter
// secret guessed from 100 loopback addresses each in its own /24 with
// the default limits. The arbiter proofs spend the password's budget:
// the host checks no more of them than the bound of section 6.3
// (B + 4(M-7) + R*T), refuses the rest unchecked, and a client with the
// secret still proves it during the attack (it solves one puzzle) and is
// admitted as a standby arbiter.
func TestArbiterGuessesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("guesses from 100 addresses")
	}
	needDescriptors(t, 4*arbiterGuessers)
	canDialFrom(t, attack.Source(arbiterGuessers-1))
	var logs syncbuf.Buffer
	started := time.Now()
	h := startRelay(t, host.Config{
		Admission: host.AdmissionConfig{ConnRate: 5, ConnBurst: 10, MaxPendingPerAddr: 4, MaxPendingPerPrefix: 16, PasswordRate: 0.5,
			PasswordBurst: 10, PasswordRateAll: attackRateAll, PasswordBurstAll: attackBurstAll, PasswordPuzzleMaxBits: attackMaxBits},
	}, &logs)
	joinRelay(t, h.Addr, "Arbiter", true)
	stop := attack.Start(attack.Config{Addr: h.Addr, Kind: attack.ArbiterGuess, Sources: arbiterGuessers, Databases: wireDefs(),
		Pause: 500 * time.Millisecond})
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	time.Sleep(time.Second) // the guesses spend the free burst
	joinRelay(t, h.Addr, "Standby", true)
	time.Sleep(time.Second)
	st := stop()
	stopped = true
	elapsed := time.Since(started)
	after := h.Server.Overview().Stats
	t.Logf("%v: attackers opened %d connections, %d wrong proofs checked, %d refused unchecked, %d puzzles; host: %d arbiter proofs checked, %d wrong, %d refused, %d bits",
		elapsed, st.Conns.Load(), st.Checked.Load(), st.Refused.Load(), st.Puzzles.Load(), after.ArbiterChecks, after.ArbiterProofsWrong,
		after.GuessesRefused, after.PuzzleBits)
	ps, err := h.Server.Players()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ps, func(p host.AdminPlayer) bool { return p.Name == "Standby" }) {
		t.Errorf("the client with the secret is not online: %+v", ps)
	}
	bound := attackBurstAll + 4*(attackMaxBits-7) + attackRateAll*elapsed.Seconds()
	if checked := float64(max(after.ArbiterChecks, uint64(st.Checked.Load()))); checked > bound {
		t.Errorf("%.0f arbiter proofs checked in %v, over the password's bound %.0f", checked, elapsed, bound)
	}
	if st.Refused.Load() == 0 {
		t.Error("no guess was refused unchecked")
	}
	if wrong := uint64(st.Checked.Load()); wrong > after.ArbiterProofsWrong {
		t.Errorf("the attackers saw %d wrong proofs checked, the host counted %d", wrong, after.ArbiterProofsWrong)
	}
}

// hugeDeclaration is the largest Client_Defs the wire takes: 512
// databases with 128-byte type names.
func hugeDeclaration() []wire.DefSummary {
	dbs := make([]wire.DefSummary, wire.MaxDatabases)
	for i := range dbs {
		name := fmt.Sprintf("Def%04d", i)
		dbs[i] = wire.DefSummary{Type: name + strings.Repeat("x", wire.MaxTypeNameBytes-len(name)), Count: 1, Hash: uint64(i)}
	}
	return dbs
}

// declareAndLeave proves the arbiter secret to the relay host at addr
// with dbs as its Client_Defs and, once admitted (its upload request
// came), leaves without uploading. It returns the host's refusal, or nil
// when it was admitted.
func declareAndLeave(t *testing.T, addr string, dbs []wire.DefSummary) *wire.ServerDisconnect {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.nc.Close()
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := c.expect(wire.IDServerModList).(*wire.ServerModList)
	c.send(&wire.ClientDefs{Databases: dbs})
	if d := c.clockUntilOrRefused(wire.IDServerDefsOK); d != nil {
		return d
	}
	c.send(&wire.ClientUsername{Name: "Mallory", ArbiterProof: password.ArbiterProof(relaySecret, ml.ArbiterChallenge)})
	if d := c.clockUntilOrRefused(wire.IDServerUploadRequest); d != nil {
		return d
	}
	c.send(&wire.ClientLeave{})
	return nil
}

// clockUntilOrRefused answers clock rounds until a packet with id comes
// (it returns nil) or the host's disconnect (it returns it).
func (c *rawClient) clockUntilOrRefused(id wire.ID) *wire.ServerDisconnect {
	c.t.Helper()
	for {
		got, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", id, err)
		}
		p, err := wire.Decode(got, body)
		if err != nil {
			c.t.Fatal(err)
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
		case *wire.ServerDisconnect:
			return p
		}
		if got == id {
			return nil
		}
	}
}

// modListBytes is the size of the Server_ModList frame the host at addr
// sends a new connection.
func modListBytes(t *testing.T, addr string) int {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.nc.Close()
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	id, body, err := c.fr.Next()
	if err != nil || id != wire.IDServerModList {
		t.Fatalf("the mod list: %s, %v", id, err)
	}
	return len(body) + 5
}

// TestRelayDeclarationBounded: a client with the arbiter secret declares
// the largest Client_Defs the wire takes (512 databases, 128-byte names)
// to a relay host awaiting its arbiter's declaration, and leaves. The
// declaration is refused for its size (every later connection would get
// it as its mod list), so the mod list stays small and the real arbiter
// is admitted and declares its own.
func TestRelayDeclarationBounded(t *testing.T) {
	var logs syncbuf.Buffer
	h := startDeclaring(t, host.Config{}, host.Content{}, &logs)
	d := declareAndLeave(t, h.Addr, hugeDeclaration())
	if d == nil || d.Reason != wire.ReasonGeneric || !strings.Contains(d.Message, "a relay host takes a declaration of at most") {
		t.Errorf("the largest declaration: %+v, want refused (Generic) for its size", d)
	}
	if n := modListBytes(t, h.Addr); n > wire.MaxDeclarationBytes {
		t.Errorf("a later connection's mod list has %d bytes, over %d", n, wire.MaxDeclarationBytes)
	}
	joinRelay(t, h.Addr, "Arbiter", true)
	if n := modListBytes(t, h.Addr); n > wire.MaxDeclarationBytes {
		t.Errorf("the mod list after the real declaration has %d bytes", n)
	}
}

// TestRelayClearDeclaredDefs: a client with the arbiter secret declares
// other def databases and leaves before uploading the world; the real
// arbiter is refused for Defs. The operator's cleardefs (the admin
// table, as console and RCON run it) drops that declaration, and the
// real arbiter is admitted, declares its own and uploads the world.
// Cleared again once the world is there, the session admits only
// arbiters until one is admitted and declares; then players come in
// again, held to that declaration.
func TestRelayClearDeclaredDefs(t *testing.T) {
	var logs syncbuf.Buffer
	h := startDeclaring(t, host.Config{}, host.Content{}, &logs)
	if d := declareAndLeave(t, h.Addr, wireSummaries(otherDefs)); d != nil {
		t.Fatalf("the other declaration: refused %+v", d)
	}
	defsRefused(t, h.Addr, "Arbiter", testDefs, relaySecret)
	if out := admin.Exec(h.Server, admin.ByAPI, "help cleardefs"); !strings.Contains(out, "drop the def databases the arbiter declared") {
		t.Errorf("help cleardefs: %q", out)
	}
	if out := admin.Exec(h.Server, admin.ByAPI, "cleardefs"); out != "cleared the declaration of 3 def databases; the next arbiter admitted declares them" {
		t.Fatalf("cleardefs: %q", out)
	}
	if out := admin.Exec(h.Server, admin.ByAPI, "cleardefs"); !strings.HasPrefix(out, "error: no declaration to clear") {
		t.Errorf("cleardefs with nothing declared: %q", out)
	}
	joinRelay(t, h.Addr, "Arbiter", true)
	joinRelay(t, h.Addr, "Alice", false)
	defsRefused(t, h.Addr, "Bob", otherDefs, nil)

	if n, err := h.Server.ClearDeclaredDefs("test"); err != nil || n != len(testDefs) {
		t.Fatalf("ClearDeclaredDefs: %d, %v", n, err)
	}
	_, err := join.Join(context.Background(), joinCfg(h.Addr, "Carol", newHashLog()))
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonGeneric || !strings.Contains(re.Message, "awaits its arbiter's") {
		t.Fatalf("a player while the session awaits a declaration: %v, want refused (Generic)", err)
	}
	joinRelay(t, h.Addr, "Standby", true) // declares testDefs again
	joinRelay(t, h.Addr, "Carol", false)
	defsRefused(t, h.Addr, "Bob", otherDefs, nil)
	if !strings.Contains(logs.String(), `msg="admin action" by=api action="clear declared defs" databases=3`) {
		t.Errorf("the clearing is not logged with who did it:\n%s", logs.String())
	}
}
