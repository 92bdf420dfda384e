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
// parent. The game does not look there and loads the child as written, the
// same on both sides: diff answers "the same" (exit 0), naming no
// difference and no def as not compared, and warns about the parent.
func TestDefsDiffParentInLaterMod(t *testing.T) {
	a, b := filepath.Join(loaderFixtures, "laterparent", "A"), filepath.Join(loaderFixtures, "laterparent", "B")
	code, out, errOut := runDefs(t, "diff", "--warnings", a, b)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "have the same mods and def databases") {
		t.Errorf("stdout does not say the same:\n%s", out)
	}
	for _, w := range []string{"different content", "not in the scan", "not everything"} {
		if strings.Contains(out, w) {
			t.Errorf("stdout says %q:\n%s", w, out)
		}
	}
	if !strings.Contains(errOut, `parent "LaterBase" is only in mod test.parent (Defs/Base.xml:2), loaded after this one`) {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}
}

// TestDefsDiffParentTheGameDoesNotUse runs "defs diff" on content and on
// exported manifests whose child's parent is one the game does not use:
// only in a later mod, or with a MayRequire that is not met. The sides
// differ only in that parent, so the answer is "the same" (exit 0); it is
// "undecided" (exit 3) only where it turns on a mod not declared (Royalty,
// with different parents on the sides).
func TestDefsDiffParentTheGameDoesNotUse(t *testing.T) {
	later := func(side string) string { return filepath.Join(loaderFixtures, "laterparent", side) }
	gated := func(side string) string { return filepath.Join(loaderFixtures, "gatedparent", side, "mod") }
	dir := t.TempDir()
	export := func(name string, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name+".json")
		if code, _, errOut := runDefs(t, append(append([]string{"export"}, args...), "-o", out)...); code != 0 {
			t.Fatalf("export %s: exit %d\n%s", name, code, errOut)
		}
		return out
	}
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"later-mod parent, content", []string{later("A"), later("B")}, 0},
		{"later-mod parent, manifests", []string{export("later-A", later("A")), export("later-B", later("B"))}, 0},
		{"parent's MayRequire not met, content", []string{"--active", "none", gated("A"), gated("B")}, 0},
		{"parent's MayRequire not met, manifests", []string{export("gated-A", "--active", "none", gated("A")), export("gated-B", "--active", "none", gated("B"))}, 0},
		{"parent's MayRequire undeclared, same sides", []string{gated("A"), gated("A")}, 0},
		{"parent's MayRequire undeclared, different parents", []string{gated("A"), gated("B")}, 3},
		{"parent's MayRequire met, different parents", []string{"--active", "Ludeon.RimWorld.Royalty", gated("A"), gated("B")}, 1},
	} {
		code, out, errOut := runDefs(t, append([]string{"diff"}, c.args...)...)
		if code != c.want {
			t.Errorf("%s: exit %d, want %d\n%s\n%s", c.name, code, c.want, out, errOut)
		}
	}
}

// TestDefsDiffDecidesMayRequire: a mod holds a Crate with
// MayRequire="Ludeon.RimWorld.Royalty" and, after it, a plain Crate; the
// sides differ only in the plain one. With Royalty active the game keeps
// the mod's first Crate (the same on both sides), without it the plain
// one (different): the answer turns on Royalty, so diff says so (exit 3)
// and names the difference in the case where there is one. Compared with
// itself the side loads the same whether or not Royalty is active, which
// is an answer (exit 0), not "undecided".
func TestDefsDiffDecidesMayRequire(t *testing.T) {
	a, b := filepath.Join(loaderFixtures, "gatedfirst", "A", "mod"), filepath.Join(loaderFixtures, "gatedfirst", "B", "mod")
	code, out, errOut := runDefs(t, "diff", a, b)
	if code != 3 {
		t.Fatalf("A vs B: exit %d, want 3\n%s\n%s", code, out, errOut)
	}
	inactive := strings.Index(out, "If ludeon.rimworld.royalty is not active:")
	active := strings.Index(out, "If ludeon.rimworld.royalty is active:")
	changed := strings.Index(out, "ThingDef Crate (mod test.crates, file Defs/Crates.xml) has different content, first at label.")
	if !strings.Contains(out, "Whether A ("+a+") and B ("+b+") differ depends on ludeon.rimworld.royalty") || inactive < 0 || active < 0 || changed < inactive {
		t.Errorf("A vs B: the report does not name the difference without Royalty:\n%s", out)
	}
	if strings.Count(out, "different content") != 1 {
		t.Errorf("A vs B: want exactly one difference named:\n%s", out)
	}
	code, out, errOut = runDefs(t, "diff", a, a)
	if code != 0 {
		t.Fatalf("A vs A: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "whether or not ludeon.rimworld.royalty is active") {
		t.Errorf("A vs A: stdout does not say why it is decided:\n%s", out)
	}
	// Declared, the question does not arise.
	if code, out, _ = runDefs(t, "diff", "--active", "none", a, b); code != 1 || !strings.Contains(out, "first at label") {
		t.Errorf("--active none: exit %d, want 1 naming the label:\n%s", code, out)
	}
}

// TestDefsDiffGatedInSubfolder: the plain Crate is in Defs/Things.xml,
// the Royalty-only one in Defs/Royalty/Crates.xml, and the sides differ in
// the plain one. The game reads a folder's own files before its
// subfolders', so the plain Crate is loaded whether or not Royalty is
// active: diff names the difference (exit 1) instead of "needs Royalty".
func TestDefsDiffGatedInSubfolder(t *testing.T) {
	a, b := filepath.Join(loaderFixtures, "subfolder", "A", "mod"), filepath.Join(loaderFixtures, "subfolder", "B", "mod")
	code, out, errOut := runDefs(t, "diff", a, b)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "ThingDef Crate (mod test.crates, file Defs/Things.xml) has different content, first at label.") || strings.Contains(out, "needs") || strings.Contains(out, "If ") {
		t.Errorf("stdout:\n%s", out)
	}
}
