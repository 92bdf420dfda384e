package defscli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportFiles: manifests exported with --files carry each data
// file's hash, so a diff of two of them names a texture that differs
// though every def is the same; without --files the same two mods diff
// the same.
func TestExportFiles(t *testing.T) {
	dir := t.TempDir()
	mod := func(name, texture string) {
		root := filepath.Join(dir, name)
		writeTree(t, root, map[string]string{
			"About/About.xml":    about("test.mod"),
			"Defs/Things.xml":    defsFile(`<ThingDef><defName>Lamp</defName></ThingDef>`),
			"Textures/Lamp.png":  texture,
			"Assemblies/Mod.dll": "MZ code",
		})
	}
	mod("a", "\x89PNG lamp")
	mod("b", "\x89PNG lamp, redrawn")
	export := func(side string, args ...string) string {
		out := filepath.Join(dir, side+".json")
		if code, _, errOut := run(t, append(append([]string{"export", "-g", "1.5", "-o", out}, args...), filepath.Join(dir, side))...); code != 0 {
			t.Fatalf("export %s: %d %s", side, code, errOut)
		}
		return out
	}
	ma, mb := export("a", "--files"), export("b", "--files")
	code, out, errOut := run(t, "diff", ma, mb)
	if code != 1 || !strings.Contains(out, "File Textures/Lamp.png of mod test.mod differs") || strings.Contains(out, "ThingDef") {
		t.Errorf("diff with files: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := run(t, "diff", ma, ma); code != 0 {
		t.Errorf("a manifest with files against itself: %d\n%s", code, out)
	}
	data, err := os.ReadFile(ma)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Mods []struct {
			Files []struct{ Path, SHA256 string }
		}
	}
	if err := json.Unmarshal(data, &m); err != nil || len(m.Mods) != 1 || len(m.Mods[0].Files) != 3 {
		t.Fatalf("exported files: %v %+v", err, m)
	}
	for _, f := range m.Mods[0].Files {
		if strings.Contains(f.Path, "Assemblies") || len(f.SHA256) != 64 {
			t.Errorf("exported file %+v", f)
		}
	}
	// Without --files only the defs count.
	na, nb := export("a"), export("b")
	if code, out, _ := run(t, "diff", na, nb); code != 0 {
		t.Errorf("diff without files: %d\n%s", code, out)
	}
}

// TestDiffContentFiles: a content side is compared file by file with a
// manifest exported with --files (its data files hashed for it), and two
// content sides are with diff --files; the assembly, never shared, is
// never named; a manifest without files gets a note instead.
func TestDiffContentFiles(t *testing.T) {
	dir := t.TempDir()
	mod := func(name, texture, dll string) string {
		root := filepath.Join(dir, name)
		writeTree(t, root, map[string]string{
			"About/About.xml":    about("test.mod"),
			"Defs/Things.xml":    defsFile(`<ThingDef><defName>Lamp</defName></ThingDef>`),
			"Textures/Lamp.png":  texture,
			"Assemblies/Mod.dll": dll,
		})
		return root
	}
	a := mod("a", "\x89PNG lamp", "MZ code")
	b := mod("b", "\x89PNG lamp, redrawn", "MZ other code")
	same := mod("same", "\x89PNG lamp", "MZ yet other code")
	exported := filepath.Join(dir, "a.json")
	if code, _, errOut := run(t, "export", "-g", "1.5", "-o", exported, "--files", a); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	plain := filepath.Join(dir, "plain.json")
	if code, _, errOut := run(t, "export", "-g", "1.5", "-o", plain, a); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	const differs = "File Textures/Lamp.png of mod test.mod differs"
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		want    string // in stdout ("" for none)
		wantErr string // in stderr
	}{
		{"manifest with files against other content", []string{exported, b}, 1, differs, ""},
		{"other content against a manifest with files", []string{b, exported}, 1, differs, ""},
		{"manifest with files against the same data", []string{exported, same}, 0, "", ""},
		{"two content sides with --files", []string{"--files", a, b}, 1, differs, ""},
		{"two content sides without --files", []string{a, b}, 0, "", ""},
		{"a manifest without files, --files", []string{"--files", plain, b}, 0, "", "lists no data files"},
	} {
		code, out, errOut := run(t, append([]string{"diff", "-g", "1.5"}, tc.args...)...)
		if code != tc.code || (tc.want != "") != strings.Contains(out, differs) || !strings.Contains(errOut, tc.wantErr) {
			t.Errorf("%s: exit %d (want %d)\n%s\n%s", tc.name, code, tc.code, out, errOut)
		}
		if strings.Contains(out, "Mod.dll") {
			t.Errorf("%s: the assembly is named:\n%s", tc.name, out)
		}
	}
}
