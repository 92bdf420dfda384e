package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
)

// loaderFixtures holds small mod trees reproducing RimWorld 1.6 loader
// rules seen on real mods.
const loaderFixtures = "../../defs/testdata/loader16"

// runDefs runs "host defs …" through the tool's own app and exit-code
// mapping.
func runDefs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	code := cliutil.Run(app, append([]string{"host", "defs"}, args...), &errOut, nil)
	return code, out.String(), errOut.String()
}

// TestDefsDiffParentInLaterMod: the child's parent name exists only in a
// mod loaded after the child's, and the two sides differ only in that
// parent. The game does not look there, so the child loads the same on
// both sides: diff must not name it as changed. The parent could still be
// in an unscanned mod loaded before (Core, a DLC), so the answer is "no
// difference, not everything compared" (exit 3).
func TestDefsDiffParentInLaterMod(t *testing.T) {
	a, b := filepath.Join(loaderFixtures, "laterparent", "A"), filepath.Join(loaderFixtures, "laterparent", "B")
	code, out, errOut := runDefs(t, "diff", "--warnings", a, b)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, out, errOut)
	}
	for _, w := range []string{"No difference found", `ThingDef Widget (mod test.child): parent "LaterBase"`} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "different content") {
		t.Errorf("stdout names a difference:\n%s", out)
	}
	if !strings.Contains(errOut, `parent "LaterBase" is only in mod test.parent (Defs/Base.xml:2), loaded after this one`) {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}
}
