package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
)

// TestDefsCommandMessages runs "host defs …" through the tool's own app
// and exit-code mapping: a content error is one sentence with exit 2 and
// no pointer to --help; a bad --game-version is a usage error; a mod
// without packageId is scanned with a warning.
func TestDefsCommandMessages(t *testing.T) {
	dir := t.TempDir()
	core, mod := writeRealContent(t, dir)
	old := filepath.Join(dir, "Old Mod")
	writeUnder(t, old, "About/About.xml", []byte("<ModMetaData><name>Old</name></ModMetaData>"))
	writeUnder(t, old, "Defs/X.xml", []byte("<Defs><ThingDef><defName>OldThing</defName></ThingDef></Defs>"))
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		app := newApp()
		app.Writer, app.ErrWriter = &out, &errOut
		code := cliutil.Run(app, append([]string{"host", "defs"}, args...), &errOut, nil)
		return code, out.String(), errOut.String()
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		out, errs []string
		noErr     []string
	}{
		{"real mod with core", []string{"scan", core, mod}, 0,
			[]string{"FleckDef", "SongDef", "(0 with a parent not in the scan, 0 undecided), 0 not loaded (MayRequire), 0 errors"},
			[]string{"game version 1.6", "mod test.realmod: folders /, 1.6/"}, nil},
		{"real mod alone", []string{"scan", mod}, 0,
			[]string{"(1 with a parent not in the scan, 0 undecided)"},
			[]string{`ThingDef Uranium: parent "ResourceBase"`}, nil},
		{"diff alone vs alone", []string{"diff", mod, mod}, 3,
			[]string{"not everything could be compared"}, nil, nil},
		{"diff with core", []string{"diff", core + string(os.PathListSeparator) + mod, core + string(os.PathListSeparator) + mod}, 0,
			[]string{"same mods and def databases"}, nil, nil},
		{"no packageId", []string{"scan", "--warnings", old}, 0, []string{"1 mod, 1 database, 1 def ("},
			[]string{`using "legacy.old_mod", derived from its folder name`}, nil},
		{"missing folder", []string{"scan", filepath.Join(dir, "nope")}, 2, nil,
			[]string{"host: defs: scan: ", "nope"}, []string{"--help"}},
		{"bad version", []string{"scan", "--game-version", "abc", mod}, 2, nil,
			[]string{`"abc" is not a version`, "Run 'host --help'"}, nil},
		{"bad version comma", []string{"diff", "-g", "1,5", mod, mod}, 2, nil,
			[]string{`"1,5" is not a version`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, out, errOut)
			}
			for _, w := range tt.out {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.errs {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, w := range tt.noErr {
				if strings.Contains(errOut, w) {
					t.Errorf("stderr has %q:\n%s", w, errOut)
				}
			}
			if tt.code == 2 && strings.Count(strings.TrimSpace(strings.SplitN(errOut, "Run '", 2)[0]), "\n") > 0 {
				t.Errorf("error is not one line:\n%s", errOut)
			}
		})
	}
}
