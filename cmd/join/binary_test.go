package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// buildTools compiles the join and host tools into a temporary folder.
func buildTools(t *testing.T) (joinBin, hostBin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the tools")
	}
	bins := procstat.BuildTools(t, "github.com/lockhost/lockhost/cmd/join", "github.com/lockhost/lockhost/cmd/host")
	return bins[0], bins[1]
}

// startHostBin runs the host tool with args until the test ends and waits
// for it to accept players. Its log and game address are returned.
func startHostBin(t *testing.T, bin string, args ...string) (*syncbuf.Buffer, string) {
	t.Helper()
	var log syncbuf.Buffer
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--maps", "1", "--map-size", "64", "--conn-rate", "-1",
		"--data-dir", t.TempDir()}, args...)...)
	cmd.Stderr = &log
	// The host picks its port: one picked here and closed again could be
	// taken by another test before the host binds it.
	m := procstat.StartUntil(t, cmd, &log, regexp.MustCompile(`msg=hosting addr=(\S+)`), 60*time.Second)
	return &log, m[1]
}

// runBin runs the join tool and returns its exit code, stdout and stderr.
func runBin(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(os.Environ(), cliutil.PasswordEnv+"=")
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("run join: %v", err)
	return 0, "", ""
}

// TestBinaryExitCodes runs the built join tool: every usage mistake exits
// 2 with at most two lines and no help text, TLS on one side only exits 4
// naming the fix, --version names the protocol, and --exit-after-ready
// leaves so the host logs a leave, not a drop.
func TestBinaryExitCodes(t *testing.T) {
	joinBin, hostBin := buildTools(t)
	plainLog, plain := startHostBin(t, hostBin)
	_, secure := startHostBin(t, hostBin, "--tls")
	kh := filepath.Join(t.TempDir(), "known_hosts")

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stderr, or stdout for code 0
	}{
		{"unknown flag", []string{plain, "--name", "Alice", "--nmae", "x"}, cliutil.ExitUsage, "nmae"},
		{"missing flag value", []string{"--name"}, cliutil.ExitUsage, "name"},
		{"missing host", []string{"--name", "Alice"}, cliutil.ExitUsage, "give the host"},
		{"missing name", []string{plain}, cliutil.ExitUsage, "--name"},
		{"missing password file", []string{plain, "--name", "Alice", "--password-file", filepath.Join(t.TempDir(), "nope")}, cliutil.ExitUsage, "password file"},
		{"bad port", []string{"127.0.0.1:99999", "--name", "Alice"}, cliutil.ExitUsage, "port"},
		{"bad port to ping", []string{"ping", "127.0.0.1:http"}, cliutil.ExitUsage, "port"},
		{"unknown subcommand", []string{"defs", "nosuch"}, cliutil.ExitUsage, `unknown command "defs nosuch"`},
		{"subcommand missing", []string{"defs"}, cliutil.ExitUsage, "give a command of defs"},
		{"host wants TLS", []string{secure, "--name", "Alice", "-q", "--no-reconnect"}, cliutil.ExitNetwork, "the host speaks TLS; add --tls"},
		{"host wants TLS, no retry", []string{secure, "--name", "Alice", "-q"}, cliutil.ExitNetwork, "the host speaks TLS; add --tls"},
		{"host has no TLS", []string{plain, "--name", "Alice", "-q", "--tls", "--known-hosts", kh}, cliutil.ExitNetwork, "the host does not speak TLS"},
		{"version", []string{"--version"}, cliutil.ExitOK, "protocol " + strconv.Itoa(int(wire.ProtocolVersion))},
		{"exit after ready", []string{plain, "--name", "Alice", "-q", "--exit-after-ready"}, cliutil.ExitOK, "WorldReady"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runBin(t, joinBin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			where := errOut
			if code == 0 {
				where = out
			}
			if !strings.Contains(where, tc.want) {
				t.Fatalf("no %q in the output\nstdout: %s\nstderr: %s", tc.want, out, errOut)
			}
			if code != 0 {
				if n := strings.Count(strings.TrimRight(errOut, "\n"), "\n") + 1; n > 2 {
					t.Errorf("%d lines on stderr, want at most 2:\n%s", n, errOut)
				}
				if strings.Contains(errOut, "USAGE") || strings.Contains(errOut, "OPTIONS") {
					t.Errorf("a help dump:\n%s", errOut)
				}
			}
		})
	}
	// Alice left on purpose: one leave in the host's log, no drop.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(plainLog.String(), `msg="player left"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no leave in the host's log:\n%s", plainLog.String())
		}
	}
	if strings.Contains(plainLog.String(), `msg="player dropped"`) {
		t.Fatalf("the host logged a drop:\n%s", plainLog.String())
	}
}
