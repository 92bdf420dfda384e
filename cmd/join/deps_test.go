package main

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/lockhost/lockhost/"

// hostSide are the packages (and everything under them) that only a host
// runs: the session, its saves, desync reports, the roster, the status
// page and metrics, the admin commands and RCON, the host's view of game
// content, and the recorder of a real session. The join tool must not link
// any of them.
var hostSide = []string{
	"host", // host/roster and host/relay included
	"operator/admin",
	"operator/rcon",
	"saves",
	"desync",
	"operator/web",
	"operator/metrics",
	"game/hostcontent",
	"testing/corpus",
}

// hostSideDeps lists the host-side packages among deps (import paths).
func hostSideDeps(deps []string) []string {
	var bad []string
	for _, d := range deps {
		rel, ok := strings.CutPrefix(d, module)
		if !ok {
			continue
		}
		for _, h := range hostSide {
			if rel == h || strings.HasPrefix(rel, h+"/") {
				bad = append(bad, rel)
			}
		}
	}
	return bad
}

func TestHostSideDepsMatcher(t *testing.T) {
	tests := []struct {
		dep  string
		want bool
	}{
		{module + "host", true},
		{module + "saves/savestest", true},
		{module + "game/hostcontent", true},
		{module + "hostname", false},
		{module + "join", false},
		{module + "game/content", false},
		{"example.com/other/host", false},
	}
	for _, tc := range tests {
		if got := len(hostSideDeps([]string{tc.dep})) == 1; got != tc.want {
			t.Errorf("%s: host-side %v, want %v", tc.dep, got, tc.want)
		}
	}
}

// TestNoHostSideDeps builds the join tool's dependency list with the go
// tool, for this OS and for Windows, and fails if it holds a host-side
// package.
func TestNoHostSideDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	for _, goos := range []string{"", "windows"} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".")
		cmd.Env = os.Environ()
		if goos != "" {
			cmd.Env = append(cmd.Env, "GOOS="+goos)
		}
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			t.Fatalf("go list (GOOS=%q): %v\n%s", goos, err, stderr)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, module+"join") || !slices.Contains(deps, module+"cmd/join") {
			t.Fatalf("go list (GOOS=%q) did not list the join tool and package: %v", goos, deps)
		}
		if bad := hostSideDeps(deps); len(bad) > 0 {
			t.Errorf("the join tool (GOOS=%q) links host-side packages %v; go list -deps ./cmd/join shows through which imports", goos, bad)
		}
	}
}
