package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// buildTool compiles one of the repository's commands into dir.
func buildTool(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin, err := procstat.BuildTool(dir, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildHostAndJoin builds the host and join tools into dir.
func buildHostAndJoin(t *testing.T, dir string) (hostBin, joinBin string) {
	t.Helper()
	hostBin, joinBin, err := procstat.BuildHostAndJoin(dir)
	if err != nil {
		t.Fatal(err)
	}
	return hostBin, joinBin
}

// TestSIGTERMClosesGracefully runs the real host and join tools: a player
// joins, the host gets SIGTERM, and then the player must be told the host
// is closing (exit 3 with that sentence), the host must write its final
// save, which loads, and exit 0.
func TestSIGTERMClosesGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tools")
	}
	dir := t.TempDir()
	hostBin, joinBin := buildHostAndJoin(t, dir)
	save := filepath.Join(dir, "world.lhsave")
	h := runHost(t, hostBin, "serve", "--listen", "127.0.0.1:0", "--save", save, "--new", "--autosave", "-1s",
		"--maps", "2", "--map-size", "64", "--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1", "--http", "127.0.0.1:0")
	hostCmd, hostErr, hostDone := h.cmd, h.log, h.done
	status := waitStatusPage(t, hostErr, hostDone)
	addr := hostingAddr(t, hostErr)

	joinCmd := exec.Command(joinBin, addr, "--name", "Alice", "--no-input", "--no-reconnect")
	stdout, err := joinCmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var joinErr syncbuf.Buffer
	joinCmd.Stderr = &joinErr
	if err := joinCmd.Start(); err != nil {
		t.Fatal(err)
	}
	joinDone := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.HasPrefix(sc.Text(), "WorldReady") {
				close(ready)
				signalled = true
			}
		}
		joinDone <- joinCmd.Wait()
	}()
	t.Cleanup(func() { _ = joinCmd.Process.Kill() })
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("join did not reach WorldReady:\n%s", joinErr.String())
	}

	// Let the session run a while, so the final save has ticks to show.
	var seen uint64
	for deadline := time.Now().Add(20 * time.Second); seen < 30; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the host's tick is still %d after 20 s:\n%s", seen, hostErr.String())
		}
		seen = readOverview(t, status).Tick
	}

	if err := hostCmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-hostDone:
		if err != nil {
			t.Fatalf("host exited with %v after SIGTERM:\n%s", err, hostErr.String())
		}
		hostDone <- err // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatalf("host still running 20 s after SIGTERM:\n%s", hostErr.String())
	}
	select {
	case err := <-joinDone:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != cliutil.ExitRejected {
			t.Fatalf("join ended with %v, want exit %d", err, cliutil.ExitRejected)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("join still running after the host closed")
	}
	if want := wire.ReasonServerClosing.Sentence(); !strings.Contains(joinErr.String(), want) {
		t.Errorf("join's stderr %q lacks %q", joinErr.String(), want)
	}
	if !strings.Contains(hostErr.String(), "final=true") {
		t.Errorf("host log lacks the final save:\n%s", hostErr.String())
	}
	f, err := saves.Read(save)
	if err != nil {
		t.Fatalf("final save: %v", err)
	}
	if f.Meta.Tick < seen {
		t.Errorf("final save at tick %d, but the host was at tick %d before SIGTERM; host log:\n%s", f.Meta.Tick, seen, hostErr.String())
	}
	t.Logf("final save at tick %d, %d bytes", f.Meta.Tick, f.Size)
	if left, _ := filepath.Glob(filepath.Join(dir, ".world.lhsave.tmp-*")); len(left) > 0 {
		t.Errorf("temporary save files left behind: %v", left)
	}
}

// waitStatusPage waits until the host's log shows its status page and that
// it is hosting, and returns the page's URL (ending in "/"). It fails the
// test if the host exits first (giving its error back to done) or takes
// over 30 s.
func waitStatusPage(t *testing.T, log *syncbuf.Buffer, done chan error) string {
	t.Helper()
	page := regexp.MustCompile(`msg="status page" url=(http://\S+/)`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := page.FindStringSubmatch(log.String()); m != nil && strings.Contains(log.String(), "hosting") {
			return m[1]
		}
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("host exited (%v) before its status page was up:\n%s", err, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status page after 30 s:\n%s", log.String())
		}
	}
}

// hostingAddr returns the game address the host's log says it is hosting
// on. The host is given port 0 and picks one itself: a port picked by the
// test and closed again could be taken before the host binds it (by the
// host's own status page among others).
func hostingAddr(t *testing.T, log *syncbuf.Buffer) string {
	t.Helper()
	m := regexp.MustCompile(`msg=hosting addr=(\S+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no hosting address in the host's log:\n%s", log.String())
	}
	return m[1]
}

// overview is what the tests read of the status page's JSON overview.
type overview struct {
	Tick  uint64 `json:"tick"`
	Speed int    `json:"speed"`
}

// readOverview reads the session's overview from the status page.
func readOverview(t *testing.T, page string) overview {
	t.Helper()
	resp, err := http.Get(page + "api/overview")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %sapi/overview: %s", page, resp.Status)
	}
	var o overview
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil {
		t.Fatalf("GET %sapi/overview: %v", page, err)
	}
	return o
}
