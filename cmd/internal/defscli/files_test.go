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
