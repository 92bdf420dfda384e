// Command relay-check runs a relay session end to end with the real
// binaries: host serve --relay, the Go join tool as the arbiter (the
// colony game) and as players, and a raw client of its own for the one
// thing the join tool never does (an upload without the arbiter secret).
// It prints one line per step with the step's time and exits 1 at the
// first step that fails, with the host's log's tail. scripts/relay-check
// runs it; CI runs that.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// run is the check's state: where its files are, and the processes it
// started (each stopped at the end).
type run struct {
	dir, hostBin, joinBin string
	addr                  string
	secret                string
	mu                    sync.Mutex
	procs                 []*proc
	hostProc              *proc
	play                  time.Duration
	uploaded              time.Time // when the arbiter's world was in: its join point's age
}

// pointAge is the host's age limit of a join point (host serve's
// default): the third player joins once the world's point is older.
const pointAge = 10 * time.Second

// proc is one started process and its combined output.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan error
}

func main() {
	play := flag.Duration("play", 20*time.Second, "how long the two players play before the third joins")
	flag.Parse()
	dir, err := os.MkdirTemp("", "relay-check")
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay-check:", err)
		os.Exit(1)
	}
	r := &run{dir: dir, play: *play}
	code := r.main()
	r.stopAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

// main runs the steps in order; the first that fails ends the check.
func (r *run) main() int {
	start := time.Now()
	steps := []struct {
		name string
		fn   func() error
	}{
		{"build host and join", r.build},
		{"host serve --relay starts with no world", r.startHost},
		{"a player before the arbiter is refused", r.early},
		{"the arbiter uploads the world", r.arbiter},
		{"a standby arbiter joins as a player", r.standby},
		{fmt.Sprintf("two players play for %s", r.play), r.players},
		{"a third joins mid-game from the arbiter's upload, nobody pausing, and stays in step", r.third},
		{"a map corrupted on one player is repaired from the arbiter's upload", r.repair},
		{"a wrong arbiter secret is refused and logged", r.wrongSecret},
		{"a player that uploads is refused and logged", r.rogueUpload},
		{"the arbiter leaves and the standby takes over", r.takeOver},
		{"the host restarts from its save and the players rejoin", r.restart},
	}
	for i, s := range steps {
		t0 := time.Now()
		if err := s.fn(); err != nil {
			fmt.Printf("relay-check: step %d, %s: FAILED after %.2fs: %v\n", i+1, s.name, time.Since(t0).Seconds(), err)
			if r.hostProc != nil {
				fmt.Println("--- host log (tail)")
				fmt.Println(tail(r.hostProc.out.String(), 30))
			}
			return 1
		}
		fmt.Printf("relay-check: step %d, %s: ok in %.2fs\n", i+1, s.name, time.Since(t0).Seconds())
	}
	fmt.Printf("relay-check: all %d steps ok in %.1fs\n", len(steps), time.Since(start).Seconds())
	return 0
}

func (r *run) build() error {
	r.hostBin, r.joinBin = filepath.Join(r.dir, "host"), filepath.Join(r.dir, "join")
	for bin, pkg := range map[string]string{r.hostBin: "./cmd/host", r.joinBin: "./cmd/join"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	r.secret = filepath.Join(r.dir, "arbiter-secret")
	return os.WriteFile(r.secret, []byte("relay check secret\n"), 0o600)
}

// startHost starts the relay host on a free loopback port (kept for the
// restart), saving to a file of the check's.
func (r *run) startHost() error {
	if r.addr == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		r.addr = ln.Addr().String()
		ln.Close()
	}
	args := []string{"serve", "--listen", r.addr, "--relay", "--arbiter-secret-file", r.secret,
		"--save", filepath.Join(r.dir, "relay.lhsave"), "--autosave", "2s", "--data-dir", filepath.Join(r.dir, "data"), "--log-level", "debug"}
	if r.hostProc == nil {
		args = append(args, "--new")
	}
	p, err := r.start("host", r.hostBin, args...)
	if err != nil {
		return err
	}
	r.hostProc = p
	return r.waitLog(p, "msg=hosting", 1, 20*time.Second)
}

// early: a player before the world exits 3 with the host's sentence.
func (r *run) early() error {
	out, code := r.joinOnce("Early", "--exit-after-ready")
	if code != 3 || !strings.Contains(out, "no world yet") {
		return fmt.Errorf("exit %d: %s", code, out)
	}
	return nil
}

func (r *run) arbiter() error {
	p, err := r.start("arbiter", r.joinBin, r.addr, "--name", "Arbiter", "--arbiter-secret-file", r.secret, "--no-input", "-q", "--bot", "2")
	if err != nil {
		return err
	}
	if err := r.waitLog(p, "WorldReady", 1, 30*time.Second); err != nil {
		return err
	}
	if err := r.waitLog(r.hostProc, `msg="world uploaded"`, 1, 5*time.Second); err != nil {
		return err
	}
	r.uploaded = time.Now()
	return nil
}

func (r *run) standby() error {
	p, err := r.start("standby", r.joinBin, r.addr, "--name", "Standby", "--arbiter-secret-file", r.secret, "--no-input", "-q")
	if err != nil {
		return err
	}
	return r.waitLog(p, "WorldReady", 1, 30*time.Second)
}

func (r *run) players() error {
	for _, name := range []string{"Alice", "Bob"} {
		p, err := r.start(name, r.joinBin, r.addr, "--name", name, "--no-input", "-q", "--bot", "5")
		if err != nil {
			return err
		}
		if err := r.waitLog(p, "WorldReady", 1, 30*time.Second); err != nil {
			return err
		}
	}
	time.Sleep(r.play)
	return r.noDesync()
}

// third joins once the join point is older than the host's 10 s limit,
// so the host asks the arbiter for one; it stays three hash intervals,
// and no desync is found.
func (r *run) third() error {
	// A short -play leaves the world's point young: wait out the limit.
	if wait := pointAge + 500*time.Millisecond - time.Since(r.uploaded); wait > 0 {
		time.Sleep(wait)
	}
	asked := r.count(r.hostProc, "join point asked of the arbiter")
	before := r.lastTick()
	p, err := r.start("Carol", r.joinBin, r.addr, "--name", "Carol", "--no-input", "-q")
	if err != nil {
		return err
	}
	if err := r.waitLog(p, "WorldReady", 1, 30*time.Second); err != nil {
		return err
	}
	if r.count(r.hostProc, "join point asked of the arbiter") <= asked || r.count(r.hostProc, "join point uploaded") == 0 {
		return errors.New("the join point Carol got did not come from the arbiter")
	}
	time.Sleep(4 * time.Second) // three checkpoints at 60 ticks a second
	if after := r.lastTick(); after < before+180 {
		return fmt.Errorf("the host's tick went from %d to %d during the join: the session paused", before, after)
	}
	return r.noDesync()
}

// repair: a player whose map 1 is corrupted on its machine is found and
// repaired with the map the arbiter uploads.
func (r *run) repair() error {
	p, err := r.start("Dave", r.joinBin, r.addr, "--name", "Dave", "--no-input", "-q", "--debug-corrupt-map", "1@0")
	if err != nil {
		return err
	}
	if err := r.waitLog(p, "repair: map 1 swapped in", 1, 30*time.Second); err != nil {
		return err
	}
	for _, want := range []string{"repair asked of the arbiter", "from=arbiter", `msg="desync repaired"`} {
		if err := r.waitLog(r.hostProc, want, 1, 10*time.Second); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) wrongSecret() error {
	bad := filepath.Join(r.dir, "wrong-secret")
	if err := os.WriteFile(bad, []byte("not the secret\n"), 0o600); err != nil {
		return err
	}
	out, code := r.joinOnce("Mallory", "--exit-after-ready", "--arbiter-secret-file", bad)
	if code != 3 || !strings.Contains(out, "BadArbiterSecret") {
		return fmt.Errorf("exit %d: %s", code, out)
	}
	return r.waitLog(r.hostProc, `msg="arbiter proof refused"`, 1, 5*time.Second)
}

// rogueUpload joins as a plain player with a raw client and sends an
// upload right after admission.
func (r *run) rogueUpload() error {
	nc, err := net.DialTimeout("tcp", r.addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	fr := wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)
	send := func(p wire.Packet) error { _, err := nc.Write(wire.MustMarshal(p)); return err }
	if err := send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion}); err != nil {
		return err
	}
	var dbs []wire.DefSummary
	for {
		id, body, err := fr.Next()
		if err != nil {
			return err
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			return err
		}
		switch p := p.(type) {
		case *wire.ServerModList:
			dbs = p.Databases
			if err := send(&wire.ClientDefs{Databases: dbs}); err != nil {
				return err
			}
		case *wire.ServerClock:
			if err := send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()}); err != nil {
				return err
			}
		case *wire.ServerDefsOK:
			if err := send(&wire.ClientUsername{Name: "Eve"}); err != nil {
				return err
			}
		case *wire.ServerSession:
			if err := send(&wire.ClientUpload{Request: 1, Total: 3, Data: []byte{1, 2, 3}}); err != nil {
				return err
			}
		case *wire.ServerDisconnect:
			if p.Reason != wire.ReasonBadPacket || !strings.Contains(p.Message, "arbiter") {
				return fmt.Errorf("disconnected with %s: %s", p.Reason, p.Message)
			}
			return r.waitLog(r.hostProc, "upload refused: not the arbiter", 1, 5*time.Second)
		}
	}
}

// takeOver: the arbiter leaves (Ctrl-C); the standby becomes active, and
// the next joiner's join point is its upload.
func (r *run) takeOver() error {
	arb := r.find("arbiter")
	if err := arb.cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	if err := r.waitLog(r.hostProc, `msg="arbiter active"`, 1, 10*time.Second); err != nil {
		return err
	}
	time.Sleep(11 * time.Second) // the join point ages past the host's 10 s
	asked := r.count(r.hostProc, "join point asked of the arbiter")
	p, err := r.start("Erin", r.joinBin, r.addr, "--name", "Erin", "--no-input", "-q")
	if err != nil {
		return err
	}
	if err := r.waitLog(p, "WorldReady", 1, 30*time.Second); err != nil {
		return err
	}
	if r.count(r.hostProc, "join point asked of the arbiter") <= asked {
		return errors.New("the join point Erin got was not asked of the standby")
	}
	return nil
}

// restart kills the host (kill -9: no final save, so it restarts from
// its newest autosave, written every 2 s), starts it again from the save
// on the same port, and waits for the players and the standby arbiter to
// rejoin by themselves with their tokens, as the join tool does after a
// dropped connection.
func (r *run) restart() error {
	old := r.hostProc
	if err := r.waitLog(old, "msg=saved path=", 1, 10*time.Second); err != nil {
		return err
	}
	if err := old.cmd.Process.Kill(); err != nil {
		return err
	}
	<-old.done
	if err := r.startHost(); err != nil {
		return err
	}
	if err := r.waitLog(r.hostProc, `msg="save loaded"`, 1, 5*time.Second); err != nil {
		return err
	}
	for _, name := range []string{"Standby", "Alice", "Bob"} {
		if err := r.waitLog(r.hostProc, `msg="player ready" player=`, 1, 60*time.Second); err != nil {
			return err
		}
		if err := r.waitLog(r.hostProc, "name="+name+" status=playing", 1, 60*time.Second); err != nil {
			return fmt.Errorf("%s did not rejoin: %w\n--- %s's output (tail)\n%s", name, err, name, tail(r.find(name).out.String(), 8))
		}
	}
	if err := r.waitLog(r.hostProc, `msg="arbiter active"`, 1, 10*time.Second); err != nil {
		return err
	}
	out, code := r.joinOnce("Frank", "--exit-after-ready")
	if code != 0 {
		return fmt.Errorf("join as Frank: exit %d: %s", code, out)
	}
	return r.noDesync()
}

// noDesync fails when the host found a desync nobody asked for (Dave's
// is on purpose).
func (r *run) noDesync() error {
	for _, line := range strings.Split(r.hostProc.out.String(), "\n") {
		if strings.Contains(line, `msg=desync `) && !strings.Contains(line, "name=Dave") {
			return fmt.Errorf("a desync: %s", line)
		}
	}
	return nil
}

var tickRe = regexp.MustCompile(`host_tick=(\d+)`)

// lastTick is the host tick its log last named (0 before any).
func (r *run) lastTick() uint64 {
	m := tickRe.FindAllStringSubmatch(r.hostProc.out.String(), -1)
	var t uint64
	if len(m) > 0 {
		fmt.Sscan(m[len(m)-1][1], &t)
	}
	return t
}

// joinOnce runs the join tool to its end and returns its output and exit
// code.
func (r *run) joinOnce(name string, extra ...string) (string, int) {
	args := append([]string{r.addr, "--name", name, "--no-input", "-q", "--no-reconnect"}, extra...)
	cmd := exec.Command(r.joinBin, args...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		return err.Error(), -1
	}
	return string(out), 0
}

func (r *run) start(name, bin string, args ...string) (*proc, error) {
	p := &proc{name: name, cmd: exec.Command(bin, args...), out: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.done <- p.cmd.Wait() }()
	r.mu.Lock()
	r.procs = append(r.procs, p)
	r.mu.Unlock()
	return p, nil
}

func (r *run) find(name string) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.procs {
		if p.name == name {
			return p
		}
	}
	return &proc{name: name, out: &syncbuf.Buffer{}, done: make(chan error, 1), cmd: &exec.Cmd{}}
}

// count is how many times want occurs in p's output.
func (r *run) count(p *proc, want string) int { return strings.Count(p.out.String(), want) }

// waitLog waits until want occurs n times in p's output.
func (r *run) waitLog(p *proc, want string, n int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if r.count(p, want) >= n {
			return nil
		}
		select {
		case err := <-p.done:
			p.done <- err
			if r.count(p, want) >= n {
				return nil
			}
			return fmt.Errorf("%s ended (%v) without %q:\n%s", p.name, err, want, tail(p.out.String(), 10))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: no %q within %s:\n%s", p.name, want, within, tail(p.out.String(), 10))
}

// stopAll interrupts every process still running, then kills what is
// left after a few seconds.
func (r *run) stopAll() {
	r.mu.Lock()
	procs := append([]*proc(nil), r.procs...)
	r.mu.Unlock()
	for _, p := range procs {
		if p.cmd.Process != nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range procs {
		if p.cmd.Process == nil {
			continue
		}
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
