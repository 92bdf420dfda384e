package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
)

// TestJoinContentWithoutBase: content the tool cannot load (a mod
// without the base content it builds on) is a join, ping or discover
// that cannot start as asked: one sentence and exit 2, without the
// pointer to --help (the call was right), before anything is sent.
func TestJoinContentWithoutBase(t *testing.T) {
	mod := filepath.Join(t.TempDir(), "Lone Mod")
	for name, body := range map[string]string{
		"About/About.xml": "<ModMetaData><packageId>test.lone</packageId><name>Lone</name></ModMetaData>",
		"Defs/Things.xml": "<Defs><ThingDef><defName>LoneThing</defName><label>lone thing</label></ThingDef></Defs>",
	} {
		path := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing listens on port 1 and the discovery port is one of the
	// test's: a command that got as far as the network would fail with
	// the network code instead.
	for _, args := range [][]string{
		{"127.0.0.1:1", "--name", "Lonely", "-q"},
		{"ping", "127.0.0.1:1"},
		{"discover", "--interface", loopbackName(t), "--discovery-port", "1"},
	} {
		code, out, errOut := runJoin(t, append(args, "--content", mod)...)
		if code != cliutil.ExitUsage || !strings.Contains(errOut, "which every world needs") || strings.Contains(errOut, "--help") {
			t.Errorf("join %s: exit %d, want %d with one sentence and no pointer to --help\n%s\n%s", args[0], code, cliutil.ExitUsage, out, errOut)
		}
	}
}
