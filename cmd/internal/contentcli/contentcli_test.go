package contentcli

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
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

// TestLoadSaysWhatItLoaded: Load logs the game version and mod folders
// of content from folders at the level asked for, and nothing of the
// embedded default content.
func TestLoadSaysWhatItLoaded(t *testing.T) {
	core := filepath.Join(t.TempDir(), "Core")
	if err := os.CopyFS(core, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		level slog.Level
		want  string
	}{
		{"folders at debug", []string{"--content", core}, slog.LevelDebug, "level=DEBUG msg=content game_version=" + defs.DefaultGameVersion},
		{"folders at info", []string{"--content", core}, slog.LevelInfo, "level=INFO msg=content game_version=" + defs.DefaultGameVersion},
		{"embedded", nil, slog.LevelInfo, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			var b *gamecontent.Bundle
			app := &cli.App{Name: "x", Flags: Flags(), Action: func(c *cli.Context) error {
				var err error
				b, err = Load(c, log, tc.level)
				return err
			}, ExitErrHandler: func(*cli.Context, error) {}}
			if err := app.Run(append([]string{"x"}, tc.args...)); err != nil || b == nil {
				t.Fatalf("Load: %v", err)
			}
			got := buf.String()
			if tc.want == "" && strings.Contains(got, "msg=content") || !strings.Contains(got, tc.want) {
				t.Errorf("log %q, want %q", got, tc.want)
			}
			if tc.want != "" && !strings.Contains(got, "folders=\"lockhost.core") {
				t.Errorf("log %q does not name the content's folders", got)
			}
		})
	}
}
