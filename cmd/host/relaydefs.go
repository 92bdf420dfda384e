package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/saves"
)

// A relay host runs no game code, so it needs no content folders: the
// def databases joiners must match can come from a manifest that "defs
// export" wrote, or, for a game with no content folders, from the
// arbiter's declaration (docs/protocol.md, section 14.9).

// relayDefsFlags are serve's flags for where a relay host's def databases
// come from besides --content.
func relayDefsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "defs-manifest", Usage: "with --relay: joiners must match the def databases of this manifest `FILE` (written by \"host defs export\") instead of content folders; not with --content, --mods-config or --game-version"},
		&cli.BoolFlag{Name: "defs-from-arbiter", Usage: "with --relay, for a game with no content folders: joiners must match the def databases the first arbiter declares; they are kept in the session's saves; not with --content, --mods-config, --game-version or --defs-manifest"},
	}
}

// relayOwnDefs reports whether the relay host's def databases come from
// a manifest or the arbiter, so that no content is loaded.
func relayOwnDefs(c *cli.Context) bool {
	return c.String("defs-manifest") != "" || c.Bool("defs-from-arbiter")
}

// checkRelayDefs refuses the flags of relayDefsFlags without --relay,
// together, or with the content flags they replace.
func checkRelayDefs(c *cli.Context) error {
	if !relayOwnDefs(c) {
		return nil
	}
	name := "--defs-manifest"
	if c.Bool("defs-from-arbiter") {
		name = "--defs-from-arbiter"
	}
	switch {
	case !c.Bool("relay"):
		return cliutil.Usagef("%s needs --relay: a host that simulates the game reads its content", name)
	case c.String("defs-manifest") != "" && c.Bool("defs-from-arbiter"):
		return cliutil.Usagef("give --defs-manifest or --defs-from-arbiter, not both: the def databases come from one place")
	}
	for _, f := range []string{"content", "mods-config", "game-version"} {
		if c.IsSet(f) {
			return cliutil.Usagef("%s replaces --%s: the def databases come from one place", name, f)
		}
	}
	return nil
}

// relayContent is what a relay host with relayOwnDefs announces: the
// manifest's content, or, with --defs-from-arbiter, nothing until the
// arbiter declares its databases; saved is the meta of the save a
// resumed session starts from (nil: a new session), whose databases are
// the declaration it keeps.
func relayContent(c *cli.Context, saved *saves.Meta, log *slog.Logger) (host.Content, error) {
	if path := c.String("defs-manifest"); path != "" {
		return readManifestContent(path, log)
	}
	if saved == nil {
		return host.Content{}, nil
	}
	content := host.Content{GameVersion: saved.GameVersion, Mods: saved.Mods}
	for _, d := range saved.Databases {
		content.Databases = append(content.Databases, defs.Summary{Type: d.Type, Count: d.Count, Hash: d.Hash})
	}
	return content, nil
}

// readManifestContent reads the manifest at path (at most
// defs.MaxManifestSize bytes) as the host's content. A manifest that
// records scan errors describes content read only in part, which a host
// does not run on (as it refuses content folders with def errors), nor
// one without def databases.
func readManifestContent(path string, log *slog.Logger) (host.Content, error) {
	f, err := os.Open(path)
	if err != nil {
		return host.Content{}, fmt.Errorf("--defs-manifest: %w", err)
	}
	defer f.Close()
	m, err := defs.ReadManifest(f)
	if err != nil {
		return host.Content{}, fmt.Errorf("--defs-manifest %s: %w", path, err)
	}
	switch {
	case m.ScanErrors > 0:
		return host.Content{}, fmt.Errorf("--defs-manifest %s records %d scan errors: the content it describes was read only in part; fix the content and export the manifest again", path, m.ScanErrors)
	case len(m.Databases) == 0:
		return host.Content{}, fmt.Errorf("--defs-manifest %s has no def databases; for a game without any, use --defs-from-arbiter", path)
	}
	if n := len(m.Unresolved()); n > 0 {
		log.Warn(fmt.Sprintf("the manifest has %d def(s) whose parent was not in the content exported; they are compared by their own XML", n))
	}
	if n := len(m.Undecided()); n > 0 {
		log.Warn(fmt.Sprintf("the manifest has %d def(s) whose MayRequire names a mod neither exported nor declared active; they are compared as written", n))
	}
	log.Info("def databases from a manifest", "path", path, "game_version", m.GameVersion, "mods", len(m.Mods), "def_databases", len(m.Databases))
	return hostcontent.ManifestContent(m, log), nil
}
