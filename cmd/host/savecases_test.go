package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/internal/savelock"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

// hostRun is a running `host serve`.
type hostRun struct {
	cmd  *exec.Cmd
	log  *syncbuf.Buffer
	done chan error
}

// smallWorld are serve's flags for a quick world on a free port.
var smallWorld = []string{"--listen", "127.0.0.1:0", "--maps", "1", "--map-size", "48", "--conn-rate", "-1", "--tick-rate", "120"}

// startServe starts bin serve on a small world with args, and stops it
// (if still running) when the test ends.
func startServe(t *testing.T, bin, dataDir string, args ...string) *hostRun {
	t.Helper()
	return runHost(t, bin, append(append([]string{"serve", "--data-dir", dataDir}, smallWorld...), args...)...)
}

// runHost starts bin with args, its status page open without a token,
// and kills it (if still running) when the test ends. Whoever takes the
// exit from done puts it back, for the cleanup.
func runHost(t *testing.T, bin string, args ...string) *hostRun {
	t.Helper()
	return runHostEnv(t, nil, bin, args...)
}

// waitLog waits until the host's log holds want, failing if it exits
// first or takes 60 s.
func (h *hostRun) waitLog(t *testing.T, want string) {
	t.Helper()
	h.waitFor(t, want, func() bool { return strings.Contains(h.log.String(), want) })
}

func (h *hostRun) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-h.done:
			h.done <- err
			t.Fatalf("host exited (%v) before %s:\n%s", err, what, h.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 60 s:\n%s", what, h.log.String())
		}
	}
}

// exit waits for the host to end and returns its exit code.
func (h *hostRun) exit(t *testing.T) int {
	t.Helper()
	select {
	case err := <-h.done:
		h.done <- err
		return exitCode(t, err)
	case <-time.After(60 * time.Second):
		t.Fatalf("host still running after 60 s:\n%s", h.log.String())
		return -1
	}
}

// stop sends SIGTERM and returns the exit code.
func (h *hostRun) stop(t *testing.T) int {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	return h.exit(t)
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		t.Fatal(err)
		return -1
	}
}

// runTool runs bin with args to the end and returns its exit code and
// combined output.
func runTool(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	return exitCode(t, cmd.Run()), out.String()
}

// TestSaveCasesThroughBinary drives the real host through what operators
// do: crash and restart with the same command, --new over a colony,
// --force-new, --recover of a damaged save, saves new over a file, an
// unwritable folder and a final save that cannot be written.
func TestSaveCasesThroughBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the host")
	}
	dir := t.TempDir()
	bin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/host")
	data := filepath.Join(dir, "data")

	colony := filepath.Join(dir, "colony"+saves.Ext)
	var crashedAt uint64
	t.Run("crash restart loads the newest autosave", func(t *testing.T) {
		h := startServe(t, bin, data, "--save", colony, "--new", "--autosave", "100ms", "--keep", "2")
		h.waitFor(t, "two autosaves", func() bool {
			autos, _ := saves.Autosaves(colony)
			return len(autos) >= 2
		})
		_ = h.cmd.Process.Signal(syscall.SIGKILL)
		h.exit(t)
		if _, err := os.Stat(colony); err == nil {
			t.Fatal("a killed host left its final save; the case needs only autosaves")
		}
		best, _, ok := saves.NewestValid(colony)
		if !ok {
			t.Fatal("no valid autosave after the kill")
		}
		crashedAt = best.Meta.Tick
		// The same command, and the same with --recover (killed again in
		// between, so both find only autosaves).
		for i, extra := range [][]string{nil, {"--recover"}} {
			h = startServe(t, bin, data, append([]string{"--save", colony, "--autosave", "-1s"}, extra...)...)
			h.waitLog(t, "world ready")
			log := h.log.String()
			if !strings.Contains(log, "loading the newest valid save") || !strings.Contains(log, filepath.Base(best.Path)) ||
				!strings.Contains(log, "did not stop cleanly") {
				t.Fatalf("%v: the log does not say which save was loaded and why:\n%s", extra, log)
			}
			if i == 0 {
				_ = h.cmd.Process.Signal(syscall.SIGKILL)
				h.exit(t)
				continue
			}
			if code := h.stop(t); code != 0 {
				t.Fatalf("%v: exit %d after SIGTERM:\n%s", extra, code, h.log.String())
			}
			f, err := saves.Read(colony)
			if err != nil || f.Meta.Tick < crashedAt {
				t.Fatalf("%v: final save %v, the colony had reached tick %d", extra, err, crashedAt)
			}
		}
	})

	t.Run("--new over a colony is refused; --force-new moves it aside", func(t *testing.T) {
		before := listFiles(t, dir)
		code, out := runTool(t, bin, append(append([]string{"serve", "--data-dir", data}, smallWorld...), "--save", colony, "--new")...)
		if code != cliutil.ExitUsage || !strings.Contains(out, "--new would start over the colony") || !strings.Contains(out, colony) {
			t.Fatalf("exit %d, want %d naming the save:\n%s", code, cliutil.ExitUsage, out)
		}
		if after := listFiles(t, dir); !equalFiles(before, after) {
			t.Fatalf("refused --new changed the folder: %v -> %v", before, after)
		}
		old, _ := os.ReadFile(colony)
		h := startServe(t, bin, data, "--save", colony, "--force-new", "--autosave", "-1s")
		h.waitLog(t, "world ready")
		if code := h.stop(t); code != 0 {
			t.Fatalf("exit %d:\n%s", code, h.log.String())
		}
		moved, _ := filepath.Glob(filepath.Join(dir, "colony.old-*", "*"))
		// The save's lock file stays where it is: it is the host's.
		files := slices.DeleteFunc(slices.Clone(before["colony"]), func(n string) bool { return strings.HasSuffix(n, savelock.Suffix) })
		if len(moved) != len(files) {
			t.Fatalf("moved aside %v, want the %d files %v", moved, len(files), files)
		}
		kept, err := os.ReadFile(filepath.Join(filepath.Dir(moved[0]), "colony"+saves.Ext))
		if err != nil || !bytes.Equal(kept, old) {
			t.Fatalf("the old save was not kept as it was (%v)", err)
		}
		if f, err := saves.Read(colony); err != nil || f.Meta.Tick >= crashedAt {
			t.Fatalf("new world's save: %v (tick %d; the old colony was at %d)", err, f.Meta.Tick, crashedAt)
		}
	})

	t.Run("--recover keeps the damaged save", func(t *testing.T) {
		h := startServe(t, bin, data, "--save", colony, "--autosave", "100ms")
		h.waitFor(t, "an autosave", func() bool {
			autos, _ := saves.Autosaves(colony)
			return len(autos) >= 1
		})
		if code := h.stop(t); code != 0 {
			t.Fatalf("exit %d:\n%s", code, h.log.String())
		}
		b, err := os.ReadFile(colony)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x10
		os.WriteFile(colony, b, 0o644)
		code, out := runTool(t, bin, append(append([]string{"serve", "--data-dir", data}, smallWorld...), "--save", colony)...)
		if code != cliutil.ExitFailure || !strings.Contains(out, "damaged") || !strings.Contains(out, "--recover") {
			t.Fatalf("damaged save: exit %d:\n%s", code, out)
		}
		h = startServe(t, bin, data, "--save", colony, "--recover", "--autosave", "-1s")
		h.waitLog(t, "world ready")
		if code := h.stop(t); code != 0 {
			t.Fatalf("exit %d:\n%s", code, h.log.String())
		}
		kept, _ := filepath.Glob(colony + ".damaged-*")
		if len(kept) != 1 {
			t.Fatalf("damaged save kept as %v, want one file", kept)
		}
		if got, _ := os.ReadFile(kept[0]); !bytes.Equal(got, b) {
			t.Fatal("the kept file is not the damaged save")
		}
		if _, err := saves.Read(colony); err != nil {
			t.Fatalf("the final save after recovering: %v", err)
		}
	})

	t.Run("saves new refuses an existing file", func(t *testing.T) {
		out := filepath.Join(dir, "made"+saves.Ext)
		if code, msg := runTool(t, bin, "saves", "new", "--out", out, "--maps", "1", "--map-size", "48"); code != 0 {
			t.Fatalf("first saves new: exit %d: %s", code, msg)
		}
		first, _ := os.ReadFile(out)
		code, msg := runTool(t, bin, "saves", "new", "--out", out, "--maps", "1", "--map-size", "48", "--seed", "9")
		if code != cliutil.ExitUsage || !strings.Contains(msg, "--force") {
			t.Fatalf("saves new over a file: exit %d: %s", code, msg)
		}
		if now, _ := os.ReadFile(out); !bytes.Equal(now, first) {
			t.Fatal("the refused saves new changed the file")
		}
		if code, msg := runTool(t, bin, "saves", "new", "--out", out, "--maps", "1", "--map-size", "48", "--seed", "9", "--force"); code != 0 {
			t.Fatalf("saves new --force: exit %d: %s", code, msg)
		}
		if now, _ := os.ReadFile(out); bytes.Equal(now, first) {
			t.Fatal("--force did not replace the file")
		}
	})

	t.Run("saves inspect of something else shows none of it", func(t *testing.T) {
		secret := filepath.Join(dir, "passwd")
		os.WriteFile(secret, []byte("root:hunter2-secret:0:0::/root:/bin/sh\n"), 0o600)
		code, out := runTool(t, bin, "saves", "inspect", secret)
		if code != cliutil.ExitFailure || !strings.Contains(out, "not a lockhost save") || strings.Contains(out, "hunter2") || strings.Contains(out, "root:") {
			t.Fatalf("exit %d: %s", code, out)
		}
	})

	t.Run("an unwritable save folder stops the host at start", func(t *testing.T) {
		notDir := filepath.Join(dir, "plain-file")
		os.WriteFile(notDir, []byte("x"), 0o644)
		for _, save := range []string{filepath.Join(notDir, "c"+saves.Ext), filepath.Join(dir, "missing", "c"+saves.Ext)} {
			code, out := runTool(t, bin, append(append([]string{"serve", "--data-dir", data}, smallWorld...), "--save", save, "--new")...)
			if code != cliutil.ExitUsage || !strings.Contains(out, "--save "+save) {
				t.Fatalf("%s: exit %d: %s", save, code, out)
			}
		}
	})

	t.Run("a failed final save exits non-zero and names the newest good save", func(t *testing.T) {
		sub := filepath.Join(dir, "sub")
		os.Mkdir(sub, 0o755)
		save := filepath.Join(sub, "c"+saves.Ext)
		h := startServe(t, bin, data, "--save", save, "--new", "--autosave", "100ms")
		h.waitFor(t, "an autosave", func() bool {
			autos, _ := saves.Autosaves(save)
			return len(autos) >= 1
		})
		// The save cannot be renamed into place: a folder took its name.
		// (Tests may run as root, which ignores read-only modes.)
		if err := os.MkdirAll(filepath.Join(save, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		code := h.stop(t)
		log := h.log.String()
		autos, _ := saves.Autosaves(save)
		if code != cliutil.ExitSaveFailed || !strings.Contains(log, "the final save to "+save+" failed") ||
			len(autos) == 0 || !strings.Contains(log, "the newest good save is "+autos[0]) {
			t.Fatalf("exit %d, want %d with the reason and the newest autosave:\n%s", code, cliutil.ExitSaveFailed, log)
		}
		if strings.Contains(log, `msg="host stopped"`) {
			t.Fatalf("the log says the host stopped cleanly:\n%s", log)
		}
	})
}

// listFiles maps each save name in dir ("colony") to its files there.
func listFiles(t *testing.T, dir string) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		if name, _, ok := strings.Cut(e.Name(), "."); ok && !e.IsDir() {
			out[name] = append(out[name], e.Name())
		}
	}
	return out
}

func equalFiles(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return true
}
