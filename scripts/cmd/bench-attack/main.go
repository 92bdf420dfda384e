// Command bench-attack measures what attacks from many addresses do to a
// real joiner: for each attack of package testing/attack (four ways to
// stall in the handshake, and password guessing) it hosts a small
// password-protected session on loopback with the default limits, times
// a real joiner with the right password (connect to WorldReady, retrying
// a refused join for up to -give-up) alone and then while the attack
// runs from -sources addresses, and prints the attack's cost: the
// connections it opened, the bytes it sent and received, the wrong
// guesses the host checked, the puzzles it solved and the hashing that
// took, and what the host counted. The last attack guesses while solving
// the host's puzzles on -solvers cores. It asserts nothing.
// Run: go run ./scripts/cmd/bench-attack (or scripts/bench-attack).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/attack"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

var databases = []defs.Summary{{Type: "ThingDef", Count: 3, Hash: 0xABCDEF}}

func main() {
	sources := flag.Int("sources", 300, "attacking addresses")
	joins := flag.Int("joins", 5, "joins timed in each condition")
	warm := flag.Duration("warm", 3*time.Second, "how long each attack runs before the joins are timed")
	giveUp := flag.Duration("give-up", 30*time.Second, "how long a joiner retries a refused join")
	only := flag.String("only", "", "run only the attacks whose name contains this")
	solvers := flag.Int("solvers", 1, "cores the puzzle-solving guessers hash on (the last attack)")
	flag.Parse()
	fmt.Printf("bench-attack: GOMAXPROCS=%d NumCPU=%d, %d attacking addresses, %d joins per condition\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), *sources, *joins)
	type attackRun struct {
		kind    attack.Kind
		solvers int
	}
	var runs []attackRun
	for _, k := range attack.Kinds {
		runs = append(runs, attackRun{k, 0})
	}
	runs = append(runs, attackRun{attack.Guess, *solvers})
	for _, r := range runs {
		name := r.kind.String()
		if r.solvers > 0 {
			name += fmt.Sprintf("+solve%d", r.solvers)
		}
		if !strings.Contains(name, *only) {
			continue
		}
		if err := run(name, r.kind, r.solvers, *sources, *joins, *warm, *giveUp); err != nil {
			fmt.Fprintln(os.Stderr, "bench-attack:", err)
			os.Exit(1)
		}
	}
}

func run(name string, k attack.Kind, solvers, sources, joins int, warm, giveUp time.Duration) error {
	// The default limits, except that the session has a password.
	srv, err := host.New(host.Config{Logger: testkit.Quiet(), Admission: host.AdmissionConfig{Password: []byte("sesame")}, Limits: host.LimitConfig{MaxPlayers: 64}},
		host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: databases}, locksteptest.New(1, 16))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	addr := ln.Addr().String()
	timeJoins := func() (med, worst time.Duration, failed int) {
		var ds []time.Duration
		for i := 0; i < joins; i++ {
			d, err := timeJoin(addr, fmt.Sprintf("Real%d", i), giveUp)
			if err != nil {
				failed++
				continue
			}
			ds = append(ds, d)
		}
		if len(ds) == 0 {
			return 0, 0, failed
		}
		slices.Sort(ds)
		return ds[len(ds)/2], ds[len(ds)-1], failed
	}
	bMed, bWorst, bFail := timeJoins()
	wdbs := make([]wire.DefSummary, len(databases))
	for i, d := range databases {
		wdbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	cpu0 := procstat.CPU(os.Getpid())
	stop := attack.Start(attack.Config{Addr: addr, Kind: k, Sources: sources, Databases: wdbs, Solvers: solvers})
	time.Sleep(warm)
	dMed, dWorst, dFail := timeJoins()
	st := stop()
	cpu := procstat.CPU(os.Getpid()) - cpu0
	line := func(label string, med, worst time.Duration, failed int) string {
		s := fmt.Sprintf("%s median %7.1f ms, worst %7.1f ms", label, procstat.Ms(med), procstat.Ms(worst))
		if failed > 0 {
			s += fmt.Sprintf(", %d of %d refused for %s", failed, joins, giveUp)
		}
		return s
	}
	hs := srv.Overview().Stats
	fmt.Printf("%-24s %s | %s\n", name, line("alone:", bMed, bWorst, bFail), line("attacked:", dMed, dWorst, dFail))
	fmt.Printf("%-24s attacker: %d conns, %d dial errors, sent %d B, received %d B; wrong guesses checked %d, refused unchecked %d; puzzles %d, solved %d, %d hashes in %.2f s of solving; process CPU during the attack %.1f s\n",
		"", st.Conns.Load(), st.DialErrors.Load(), st.Sent.Load(), st.Received.Load(), st.Checked.Load(), st.Refused.Load(),
		st.Puzzles.Load(), st.Solved.Load(), st.Hashes.Load(), time.Duration(st.SolveTime.Load()).Seconds(), cpu.Seconds())
	fmt.Printf("%-24s host: %d pending evicted, %d refused under a penalty; %d passwords checked (%d wrong), %d guesses refused, %d puzzles set, now %d bits\n",
		"", hs.PendingEvicted, hs.PendingRefused, hs.PasswordChecks, hs.PasswordsWrong, hs.GuessesRefused, hs.PuzzlesIssued, hs.PuzzleBits)
	return nil
}

// timeJoin joins with the right password, retrying a refusal for up to
// giveUp, and returns the time from the first attempt to WorldReady.
func timeJoin(addr, name string, giveUp time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), giveUp)
		s, err := join.Join(ctx, join.Config{Addr: addr, Name: name, Password: []byte("sesame"), Databases: databases,
			Loader: locksteptest.Load, Logger: testkit.Quiet()})
		cancel()
		if err == nil {
			d := time.Since(start)
			s.Close()
			time.Sleep(300 * time.Millisecond) // within the connection rate per address
			return d, nil
		}
		if time.Since(start) > giveUp {
			return 0, err
		}
		time.Sleep(300 * time.Millisecond)
	}
}
