package relay

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoGame holds the package to its purpose: a relay host links no
// game code, so nothing under game/ (colony, its content, the host's view
// of content) nor the test game may be among its dependencies.
func TestLinksNoGame(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list gave %d dependencies: too few to mean anything", len(deps))
	}
	const module = "github.com/lockhost/lockhost/"
	for _, game := range []string{"game", "lockstep/locksteptest"} {
		for _, d := range deps {
			if d == module+game || strings.HasPrefix(d, module+game+"/") {
				t.Errorf("package relay links %s, a game package", d)
			}
		}
	}
}
