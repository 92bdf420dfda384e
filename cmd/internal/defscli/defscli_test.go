package defscli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/urfave/cli/v2"
)

// run runs "app defs args..." in-process and returns the exit code and
// output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	app := &cli.App{
		Name:           "app",
		Commands:       []*cli.Command{Command()},
		Writer:         &stdout,
		ErrWriter:      &stderr,
		ExitErrHandler: func(*cli.Context, error) {},
	}
	err := app.Run(append([]string{"app", "defs"}, args...))
	code := 0
	if err != nil {
		var ec cli.ExitCoder
		var ue *cliutil.UsageError
		if errors.As(err, &ue) {
			code = cliutil.ExitUsage
			stderr.WriteString(err.Error() + "\n")
		} else if errors.As(err, &ec) {
			code = ec.ExitCode()
			if msg := err.Error(); msg != "" {
				stderr.WriteString(msg + "\n")
			}
		} else {
			code = -1
			stderr.WriteString(err.Error())
		}
	}
	return code, stdout.String(), stderr.String()
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func about(id string) string {
	return "<ModMetaData><packageId>" + id + "</packageId><name>" + id + "</name></ModMetaData>"
}

func defsFile(body string) string { return "<Defs>" + body + "</Defs>" }

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	client := filepath.Join(dir, "client")
	for _, root := range []string{host, client} {
		writeTree(t, root, map[string]string{
			"a_core/About/About.xml":  about("test.core"),
			"a_core/Defs/Things.xml":  defsFile(`<ThingDef Name="B" Abstract="True"><mass>1</mass></ThingDef><ThingDef ParentName="B"><defName>Steel</defName></ThingDef><RecipeDef><defName>Cook</defName></RecipeDef>`),
			"a_core/1.5/Defs/New.xml": defsFile(`<ThingDef><defName>Plasteel</defName></ThingDef>`),
			"b_addon/About/About.xml": about("test.addon"),
			"b_addon/Defs/More.xml":   defsFile(`<ThingDef><defName>Gold</defName></ThingDef>`),
		})
	}
	// The client's addon changes Steel's inherited value and adds a def.
	writeTree(t, client, map[string]string{
		"b_addon/Defs/More.xml": defsFile(`<ThingDef><defName>Gold</defName></ThingDef><ThingDef><defName>Steel</defName><mass>2</mass></ThingDef><PawnKindDef><defName>Ghost</defName></PawnKindDef>`),
	})

	code, out, errOut := run(t, "scan", "--game-version", "1.5", host)
	if code != 0 || !strings.Contains(out, "ThingDef") || !strings.Contains(out, "2 mods, 2 databases, 4 defs (0 with a parent not in the scan, 0 undecided), 0 not loaded (MayRequire), 0 errors") {
		t.Fatalf("scan: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = run(t, "scan", "--json", filepath.Join(host, "a_core"))
	var sj scanJSON
	if code != 0 || json.Unmarshal([]byte(out), &sj) != nil || len(sj.Databases) != 2 || sj.Databases[1].Count != 2 || sj.Mods[0].Folders[1] != "1.5" {
		t.Fatalf("scan --json: %d %s", code, out)
	}

	manifest := filepath.Join(dir, "host.json")
	if code, _, errOut := run(t, "export", "-g", "1.5", "-o", manifest, host); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}

	// Same content: manifest vs folder (game version taken from the
	// manifest) and folder vs folder.
	if code, out, errOut := run(t, "diff", manifest, host); code != 0 || !strings.Contains(out, "same") {
		t.Fatalf("diff same: %d\n%s\n%s", code, out, errOut)
	}
	if code, out, _ := run(t, "diff", host, host); code != 0 {
		t.Fatalf("diff folder same: %d %s", code, out)
	}
	// For 1.4 the game still loads 1.5, the mod's only version folder:
	// only the game version differs.
	if code, out, _ := run(t, "diff", "--game-version", "1.4", manifest, host); code != 1 || !strings.Contains(out, `has "1.4"`) || strings.Contains(out, "Plasteel") {
		t.Fatalf("diff version: %d\n%s", code, out)
	}

	code, out, errOut = run(t, "diff", "--warnings", manifest, client)
	if code != 1 {
		t.Fatalf("diff different: code %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"PawnKindDef", "ThingDef Steel has different content: in A (", "from mod test.core, file Defs/Things.xml; in B (", "from mod test.addon, file Defs/More.xml."} {
		if !strings.Contains(out, want) {
			t.Errorf("diff report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "B: warning: [test.addon]") {
		t.Errorf("override warning not shown: %s", errOut)
	}

	code, out, _ = run(t, "diff", "--json", manifest, client)
	var rep struct {
		Same      bool `json:"same"`
		Databases []struct {
			Type string `json:"type"`
		} `json:"databases"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Same || len(rep.Databases) != 2 {
		t.Fatalf("diff --json: %d %s", code, out)
	}

	// A mod present on one side only is named as missing.
	code, out, _ = run(t, "diff", host, filepath.Join(host, "a_core"))
	if code != 1 || !strings.Contains(out, "test.addon") || !strings.Contains(out, "Gold") {
		t.Fatalf("diff missing mod: %d\n%s", code, out)
	}

	// Several folders joined like PATH.
	joined := filepath.Join(host, "a_core") + string(os.PathListSeparator) + filepath.Join(host, "b_addon")
	if code, out, _ := run(t, "diff", manifest, joined); code != 0 {
		t.Fatalf("diff joined: %d %s", code, out)
	}

	// Errors: missing side, bad manifest, wrong arg count, broken content.
	if code, _, errOut := run(t, "diff", manifest, filepath.Join(dir, "nope")); code != 2 || !strings.Contains(errOut, "nope") {
		t.Fatalf("diff missing: %d %s", code, errOut)
	}
	bad := filepath.Join(dir, "bad.json")
	writeTree(t, dir, map[string]string{"bad.json": `{"schema": 9}`})
	if code, _, errOut := run(t, "diff", bad, host); code != 2 || !strings.Contains(errOut, "schema 9") {
		t.Fatalf("diff bad manifest: %d %s", code, errOut)
	}
	if code, _, _ := run(t, "diff", host); code != 2 {
		t.Fatalf("diff one arg: %d", code)
	}
	if code, _, _ := run(t, "scan", dir); code != 2 {
		t.Fatalf("scan non-content: %d", code)
	}
	writeTree(t, client, map[string]string{"b_addon/Defs/Broken.xml": "<Defs><ThingDef>\n</Defs>"})
	code, out, errOut = run(t, "scan", client)
	if code != 1 || !strings.Contains(errOut, "b_addon") && !strings.Contains(errOut, "Defs/Broken.xml:2") || !strings.Contains(out, "1 error,") {
		t.Fatalf("scan broken: %d\n%s\n%s", code, out, errOut)
	}

	// Load order from ModsConfig.xml.
	writeTree(t, dir, map[string]string{"ModsConfig.xml": `<ModsConfigData><activeMods><li>test.addon</li><li>test.core</li></activeMods></ModsConfigData>`})
	code, out, errOut = run(t, "scan", "--mods-config", filepath.Join(dir, "ModsConfig.xml"), host)
	if code != 0 || !strings.Contains(out, "2 mods") {
		t.Fatalf("mods-config: %d %s %s", code, out, errOut)
	}
}

func TestGameVersionAndFolders(t *testing.T) {
	dir := t.TempDir()
	// A mod with only version folders, as most current mods are laid out.
	writeTree(t, dir, map[string]string{
		"m/About/About.xml":   about("test.versioned"),
		"m/1.5/Defs/A.xml":    defsFile(`<ThingDef><defName>A</defName><v>1.5</v></ThingDef>`),
		"m/1.6/Defs/A.xml":    defsFile(`<ThingDef><defName>A</defName><v>1.6</v></ThingDef>`),
		"old/About/About.xml": about("test.versioned"),
		"old/1.5/Defs/A.xml":  defsFile(`<ThingDef><defName>A</defName><v>1.5</v></ThingDef>`),
	})
	m := filepath.Join(dir, "m")
	code, out, errOut := run(t, "scan", m)
	if code != 0 || !strings.Contains(out, "1 mod, 1 database, 1 def (") {
		t.Fatalf("scan: %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"game version 1.6\n", "mod test.versioned: folders /, 1.6/\n"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("scan stderr lacks %q:\n%s", want, errOut)
		}
	}
	// The 1.6 folder is read by default, so a change there is seen; the
	// older copy of the mod falls back to its highest folder below 1.6.
	code, out, errOut = run(t, "diff", m, filepath.Join(dir, "old"))
	if code != 1 || !strings.Contains(out, "ThingDef A has different content, first at v: in A (") || !strings.Contains(errOut, "B: mod test.versioned: folders /, 1.5/") {
		t.Fatalf("diff: %d\n%s\n%s", code, out, errOut)
	}
	if code, _, _ := run(t, "diff", "-g", "1.5", m, filepath.Join(dir, "old")); code != 0 {
		t.Fatalf("diff for 1.5: %d, want 0", code)
	}
	for _, bad := range []string{"abc", "1,5", "", "1"} {
		for _, cmd := range [][]string{{"scan", "-g", bad, m}, {"export", "-g", bad, "-o", "-", m}, {"diff", "-g", bad, m, m}} {
			code, _, errOut := run(t, cmd...)
			if code != 2 || !strings.Contains(errOut, "is not a version such as 1.6") {
				t.Errorf("%v: %d %s", cmd, code, errOut)
			}
		}
	}
}

func TestDiffIncomplete(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, label string) string {
		writeTree(t, dir, map[string]string{
			name + "/About/About.xml":     about("test.onemod"),
			name + "/1.6/Defs/Things.xml": defsFile(`<ThingDef ParentName="BuildingBase"><defName>Chair</defName><label>` + label + `</label></ThingDef><ThingDef><defName>Plain</defName></ThingDef>`),
		})
		return filepath.Join(dir, name)
	}
	a, b, c := mk("a", "chair"), mk("b", "chair"), mk("c", "armchair")

	// Identical, but Chair's parent lives in Core, which is not scanned:
	// never "same", exit 3.
	code, out, errOut := run(t, "diff", a, b)
	if code != ExitIncomplete || !strings.Contains(out, "not everything could be compared") || !strings.Contains(out, `ThingDef Chair (mod test.onemod): parent "BuildingBase"`) {
		t.Fatalf("incomplete: %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "1 def(s) have a parent that is not in the scan") {
		t.Errorf("scan notice missing:\n%s", errOut)
	}
	// A change to such a def is a difference, named.
	code, out, _ = run(t, "diff", a, c)
	if code != ExitDifferent || !strings.Contains(out, `ThingDef Chair (mod test.onemod, file 1.6/Defs/Things.xml) has different content (its parent "BuildingBase" is not in the scan; compared by its own XML), first at label.`) {
		t.Fatalf("changed: %d\n%s", code, out)
	}
	// Through a manifest too, and in JSON.
	manifest := filepath.Join(dir, "a.json")
	if code, _, errOut := run(t, "export", "-o", manifest, a); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	code, out, _ = run(t, "diff", "--json", manifest, b)
	var rep struct {
		Same, Complete bool
		UnresolvedA    []struct{ Name, Parent string }
	}
	if code != ExitIncomplete || json.Unmarshal([]byte(out), &rep) != nil || !rep.Same || rep.Complete || len(rep.UnresolvedA) != 1 || rep.UnresolvedA[0].Parent != "BuildingBase" {
		t.Fatalf("json: %d %s", code, out)
	}
	// A side with def errors is not complete either.
	writeTree(t, dir, map[string]string{"b/1.6/Defs/Broken.xml": "<Defs><ThingDef>\n</Defs>"})
	writeTree(t, dir, map[string]string{"a/1.6/Defs/Broken.xml": "<Defs><ThingDef>\n</Defs>"})
	if code, out, _ := run(t, "diff", a, b); code != ExitIncomplete || !strings.Contains(out, "its scan had 1 error(s)") {
		t.Fatalf("errors: %d\n%s", code, out)
	}
	// With the parent present, the same content is the same: exit 0.
	writeTree(t, dir, map[string]string{
		"core/About/About.xml": about("test.core"),
		"core/Defs/Base.xml":   defsFile(`<ThingDef Name="BuildingBase" Abstract="True"><category>Building</category></ThingDef>`),
	})
	os.Remove(filepath.Join(a, "1.6/Defs/Broken.xml"))
	os.Remove(filepath.Join(b, "1.6/Defs/Broken.xml"))
	sep := string(os.PathListSeparator)
	core := filepath.Join(dir, "core")
	if code, out, errOut := run(t, "diff", core+sep+a, core+sep+b); code != 0 || !strings.Contains(out, "same") {
		t.Fatalf("complete: %d\n%s\n%s", code, out, errOut)
	}
}
