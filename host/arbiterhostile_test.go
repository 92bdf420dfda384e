package host_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/testing/attack"
	"github.com/lockhost/lockhost/internal/testing/syncbuf"
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
	t.Logf("%v: attackers opened %d connections, %d wrong proofs checked, %d refused unchecked, %d puzzles; host: %d checks, %d arbiter proofs wrong, %d refused, %d bits",
		elapsed, st.Conns.Load(), st.Checked.Load(), st.Refused.Load(), st.Puzzles.Load(), after.PasswordChecks, after.ArbiterProofsWrong,
		after.GuessesRefused, after.PuzzleBits)
	ps, err := h.Server.Players()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(ps, func(p host.AdminPlayer) bool { return p.Name == "Standby" }) {
		t.Errorf("the client with the secret is not online: %+v", ps)
	}
	bound := attackBurstAll + 4*(attackMaxBits-7) + attackRateAll*elapsed.Seconds()
	if checked := float64(st.Checked.Load()); checked > bound {
		t.Errorf("%.0f wrong arbiter proofs checked in %v, over the password's bound %.0f", checked, elapsed, bound)
	}
	if st.Refused.Load() == 0 {
		t.Error("no guess was refused unchecked")
	}
	if wrong := uint64(st.Checked.Load()); wrong > after.ArbiterProofsWrong {
		t.Errorf("the attackers saw %d wrong proofs checked, the host counted %d", wrong, after.ArbiterProofsWrong)
	}
}
