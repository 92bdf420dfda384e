package contentcli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/defs"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/urfave/cli/v2"
)

// Flags are the content flags of both tools.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "content", Usage: "mod `DIR` to load, repeatable, in load order (default: the embedded default content)"},
		&cli.StringFlag{Name: "game-version", Value: gamecontent.DefaultGameVersion, Usage: "game `VERSION` that selects version folders (such as 1.6/Defs) and LoadFolders.xml entries, as the defs tools do"},
		&cli.StringFlag{Name: "mods-config", Usage: "take the load order from this ModsConfig.xml `FILE`; --content then names the folders to find the mods in"},
	}
}

// FromFlags loads the content the flags name. A game version that is not
// one is a usage error.
func FromFlags(c *cli.Context) (*gamecontent.Bundle, error) {
	if err := defs.CheckGameVersion(c.String("game-version")); err != nil {
		return nil, cliutil.Usagef("--game-version: %v", err)
	}
	dirs := c.StringSlice("content")
	if mc := c.String("mods-config"); mc != "" {
		if len(dirs) == 0 {
			return nil, errors.New("--mods-config needs --content folders to find the mods in")
		}
		ordered, err := defs.LoadOrder(mc, dirs)
		if err != nil {
			return nil, fmt.Errorf("load order: %w", err)
		}
		dirs = ordered
	}
	return gamecontent.Load(dirs, c.String("game-version"))
}

// Load loads the content the flags name, as FromFlags does, and says what
// it loaded: the game version and folders at level, unless it is the
// embedded default content, and each of the content's notes as a warning.
func Load(c *cli.Context, log *slog.Logger, level slog.Level) (*gamecontent.Bundle, error) {
	bundle, err := FromFlags(c)
	if err != nil {
		return nil, err
	}
	if !bundle.Embedded {
		log.Log(c.Context, level, "content", "game_version", bundle.GameVersion, "folders", bundle.Folders())
	}
	for _, n := range bundle.Notes() {
		log.Warn(n)
	}
	return bundle, nil
}
