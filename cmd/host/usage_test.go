package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/wire"
)

// TestBinaryUsageMistakes runs the built host tool: every usage mistake
// exits 2 with at most two lines and no help text, before any world is
// generated; --version names the protocol.
func TestBinaryUsageMistakes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tool")
	}
	dir := t.TempDir()
	bin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/host")
	data := filepath.Join(dir, "data")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, cliutil.ExitUsage, "give a command: serve, coordinator, saves, desyncs, replay, defs"},
		{"unknown command", []string{"sever"}, cliutil.ExitUsage, `unknown command "sever"`},
		{"unknown subcommand", []string{"saves", "lsit"}, cliutil.ExitUsage, `unknown command "saves lsit"`},
		{"group without a command", []string{"desyncs"}, cliutil.ExitUsage, "give a command of desyncs"},
		{"unknown flag", []string{"serve", "--lisen", ":1"}, cliutil.ExitUsage, "lisen"},
		{"missing flag value", []string{"serve", "--listen"}, cliutil.ExitUsage, "listen"},
		{"bad port", []string{"serve", "--listen", ":99999", "--data-dir", data}, cliutil.ExitUsage, "port"},
		{"no port", []string{"serve", "--listen", "localhost", "--data-dir", data}, cliutil.ExitUsage, "HOST:PORT"},
		{"bad status port", []string{"serve", "--listen", "127.0.0.1:0", "--http", "99999", "--data-dir", data}, cliutil.ExitUsage, "99999"},
		{"missing password file", []string{"serve", "--password-file", filepath.Join(dir, "nope"), "--data-dir", data}, cliutil.ExitUsage, "password file"},
		{"defs manifest without relay", []string{"serve", "--defs-manifest", filepath.Join(dir, "defs.json"), "--data-dir", data}, cliutil.ExitUsage, "--defs-manifest needs --relay"},
		{"defs from the arbiter and content", []string{"serve", "--relay", "--defs-from-arbiter", "--content", dir, "--data-dir", data}, cliutil.ExitUsage, "--defs-from-arbiter replaces --content"},
		{"defs from two places", []string{"serve", "--relay", "--defs-from-arbiter", "--defs-manifest", filepath.Join(dir, "defs.json"), "--data-dir", data}, cliutil.ExitUsage, "not both"},
		{"upload rate too low", []string{"serve", "--max-upload-rate", "10", "--data-dir", data}, cliutil.ExitUsage, "--max-upload-rate 10 is refused"},
		{"upload rate not a rate", []string{"serve", "--max-upload-rate", "fast", "--data-dir", data}, cliutil.ExitUsage, `"fast" is not a rate`},
		{"no upload slots", []string{"serve", "--max-upload-slots", "0", "--data-dir", data}, cliutil.ExitUsage, "max-upload-slots"},
		{"holding back without sharing", []string{"serve", "--share-content-except", "a.mod", "--data-dir", data}, cliutil.ExitUsage, "--share-content-except needs --share-content"},
		{"sharing the embedded content", []string{"serve", "--listen", "127.0.0.1:0", "--share-content", "--data-dir", data}, cliutil.ExitUsage, "--share-content shares mods loaded from folders"},
		{"embedded TURN on all interfaces without a relay IP", []string{"coordinator", "--listen", "127.0.0.1:0", "--turn-embedded", ":0", "--data-dir", data}, cliutil.ExitUsage, "give --turn-relay-ip"},
		{"embedded TURN relay IP not an IP", []string{"coordinator", "--listen", "127.0.0.1:0", "--turn-embedded", ":0", "--turn-relay-ip", "turn.example.org", "--data-dir", data}, cliutil.ExitUsage, `--turn-relay-ip "turn.example.org"`},
		{"relay IP without embedded TURN", []string{"coordinator", "--listen", "127.0.0.1:0", "--turn-relay-ip", "198.51.100.7", "--data-dir", data}, cliutil.ExitUsage, "need --turn-embedded"},
		{"embedded TURN with no allocations", []string{"coordinator", "--turn-embedded", "127.0.0.1:0", "--turn-max-allocations", "0", "--data-dir", data}, cliutil.ExitUsage, "turn-max-allocations"},
		{"version", []string{"--version"}, cliutil.ExitOK, "protocol " + strconv.Itoa(int(wire.ProtocolVersion))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &out, &errOut
			cmd.Env = append(os.Environ(), cliutil.PasswordEnv+"=")
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errOut.String())
			}
			where := errOut.String()
			if code == 0 {
				where = out.String()
			}
			if !strings.Contains(where, tc.want) {
				t.Fatalf("no %q in\nstdout: %s\nstderr: %s", tc.want, out.String(), errOut.String())
			}
			if code != 0 {
				msg := strings.TrimRight(errOut.String(), "\n")
				if n := strings.Count(msg, "\n") + 1; n > 2 {
					t.Errorf("%d lines on stderr, want at most 2:\n%s", n, msg)
				}
				if strings.Contains(msg, "USAGE") || strings.Contains(msg, "world generated") {
					t.Errorf("a help dump or a started host:\n%s", msg)
				}
			}
		})
	}
}
