package defscli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mayRequireSides writes case 10 of the content bugs: two sides whose first
// mod has a plain Widget that differs between them, and whose second mod
// has a Widget of its own that the game loads only with Biotech active.
func mayRequireSides(t *testing.T) (a, b string) {
	t.Helper()
	dir := t.TempDir()
	for side, mass := range map[string]string{"a": "1", "b": "2"} {
		writeTree(t, filepath.Join(dir, side), map[string]string{
			"m1/About/About.xml":  about("test.one"),
			"m1/Defs/Things.xml":  defsFile(`<ThingDef><defName>Widget</defName><mass>` + mass + `</mass></ThingDef>`),
			"m2/About/About.xml":  about("test.two"),
			"m2/Defs/Biotech.xml": defsFile(`<ThingDef MayRequire="Ludeon.RimWorld.Biotech"><defName>Widget</defName><mass>9</mass></ThingDef>`),
		})
	}
	return filepath.Join(dir, "a"), filepath.Join(dir, "b")
}

// TestDiffMayRequireUndecided: without saying which DLCs are active,
// diff cannot know whether the game loads the Widget that needs Biotech
// (the sides are the same then) or not (they differ): it must not say
// "same".
func TestDiffMayRequireUndecided(t *testing.T) {
	a, b := mayRequireSides(t)
	code, out, errOut := run(t, "diff", a, b)
	if code != ExitIncomplete {
		t.Fatalf("diff exit %d, want %d (undecided)\nstdout:\n%s\nstderr:\n%s", code, ExitIncomplete, out, errOut)
	}
	if !strings.Contains(out, "ludeon.rimworld.biotech") {
		t.Errorf("the report does not name the mod whose state is unknown:\n%s", out)
	}
}

// TestDiffMayRequireDeclared: with the active DLCs declared, diff answers
// as the game loads: without Biotech the first mod's Widgets are loaded
// and differ; with it the second mod's Widget replaces them on both sides.
func TestDiffMayRequireDeclared(t *testing.T) {
	a, b := mayRequireSides(t)
	code, out, errOut := run(t, "diff", "--active", "none", a, b)
	want := "ThingDef Widget (mod test.one, file Defs/Things.xml) has different content, first at mass."
	if code != ExitDifferent || !strings.Contains(out, want) {
		t.Fatalf("--active none: exit %d, want %d and %q\n%s\n%s", code, ExitDifferent, want, out, errOut)
	}
	if !strings.Contains(errOut, "A: MayRequire: 1 def and 0 list items not loaded") {
		t.Errorf("the skipped def is not reported:\n%s", errOut)
	}
	for _, active := range [][]string{{"--active", "Ludeon.RimWorld.Biotech"}, {"--active", "ludeon.rimworld.royalty, LUDEON.RIMWORLD.BIOTECH"}, {"--active", "x.y", "--active", "ludeon.rimworld.biotech_steam"}} {
		code, out, errOut = run(t, append(append([]string{"diff"}, active...), a, b)...)
		if code != ExitOK {
			t.Errorf("%v: exit %d, want %d\n%s\n%s", active, code, ExitOK, out, errOut)
		}
	}
	// An exported manifest carries the same answer, and the active set it
	// was checked against.
	m := filepath.Join(t.TempDir(), "a.json")
	if code, _, errOut := run(t, "export", "--active", "none", "-o", m, a); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	if code, out, _ := run(t, "diff", "--active", "none", m, b); code != ExitDifferent || !strings.Contains(out, "ThingDef Widget (mod test.one, file Defs/Things.xml) has different content.") {
		t.Errorf("manifest diff: exit %d\n%s", code, out)
	}
	raw, err := os.ReadFile(m)
	if err != nil || !strings.Contains(string(raw), `"activeComplete": true`) {
		t.Errorf("manifest does not record its active set: %v\n%s", err, raw)
	}
}

// TestScanModsConfigDeclaresActive: the active mods of a ModsConfig.xml
// are what MayRequire is checked against.
func TestScanModsConfigDeclaresActive(t *testing.T) {
	a, _ := mayRequireSides(t)
	cfg := filepath.Join(t.TempDir(), "ModsConfig.xml")
	for _, tc := range []struct {
		active string
		count  string
	}{
		{"<li>test.one</li><li>test.two</li>", "ThingDef  1"},
		{"<li>test.one</li><li>ludeon.rimworld.biotech</li><li>test.two</li>", "ThingDef  1"},
	} {
		if err := os.WriteFile(cfg, []byte("<ModsConfigData><activeMods>"+tc.active+"</activeMods></ModsConfigData>"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(t, "scan", "--mods-config", cfg, a)
		// Biotech is declared active but not found: LoadOrder refuses.
		if strings.Contains(tc.active, "biotech") {
			if code != ExitError || !strings.Contains(errOut, "ludeon.rimworld.biotech") {
				t.Errorf("%s: exit %d\n%s", tc.active, code, errOut)
			}
			continue
		}
		if code != 0 || !strings.Contains(out, "0 undecided), 1 not loaded (MayRequire)") {
			t.Errorf("%s: exit %d\n%s\n%s", tc.active, code, out, errOut)
		}
	}
}

// TestDiffNamesFileAndElement is case 11 of the content bugs: a def whose
// content differs is named with the file it comes from and the first
// element that differs, and one def is "1 def".
func TestDiffNamesFileAndElement(t *testing.T) {
	dir := t.TempDir()
	for side, mass := range map[string]string{"a": "1", "b": "2"} {
		writeTree(t, filepath.Join(dir, side), map[string]string{
			"m/About/About.xml":        about("test.one"),
			"m/Defs/Items/Widgets.xml": defsFile(`<ThingDef><defName>Widget</defName><label>widget</label><statBases><MaxHitPoints>100</MaxHitPoints><Mass>` + mass + `</Mass></statBases></ThingDef>`),
			"m/Defs/Items/Other.xml":   defsFile(`<ThingDef><defName>Other</defName></ThingDef>`),
		})
	}
	writeTree(t, filepath.Join(dir, "b"), map[string]string{"m/Defs/Kinds.xml": defsFile(`<PawnKindDef><defName>Ghost</defName></PawnKindDef>`)})
	a, b := filepath.Join(dir, "a", "m"), filepath.Join(dir, "b", "m")
	code, out, errOut := run(t, "diff", a, b)
	if code != ExitDifferent {
		t.Fatalf("diff exit %d, want %d\n%s\n%s", code, ExitDifferent, out, errOut)
	}
	for _, want := range []string{
		"ThingDef Widget (mod test.one, file Defs/Items/Widgets.xml) has different content, first at statBases/Mass.",
		"Database PawnKindDef (1 def) is only in B (",
		"PawnKindDef Ghost (mod test.one, file Defs/Kinds.xml) is only in B (",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff report lacks %q:\n%s", want, out)
		}
	}
	// From a manifest the file is still named.
	manifest := filepath.Join(dir, "a.json")
	if code, _, errOut := run(t, "export", "-o", manifest, a); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	code, out, _ = run(t, "diff", manifest, b)
	if want := "ThingDef Widget (mod test.one, file Defs/Items/Widgets.xml) has different content."; code != ExitDifferent || !strings.Contains(out, want) {
		t.Errorf("diff from a manifest: exit %d, report lacks %q:\n%s", code, want, out)
	}
}
