package defscli

import (
	"encoding/json"
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
	code, out, _ = run(t, "scan", "--json", "--active", "none", a)
	var sj scanJSON
	if err := json.Unmarshal([]byte(out), &sj); code != 0 || err != nil || len(sj.Skipped) != 1 || sj.Skipped[0].Requires != "Ludeon.RimWorld.Biotech" || len(sj.Undecided) != 0 {
		t.Errorf("scan --json: exit %d, %v\n%s", code, err, out)
	}
	code, out, _ = run(t, "scan", "--json", a)
	if err := json.Unmarshal([]byte(out), &sj); code != 0 || err != nil || len(sj.Undecided) != 1 || sj.Undecided[0].Mods[0] != "ludeon.rimworld.biotech" {
		t.Errorf("scan --json without --active: exit %d, %v\n%s", code, err, out)
	}
	raw, err := os.ReadFile(m)
	if err != nil || !strings.Contains(string(raw), `"activeComplete": true`) {
		t.Errorf("manifest does not record its active set: %v\n%s", err, raw)
	}
}

// TestScanModsConfigDeclaresActive: the active mods of a ModsConfig.xml
// are what MayRequire is checked against; every other mod is inactive.
func TestScanModsConfigDeclaresActive(t *testing.T) {
	a, _ := mayRequireSides(t)
	cfg := filepath.Join(t.TempDir(), "ModsConfig.xml")
	if err := os.WriteFile(cfg, []byte("<ModsConfigData><activeMods><li>test.one</li><li>test.two</li></activeMods></ModsConfigData>"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "scan", "--mods-config", cfg, a)
	if code != 0 || !strings.Contains(out, "0 undecided), 1 not loaded (MayRequire)") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
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
	// A manifest exported with --elements also locates the difference,
	// against content or another such manifest.
	mb := filepath.Join(dir, "b.json")
	for side, m := range map[string]string{a: manifest, b: mb} {
		if code, _, errOut := run(t, "export", "--elements", "-o", m, side); code != 0 {
			t.Fatalf("export --elements: %d %s", code, errOut)
		}
	}
	for _, args := range [][]string{{manifest, b}, {manifest, mb}} {
		code, out, _ = run(t, "diff", args[0], args[1])
		if want := "ThingDef Widget (mod test.one, file Defs/Items/Widgets.xml) has different content, first at statBases/Mass."; code != ExitDifferent || !strings.Contains(out, want) {
			t.Errorf("diff %v: exit %d, report lacks %q:\n%s", args, code, want, out)
		}
	}
}
