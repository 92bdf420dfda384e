package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/testing/turntest"
)

// TestInviteOverICE runs the real tools over loopback with a host whose
// game port no joiner by code may use: it registers no address with the
// coordinator, so `join +CODE` reaches WorldReady through the
// coordinator's signalling and ICE, directly over host candidates; and,
// with coturn, or the coordinator's own TURN server (--turn-embedded),
// and both tools asked for a relay only, through TURN over UDP. The joiner names the path and its connect time; the host's status
// page shows the path of the join and its metrics count the attempt.
func TestInviteOverICE(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tools")
	}
	dir := t.TempDir()
	hostBin, joinBin := buildHostAndJoin(t, dir)
	for _, c := range []struct {
		name  string
		turn  bool     // run coturn and hand it out
		embed bool     // the coordinator runs its own TURN server and hands it out
		flags []string // for both tools
		path  string
	}{
		{name: "direct", path: "direct"},
		{name: "turn-udp", turn: true, flags: []string{"--relay-only"}, path: "turn-udp"},
		{name: "embedded-turn", embed: true, flags: []string{"--relay-only"}, path: "turn-udp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			coArgs := []string{"coordinator", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "coord")}
			if c.turn {
				ts := turntest.Start(t)
				secret := filepath.Join(dir, "turn.secret")
				os.WriteFile(secret, []byte(turntest.Secret+"\n"), 0o600)
				coArgs = append(coArgs, "--turn-url", ts.URL("udp"), "--turn-secret-file", secret)
			}
			if c.embed {
				coArgs = append(coArgs, "--turn-embedded", "127.0.0.1:0", "--turn-allow-private-peers")
			}
			co := runHost(t, hostBin, coArgs...)
			co.waitLog(t, "coordinator ready")
			url := regexp.MustCompile(`url=(https://\S+)`).FindStringSubmatch(co.log.String())[1]

			serve := append([]string{"serve", "--listen", "127.0.0.1:0", "--tls", "--coordinator", url, "--maps", "2", "--map-size", "64",
				"--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1", "--http", "127.0.0.1:0", "--debug-invite-no-addrs"}, c.flags...)
			h := runHost(t, hostBin, serve...)
			code := waitInvite(t, h, url)
			page := waitStatusPage(t, h.log, h.done)

			start := time.Now()
			status, stdout, stderr := runSplit(t, joinBin, append([]string{code, "--coordinator", url, "--name", "Alice", "--exit-after-ready",
				"--no-input", "--quiet", "--known-hosts", filepath.Join(dir, "known_hosts")}, c.flags...)...)
			if status != cliutil.ExitOK || !strings.Contains(stdout, "WorldReady") {
				t.Fatalf("join %s: exit %d\n%s\n%s\nhost:\n%s", code, status, stdout, stderr, h.log.String())
			}
			m := regexp.MustCompile(`reached the host of ` + regexp.QuoteMeta(code) + `: (\S+), connected in (\S+)`).FindStringSubmatch(stderr)
			if m == nil || m[1] != c.path {
				t.Fatalf("join does not say it reached the host by %s:\n%s", c.path, stderr)
			}
			t.Logf("join %s over %s: connected in %s, WorldReady after %v", code, m[1], m[2], time.Since(start).Round(time.Millisecond))

			if got := joinPath(t, page, "Alice"); got != c.path {
				t.Errorf("the status page shows Alice's join by %q, want %q", got, c.path)
			}
			if n := hostMetric(t, page, `lockhost_connect_attempts_total{outcome="`+c.path+`"}`); n != "1" {
				t.Errorf("the host counted %s attempts by %s, want 1", n, c.path)
			}
			// Alice left right after WorldReady: her attempt is joined, or
			// left when her leave came first.
			if n := hostMetricSum(t, page, "lockhost_joins_by_path_total", `path="`+c.path+`"`); n != 1 {
				t.Errorf("the host counted %v join attempts by %s, want 1", n, c.path)
			}
			if n := coordinatorMetric(t, url, `lockhost_coordinator_connect_attempts_total{outcome="`+c.path+`"}`); n != "1" {
				t.Errorf("the coordinator counted %s attempts by %s, want 1", n, c.path)
			}
		})
	}
}

// joinPath is the path of name's latest join on the status page.
func joinPath(t *testing.T, page, name string) string {
	t.Helper()
	resp, err := http.Get(page + "api/overview")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var o struct {
		Joins []struct {
			Name, Path string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil {
		t.Fatal(err)
	}
	for _, j := range o.Joins {
		if j.Name == name {
			return j.Path
		}
	}
	return "no join"
}

// hostMetric reads one sample of the host's /metrics, waiting up to 10 s
// for it to be other than 0.
func hostMetric(t *testing.T, page, sample string) string {
	t.Helper()
	got := "none"
	pollMetrics(t, page, func(lines []string) bool {
		for _, line := range lines {
			if v, ok := strings.CutPrefix(line, sample+" "); ok {
				got = v
			}
		}
		return got != "none" && got != "0"
	})
	return got
}

// hostMetricSum sums the samples of the host's metric name that have
// label, waiting up to 10 s for the sum to be other than 0.
func hostMetricSum(t *testing.T, page, name, label string) float64 {
	t.Helper()
	var sum float64
	pollMetrics(t, page, func(lines []string) bool {
		sum = 0
		for _, line := range lines {
			if strings.HasPrefix(line, name+"{") && strings.Contains(line, label) {
				var v float64
				fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
				sum += v
			}
		}
		return sum != 0
	})
	return sum
}

// pollMetrics hands the lines of the host's /metrics to done every 50 ms
// until done returns true or 10 s have passed.
func pollMetrics(t *testing.T, page string, done func(lines []string) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(page + "metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if done(strings.Split(string(b), "\n")) {
			return
		}
	}
}
