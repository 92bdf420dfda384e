package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
)

// TestJoinContentWithoutBase: content the join cannot load (a mod
// without the base content it builds on) is a join that cannot start as
// asked: one sentence and exit 2, without the pointer to --help (the
// call was right), before anything is dialled.
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
	// Nothing listens on port 1: a join that got as far as dialling
	// would fail with the network code instead.
	code, out, errOut := runJoin(t, "127.0.0.1:1", "--name", "Lonely", "--content", mod, "-q")
	if code != cliutil.ExitUsage || !strings.Contains(errOut, "join: ") || strings.Contains(errOut, "--help") {
		t.Fatalf("exit %d, want %d with one sentence and no pointer to --help\n%s\n%s", code, cliutil.ExitUsage, out, errOut)
	}
	t.Logf("%s", errOut)
}
