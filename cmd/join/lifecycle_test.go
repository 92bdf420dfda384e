package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// hostProc is a host tool process started by a test.
type hostProc struct {
	cmd  *exec.Cmd
	log  *syncbuf.Buffer
	addr string
	done chan struct{}
}

// startHostProc runs the host tool's serve on listen with args until the
// test ends (or kill) and waits for it to accept players.
func startHostProc(t *testing.T, bin, listen string, args ...string) *hostProc {
	t.Helper()
	h := &hostProc{log: &syncbuf.Buffer{}, done: make(chan struct{})}
	h.cmd = exec.Command(bin, append([]string{"serve", "--listen", listen, "--conn-rate", "-1"}, args...)...)
	h.cmd.Stderr = h.log
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.cmd.Wait(); close(h.done) }()
	t.Cleanup(func() { h.cmd.Process.Signal(os.Interrupt); <-h.done })
	waitLog(t, h, "msg=hosting")
	m := regexp.MustCompile(`msg=hosting addr=(\S+)`).FindStringSubmatch(h.log.String())
	if m == nil {
		t.Fatalf("no hosting address in the host's log:\n%s", h.log.String())
	}
	h.addr = m[1]
	return h
}

// waitLog waits for want in the host's log; the bound only catches a hang.
func waitLog(t *testing.T, h *hostProc, want string) {
	t.Helper()
	testkit.WaitWithin(t, 60*time.Second, want+" in the host's log", func() bool {
		select {
		case <-h.done:
			if !strings.Contains(h.log.String(), want) {
				t.Fatalf("host exited without %q:\n%s", want, h.log.String())
			}
		default:
		}
		return strings.Contains(h.log.String(), want)
	})
}

// kill ends the host at once, as a crash does (SIGKILL on Unix).
func (h *hostProc) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-h.done
}

// joinProc is a join tool process started by a test.
type joinProc struct {
	cmd         *exec.Cmd
	out, errOut *syncbuf.Buffer
	code        chan int
	exited      chan struct{} // closed when it has exited
}

func startJoinProc(t *testing.T, bin string, args ...string) *joinProc {
	t.Helper()
	j := &joinProc{out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}, code: make(chan int, 1), exited: make(chan struct{})}
	j.cmd = exec.Command(bin, args...)
	j.cmd.Stdout, j.cmd.Stderr = j.out, j.errOut
	j.cmd.Env = append(os.Environ(), cliutil.PasswordEnv+"=")
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := j.cmd.Wait()
		defer close(j.exited)
		var ee *exec.ExitError
		switch {
		case err == nil:
			j.code <- 0
		case errors.As(err, &ee):
			j.code <- ee.ExitCode()
		default:
			j.code <- -1
		}
	}()
	t.Cleanup(func() { j.cmd.Process.Kill() })
	return j
}

// wait returns the join tool's exit code; the bound only catches a hang.
func (j *joinProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-j.code:
		return code
	case <-time.After(90 * time.Second):
		t.Fatalf("the join tool did not exit\nstdout:\n%s\nstderr:\n%s", j.out.String(), j.errOut.String())
	}
	return 0
}

// waitOut waits for want on the join tool's standard output, failing at
// once, with its output, if it exits first; the bound only catches a hang.
func (j *joinProc) waitOut(t *testing.T, want string, count int) {
	t.Helper()
	testkit.WaitWithin(t, 90*time.Second, want, func() bool {
		if strings.Count(j.out.String(), want) >= count {
			return true
		}
		select {
		case <-j.exited:
			t.Fatalf("the join tool exited before %q\nstdout:\n%s\nstderr:\n%s", want, j.out.String(), j.errOut.String())
		default:
		}
		return false
	})
}

// lastLine is the last line of s that is not empty, a countdown or a
// progress line's carriage returns aside.
func lastLine(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// TestBinaryStopBeforeReady: Ctrl-C in the join tool during the handshake
// or the download is a leave: the tool exits 130 with one sentence naming
// the phase, and the host logs a leave (a player left, or a client that
// left before admission), never a drop or a refusal. A relay that delays
// every piece holds the join in the handshake long enough to stop it
// there; the download phase begins with the world's first chunk, and a
// world of 4 maps sent at 24 KiB/s lasts seconds after it.
func TestBinaryStopBeforeReady(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sends SIGINT")
	}
	joinBin, hostBin := buildTools(t)
	for _, tc := range []struct {
		phase, hostLine string
		world           []string
	}{
		{"handshake", `msg="client left before admission"`, []string{"--maps", "1", "--map-size", "64"}},
		{"download", `msg="player left"`, []string{"--maps", "4", "--map-size", "250", "--max-upload-rate", "24KiB"}},
	} {
		t.Run(tc.phase, func(t *testing.T) {
			h := startHostProc(t, hostBin, "127.0.0.1:0", append(tc.world, "--data-dir", t.TempDir())...)
			r := testkit.StartRelay(t, h.addr)
			r.SetDelay(700 * time.Millisecond) // a round trip of 1.4 s: each phase lasts at least that
			j := startJoinProc(t, joinBin, r.Addr(), "--name", "Quitter", "--no-input")
			testkit.WaitWithin(t, 60*time.Second, "the join in the "+tc.phase, func() bool {
				return strings.Contains(j.errOut.String(), tc.phase+"...")
			})
			if err := j.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			code := j.wait(t)
			want := "join: stopped during the " + tc.phase + ", before WorldReady; left without joining"
			if code != exitStopped || lastLine(j.errOut.String()) != want {
				t.Fatalf("exit %d, want %d and last line %q\nstdout:\n%s\nstderr:\n%s", code, exitStopped, want, j.out.String(), j.errOut.String())
			}
			waitLog(t, h, tc.hostLine)
			for _, bad := range []string{`msg="player dropped"`, `msg="client dropped"`, `msg="client refused"`, "level=ERROR"} {
				if strings.Contains(h.log.String(), bad) {
					t.Fatalf("the host logged %s:\n%s", bad, h.log.String())
				}
			}
		})
	}
}

// TestBinaryGivesUpReconnecting: when the host dies and does not come
// back, the join tool numbers its attempts, says when it will give up,
// and after --reconnect-for exits 4 with one sentence.
func TestBinaryGivesUpReconnecting(t *testing.T) {
	joinBin, hostBin := buildTools(t)
	h := startHostProc(t, hostBin, "127.0.0.1:0", "--maps", "1", "--map-size", "64", "--data-dir", t.TempDir())
	j := startJoinProc(t, joinBin, h.addr, "--name", "Stayer", "--no-input", "-q", "--reconnect-for", "6s")
	j.waitOut(t, "WorldReady", 1)
	h.kill(t)
	code := j.wait(t)
	errOut := j.errOut.String()
	if code != cliutil.ExitNetwork {
		t.Fatalf("exit %d, want %d\n%s", code, cliutil.ExitNetwork, errOut)
	}
	for _, want := range []string{"reconnecting: attempt 1, giving up in ", "reconnecting: attempt 2, giving up in "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if last := lastLine(errOut); !regexp.MustCompile(`^join: gave up reconnecting after \d+ attempts in 6s \(--reconnect-for\); the last one: .*connection refused$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
}

// TestBinaryRejoinAfterHostCrash: a host killed (SIGKILL) mid-session and
// restarted from its save lets the auto-reconnecting joiner back in as the
// same player, with the token kept beside the save (owner-only). When the
// host no longer knows the token (its tokens file gone), the tool joins
// afresh under its name by itself.
func TestBinaryRejoinAfterHostCrash(t *testing.T) {
	joinBin, hostBin := buildTools(t)
	dir, data := t.TempDir(), t.TempDir()
	save := filepath.Join(dir, "colony"+saves.Ext)
	serve := func(listen string, more ...string) *hostProc {
		return startHostProc(t, hostBin, listen, append([]string{"--save", save, "--autosave", "1s", "--data-dir", data}, more...)...)
	}
	h := serve("127.0.0.1:0", "--new", "--maps", "1", "--map-size", "64")
	j := startJoinProc(t, joinBin, h.addr, "--name", "Phoenix", "--no-input", "-q")
	j.waitOut(t, "WorldReady", 1)
	m := regexp.MustCompile(`WorldReady .* player=(\d+) `).FindStringSubmatch(j.out.String())
	if m == nil {
		t.Fatalf("no player ID:\n%s", j.out.String())
	}
	// An autosave to restart from; the token was kept at admission, long
	// before.
	waitLog(t, h, "msg=saved")
	tokens := saves.TokensPath(save)
	if tk, err := saves.ReadTokens(tokens); err != nil || len(tk.Players) != 1 {
		t.Errorf("tokens file: %d tokens, %v; want 1", len(tk.Players), err)
	}
	if st, err := os.Stat(tokens); err != nil {
		t.Error(err)
	} else if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("tokens file mode %v, want 0600", st.Mode().Perm())
	}
	h.kill(t)

	h = serve(h.addr)
	j.waitOut(t, "reconnected: player "+m[1]+",", 1)
	waitLog(t, h, "rejoin=true")
	if strings.Contains(j.errOut.String(), "afresh") || strings.Contains(h.log.String(), "BadToken") {
		t.Fatalf("the token was not taken back\nstderr:\n%s\nhost:\n%s", j.errOut.String(), h.log.String())
	}
	h.kill(t)

	// The tokens gone: the tool joins afresh under its name.
	if err := os.Remove(tokens); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	h = serve(h.addr)
	j.waitOut(t, "reconnected: player", 2)
	if !strings.Contains(j.errOut.String(), "the host no longer knows this session (it restarted, or the grace period is over); joining afresh under the same name.") {
		t.Errorf("stderr does not say it joins afresh:\n%s", j.errOut.String())
	}
	waitLog(t, h, `msg="player joined"`)
	if runtime.GOOS == "windows" {
		return // no signal to stop it with
	}
	if err := j.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := j.wait(t); code != 0 || !strings.Contains(j.out.String(), "left the session") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, j.out.String(), j.errOut.String())
	}
	waitLog(t, h, `msg="player left"`)
}
