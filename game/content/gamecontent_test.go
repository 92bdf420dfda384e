package gamecontent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// content writes the embedded Core and a mod with only version folders.
func content(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	core := filepath.Join(dir, "Core")
	if err := os.CopyFS(core, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(dir, "Mod")
	write(t, mod, map[string]string{
		"About/About.xml":  `<ModMetaData><packageId>test.mod</packageId></ModMetaData>`,
		"1.5/Defs/A.xml":   `<Defs><ThingDef><defName>Lamp</defName><category>Building</category><v>1.5</v></ThingDef></Defs>`,
		"1.6/Defs/A.xml":   `<Defs><ThingDef><defName>Lamp</defName><category>Building</category><v>1.6</v></ThingDef><FleckDef ParentName="FleckBase"><defName>Puff</defName></FleckDef></Defs>`,
		"1.6/Defs/Old.xml": `<Defs><SongDef><clipPath>Songs/Night</clipPath></SongDef></Defs>`,
	})
	return []string{core, mod}
}

// The host and join read the same folders as "defs scan" for the same
// version, default included.
func TestLoadReadsWhatDefsScanReads(t *testing.T) {
	dirs := content(t)
	for _, v := range []string{"", "1.5", "1.6"} {
		b, err := Load(dirs, v)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		set, err := defs.ScanDirs(dirs, defs.Options{GameVersion: v})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := b.Set.Manifest(), set.Manifest(); !defs.Diff(got, want).Same() {
			t.Errorf("%q: the host's defs differ from defs scan's", v)
		}
		if want := defs.GameVersionOrDefault(v); b.GameVersion != want || b.Set.GameVersion != want {
			t.Errorf("%q: game version %q/%q, want %q", v, b.GameVersion, b.Set.GameVersion, want)
		}
	}
	b, err := Load(dirs, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Set.Database("ThingDef").Def("Lamp").Node.Value("v"); got != "1.6" {
		t.Errorf("default version read the %s folder, want 1.6", got)
	}
	if got := b.Folders(); got != "lockhost.core: /; test.mod: /, 1.6/" {
		t.Errorf("folders %q", got)
	}
	notes := strings.Join(b.Notes(), "\n")
	for _, want := range []string{`1 def(s) have a parent that is not in the content, e.g. FleckDef Puff (mod test.mod) with parent "FleckBase"`, "of types FleckDef, SongDef"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if _, err := Load(dirs, "abc"); err == nil || !strings.Contains(err.Error(), "not a version") {
		t.Errorf("Load with version abc: %v", err)
	}
}
