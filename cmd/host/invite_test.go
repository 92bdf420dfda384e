package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/transport/coord"
)

// TestInviteEndToEnd runs the real tools over loopback: a coordinator
// with a self-signed certificate, a host with TLS that registers with it,
// and a joiner that reaches WorldReady by the invite code alone, pins the
// host's certificate as the coordinator gave it, and is counted. A
// restarted host keeps its code; a joiner whose pin the coordinator
// contradicts is refused.
func TestInviteEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tools")
	}
	dir := t.TempDir()
	hostBin, joinBin := buildHostAndJoin(t, dir)
	co := runHost(t, hostBin, "coordinator", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "coord"))
	co.waitLog(t, "coordinator ready")
	url := regexp.MustCompile(`url=(https://\S+)`).FindStringSubmatch(co.log.String())[1]

	serve := []string{"serve", "--listen", "127.0.0.1:0", "--tls", "--coordinator", url, "--maps", "2", "--map-size", "64",
		"--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1"}
	h := runHost(t, hostBin, serve...)
	code := waitInvite(t, h, url)

	known := filepath.Join(dir, "known_hosts")
	start := time.Now()
	status, stdout, stderr := runSplit(t, joinBin, code, "--coordinator", url, "--name", "Alice", "--exit-after-ready",
		"--no-input", "--quiet", "--known-hosts", known)
	if status != cliutil.ExitOK || !strings.Contains(stdout, "WorldReady") {
		t.Fatalf("join %s: exit %d\n%s\n%s\nhost:\n%s", code, status, stdout, stderr, h.log.String())
	}
	t.Logf("join %s reached WorldReady in %v", code, time.Since(start).Round(time.Millisecond))
	if !strings.Contains(stderr, "reached the host of "+code+": lan") {
		t.Errorf("join does not say how it reached the host:\n%s", stderr)
	}
	kh, _ := os.ReadFile(known)
	fp := regexp.MustCompile(`TLS certificate fingerprint: (\S+)`).FindStringSubmatch(h.log.String())
	if fp == nil || string(kh) != code+":invite "+fp[1]+"\n" {
		t.Errorf("known hosts after the join: %q; the host's fingerprint %v", kh, fp)
	}
	if m := coordinatorMetric(t, url, `lockhost_coordinator_connect_attempts_total{outcome="lan"}`); m != "1" {
		t.Errorf("the coordinator counted %s lan connection attempts, want 1", m)
	}

	// The host restarts: the same code.
	h.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-h.done; err != nil {
		t.Fatalf("host after SIGTERM: %v", err)
	}
	h.done <- nil
	h2 := runHost(t, hostBin, serve...)
	if again := waitInvite(t, h2, url); again != code {
		t.Fatalf("the restarted host's code is %s, was %s", again, code)
	}

	// A pin the coordinator contradicts: refused before any connection.
	os.WriteFile(known, []byte(code+":invite sha256:"+strings.Repeat("0", 64)+"\n"), 0o600)
	status, _, stderr = runSplit(t, joinBin, code, "--coordinator", url, "--name", "Bob", "--exit-after-ready", "--no-input", "--quiet", "--known-hosts", known)
	if status != cliutil.ExitRejected || !strings.Contains(stderr, "WARNING: the coordinator says "+code+" has certificate "+fp[1]) {
		t.Fatalf("a joiner that pinned another certificate: exit %d\n%s", status, stderr)
	}
}

// waitInvite waits for the host's invite and returns its code.
func waitInvite(t *testing.T, h *hostRun, url string) string {
	t.Helper()
	re := regexp.MustCompile(`invite code (\+\w+); a friend joins with:\n  join (\+\w+) --coordinator (\S+)\n`)
	h.waitFor(t, "the invite code", func() bool { return re.MatchString(h.log.String()) })
	m := re.FindStringSubmatch(h.log.String())
	if _, err := coord.ParseCode(m[1]); err != nil || m[2] != m[1] || m[3] != url {
		t.Fatalf("invite line: %q", m[0])
	}
	return m[1]
}

// runSplit runs bin and returns its exit code, standard output and
// standard error, within 60 s.
func runSplit(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut syncbuf.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer timer.Stop()
	return exitCode(t, cmd.Wait()), out.String(), errOut.String()
}

// coordinatorMetric reads one sample of the coordinator's /metrics.
func coordinatorMetric(t *testing.T, url, sample string) string {
	t.Helper()
	base, _, _ := strings.Cut(url, "#")
	// The coordinator's certificate is self-signed; this test reads its
	// own coordinator's counters.
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 10 * time.Second}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := c.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, sample+" "); ok && (v != "0" || time.Now().After(deadline)) {
				return v
			}
		}
		if time.Now().After(deadline) {
			return "none"
		}
	}
}
