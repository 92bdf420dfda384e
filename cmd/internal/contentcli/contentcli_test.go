package contentcli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/colony"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/internal/gamecontent"
	"github.com/urfave/cli/v2"
)

// run runs an app with the content flags and args, and returns what
// FromFlags loaded.
func run(args ...string) (*gamecontent.Bundle, error) {
	var b *gamecontent.Bundle
	app := &cli.App{Name: "x", Flags: Flags(), Action: func(c *cli.Context) error {
		var err error
		b, err = FromFlags(c)
		return err
	}, ExitErrHandler: func(*cli.Context, error) {}}
	err := app.Run(append([]string{"x"}, args...))
	return b, err
}

func TestFromFlagsRefusesBadVersion(t *testing.T) {
	core := filepath.Join(t.TempDir(), "Core")
	if err := os.CopyFS(core, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"abc", "1,5", "v1.6"} {
		_, err := run("--game-version", bad, "--content", core)
		var ue *cliutil.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("--game-version %s: %v, want a usage error", bad, err)
		}
	}
	b, err := run("--content", core)
	if err != nil || b.GameVersion != defs.DefaultGameVersion || b.Embedded || len(b.Set.Databases) == 0 {
		t.Fatalf("default: %v %+v", err, b)
	}
	if _, err := run("--mods-config", filepath.Join(core, "ModsConfig.xml")); err == nil {
		t.Error("--mods-config without --content loaded content")
	}
}
