package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	joinpkg "github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/operator/rcon"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/testing/attack"
	"github.com/lockhost/lockhost/testing/rawclient"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// The tests in this file run the real host in relay mode against hostile
// clients: guesses of the arbiter secret from many addresses, players
// that make a false majority, and a declaration meant to lock the
// session (docs/protocol.md, sections 14.2, 14.6.1 and 14.9).

// hostileSecret is the arbiter secret of these tests.
const hostileSecret = "correct horse battery"

// relayRun is a running `host serve --relay --console`: its log, its
// console's input and output, and the address it hosts on.
type relayRun struct {
	addr    string
	log     *syncbuf.Buffer
	out     *syncbuf.Buffer
	console io.WriteCloser
}

// startRelayHost starts bin as a relay host with --defs-from-arbiter, the
// admin console on a pipe, and args, and waits until it hosts. The host
// is killed when the test ends, if still running.
func startRelayHost(t *testing.T, bin string, args ...string) *relayRun {
	t.Helper()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte(hostileSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	all := append([]string{"serve", "--relay", "--defs-from-arbiter", "--arbiter-secret-file", secret, "--console",
		"--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0"}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Env = append(os.Environ(), web.TokenEnv+"=", rcon.PasswordEnv+"=")
	r := &relayRun{log: &syncbuf.Buffer{}, out: &syncbuf.Buffer{}}
	cmd.Stderr, cmd.Stdout = r.log, r.out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.console = in
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("the host's log:\n%s", r.log.String())
		}
	})
	hosting := regexp.MustCompile(`msg=hosting addr=(\S+)`)
	testkit.WaitFor(t, "the relay host to host", func() bool {
		m := hosting.FindStringSubmatch(r.log.String())
		if m != nil {
			r.addr = m[1]
		}
		return m != nil
	})
	return r
}

// admin types line on the host's console and waits for an answer that
// holds want.
func (r *relayRun) admin(t *testing.T, line, want string) {
	t.Helper()
	if _, err := io.WriteString(r.console, line+"\n"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, fmt.Sprintf("the console's answer to %q", line), func() bool { return strings.Contains(r.out.String(), want) })
}

// arbClient is a Go client of the relay host: with world, the arbiter
// (its world a test world of three maps); from src when not nil; step is
// called at every tick it steps to.
func arbClient(t *testing.T, addr, name string, world bool, src net.IP, step func(lockstep.Sim)) (*joinpkg.Session, error) {
	t.Helper()
	cfg := joinpkg.Config{Addr: addr, Name: name, Loader: locksteptest.Load, Logger: testkit.Quiet(), OnStep: step}
	if world {
		cfg.ArbiterSecret = []byte(hostileSecret)
		cfg.World = func() (lockstep.Sim, error) { return locksteptest.New(3, 256), nil }
	}
	ctx := context.Background()
	if src != nil {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 10 * time.Second}
		cfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s, err := joinpkg.Join(ctx, cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-errc })
	return s, nil
}

// mustJoin is arbClient that fails the test on a refusal.
func mustJoin(t *testing.T, addr, name string, world bool, src net.IP, step func(lockstep.Sim)) *joinpkg.Session {
	t.Helper()
	s, err := arbClient(t, addr, name, world, src, step)
	if err != nil {
		t.Fatalf("join %s: %v", name, err)
	}
	return s
}

// canDialSource skips the test unless a connection from src reaches a
// loopback listener (127.0.0.0/8 is all loopback on Linux).
func canDialSource(t *testing.T, src net.IP) {
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

// TestArbiterGuessesBinary: the real relay host, with its default limits,
// its arbiter secret guessed from 100 loopback addresses each in its own
// /24 for 3 s. It checks no more wrong proofs than the password's bound
// (section 6.3: 20 + 4*(24-7) + 5 a second), and a client with the secret
// is admitted during the attack. The figures are logged.
func TestArbiterGuessesBinary(t *testing.T) {
	bin := hostBinary(t)
	const sources = 100
	canDialSource(t, attack.Source(sources-1))
	h := startRelayHost(t, bin)
	started := time.Now()
	mustJoin(t, h.addr, "Arbiter", true, nil, nil)
	stop := attack.Start(attack.Config{Addr: h.addr, Kind: attack.ArbiterGuess, Sources: sources, Pause: 500 * time.Millisecond})
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	time.Sleep(1500 * time.Millisecond)
	// The real arbiter joins as a standby; evicted from a full pending
	// table it tries again, as a client does, at most three times.
	var err error
	tries := 0
	for tries < 3 {
		tries++
		var re *joinpkg.RejectedError
		if _, err = arbClient(t, h.addr, "Standby", true, nil, nil); !errors.As(err, &re) || re.Reason != wire.ReasonRateLimited {
			break
		}
	}
	time.Sleep(1500 * time.Millisecond)
	st := stop()
	stopped = true
	elapsed := time.Since(started)
	checked := st.Checked.Load()
	t.Logf("%d addresses for %v: %d connections, %d wrong proofs checked (%.0f a second), %d refused unchecked, %d puzzles; the arbiter with the secret: %v after %d tries",
		sources, elapsed.Round(time.Millisecond), st.Conns.Load(), checked, float64(checked)/elapsed.Seconds(), st.Refused.Load(), st.Puzzles.Load(), err, tries)
	if err != nil {
		t.Errorf("the client with the secret, during the attack: %v", err)
	}
	if bound := 20 + 4*(24-7) + 5*elapsed.Seconds(); float64(checked) > bound {
		t.Errorf("%d wrong arbiter proofs checked in %v, over the bound %.0f", checked, elapsed, bound)
	}
}

// liar perturbs map 1 of a relay player's world once, at the first tick
// it steps to at or after at; it records the last tick stepped to.
type liar struct{ at, last atomic.Uint64 }

func newLiar() *liar {
	l := &liar{}
	l.at.Store(math.MaxUint64)
	return l
}

func (l *liar) step(t *testing.T) func(lockstep.Sim) {
	done := false
	return func(sim lockstep.Sim) {
		if !done && sim.Tick() >= l.at.Load() {
			if err := sim.(*locksteptest.Counters).Perturb(1); err != nil {
				t.Error(err)
			}
			done = true
		}
		l.last.Store(sim.Tick())
	}
}

// checkpointLine matches the host's line deciding the checkpoint of
// tick: group 1 is its reference, empty when it had no majority.
func checkpointLine(tick uint64) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`msg="checkpoint decided by the players" tick=%d host_tick=\d+ reference="([^"]+)"|msg="checkpoint without a majority: no reference, nobody compared" tick=%d `, tick, tick))
}

// TestRelayMajorityBinary: the real relay host, its arbiter gone, three
// players. Two of them report the same wrong hashes (they perturb the
// same map at the same tick). From one /24 they are one vote against
// the honest player's: no majority. From two networks they find the
// honest player desynced (2 of 3), and the next checkpoint is decided by
// 2 of 3 again: the honest player keeps its vote while its repair waits.
func TestRelayMajorityBinary(t *testing.T) {
	bin := hostBinary(t)
	canDialSource(t, net.IPv4(127, 77, 7, 2))
	const every = 30
	for _, tc := range []struct {
		name         string
		liars        [2]net.IP
		first, after string // the references of the corrupted checkpoint and the next; "" for none
	}{
		{"liars of one network", [2]net.IP{net.IPv4(127, 77, 7, 1), net.IPv4(127, 77, 7, 2)}, "", ""},
		{"liars of two networks", [2]net.IP{net.IPv4(127, 77, 7, 1), net.IPv4(127, 78, 7, 1)}, "majority 2 of 3 players", "majority 2 of 3 players"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startRelayHost(t, bin, "--hash-every", fmt.Sprint(every), "--tick-rate", "200")
			arb := mustJoin(t, h.addr, "Arbiter", true, nil, nil)
			mustJoin(t, h.addr, "Alice", false, net.IPv4(127, 76, 0, 1), nil)
			a, b := newLiar(), newLiar()
			mustJoin(t, h.addr, "Mallory", false, tc.liars[0], a.step(t))
			mustJoin(t, h.addr, "Mallet", false, tc.liars[1], b.step(t))
			arb.Close()
			testkit.WaitFor(t, "the arbiter to leave", func() bool { return strings.Contains(h.log.String(), `msg="arbiter left"`) })
			at := (a.last.Load()/every + 2) * every
			b.at.Store(at)
			a.at.Store(at)
			for i, want := range []string{tc.first, tc.after} {
				tick := at + uint64(i)*every
				var m []string
				testkit.WaitFor(t, fmt.Sprintf("the checkpoint of tick %d decided", tick), func() bool {
					m = checkpointLine(tick).FindStringSubmatch(h.log.String())
					return m != nil
				})
				if m[1] != want {
					t.Errorf("checkpoint %d decided by %q, want %q", tick, m[1], want)
				}
			}
		})
	}
}

// until reads from c, as rawclient.Conn.Until does, until a packet
// with id comes, which it returns with its frame's size, or the host's
// disconnect.
func until(c *rawclient.Conn, id wire.ID) (wire.Packet, int, *wire.ServerDisconnect) {
	p, n := c.Until(id)
	if d, ok := p.(*wire.ServerDisconnect); ok {
		return nil, 0, d
	}
	return p, n, nil
}

// declare proves the secret with dbs as its Client_Defs and, admitted,
// leaves without uploading; it returns the refusal, or nil.
func declare(t *testing.T, addr string, dbs []wire.DefSummary) *wire.ServerDisconnect {
	t.Helper()
	c := rawclient.Dial(t, addr, 20*time.Second)
	defer c.Close()
	c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	p, _, d := until(c, wire.IDServerModList)
	if d != nil {
		return d
	}
	ml := p.(*wire.ServerModList)
	c.Send(&wire.ClientDefs{Databases: dbs})
	if _, _, d := until(c, wire.IDServerDefsOK); d != nil {
		return d
	}
	c.Send(&wire.ClientUsername{Name: "Mallory", ArbiterProof: password.ArbiterProof([]byte(hostileSecret), ml.ArbiterChallenge)})
	if _, _, d := until(c, wire.IDServerUploadRequest); d != nil {
		return d
	}
	c.Send(&wire.ClientLeave{})
	return nil
}

// modListSize is the size of the mod list frame a new connection gets.
func modListSize(t *testing.T, addr string) int {
	t.Helper()
	c := rawclient.Dial(t, addr, 20*time.Second)
	defer c.Close()
	c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	_, n, d := until(c, wire.IDServerModList)
	if d != nil {
		t.Fatalf("refused before the mod list: %+v", d)
	}
	return n
}

// TestRelayDeclarationSizeBinary: the real relay host with
// --defs-from-arbiter. A client with the secret declares 512 databases
// of 128-byte names and leaves: it is refused for the declaration's
// size, the mod list a later connection gets stays small, and the real
// arbiter is admitted.
func TestRelayDeclarationSizeBinary(t *testing.T) {
	bin := hostBinary(t)
	h := startRelayHost(t, bin)
	huge := make([]wire.DefSummary, wire.MaxDatabases)
	for i := range huge {
		name := fmt.Sprintf("Def%04d", i)
		huge[i] = wire.DefSummary{Type: name + strings.Repeat("x", wire.MaxTypeNameBytes-len(name)), Count: 1, Hash: uint64(i)}
	}
	d := declare(t, h.addr, huge)
	n := modListSize(t, h.addr)
	t.Logf("the largest declaration: refused %+v; a later mod list: %d bytes", d, n)
	if d == nil || d.Reason != wire.ReasonGeneric {
		t.Errorf("the largest declaration: refused %+v, want Generic for its size", d)
	}
	if n > wire.MaxDeclarationBytes {
		t.Errorf("a later connection's mod list has %d bytes, over %d", n, wire.MaxDeclarationBytes)
	}
	mustJoin(t, h.addr, "Arbiter", true, nil, nil)
}

// TestRelayClearDefsBinary: the real relay host with --defs-from-arbiter.
// A client with the secret declares three databases the real arbiter
// does not have and leaves: the real arbiter is refused for Defs until
// the operator types cleardefs on the console; then it is admitted and
// uploads the world, and a player joins.
func TestRelayClearDefsBinary(t *testing.T) {
	bin := hostBinary(t)
	h := startRelayHost(t, bin)
	other := []wire.DefSummary{{Type: "SoundDef", Count: 1, Hash: 7}, {Type: "TerrainDef", Count: 2, Hash: 9}, {Type: "ThingDef", Count: 3, Hash: 11}}
	if d := declare(t, h.addr, other); d != nil {
		t.Fatalf("a declaration of three databases: refused %+v", d)
	}
	_, err := arbClient(t, h.addr, "Arbiter", true, nil, nil)
	var re *joinpkg.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonDefs {
		t.Fatalf("the real arbiter after the other declaration: %v, want refused for Defs", err)
	}
	h.admin(t, "help cleardefs", "drop the def databases the arbiter declared")
	h.admin(t, "cleardefs", "cleared the declaration of 3 def databases")
	mustJoin(t, h.addr, "Arbiter", true, nil, nil)
	mustJoin(t, h.addr, "Alice", false, nil, nil)
	if !strings.Contains(h.log.String(), `msg="admin action" by=console action="clear declared defs" databases=3`) {
		t.Errorf("the clearing is not logged with who did it")
	}
}
