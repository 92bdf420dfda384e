package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/modsync"
	"github.com/urfave/cli/v2"
)

// shareFlags are the options of content sharing (docs/protocol.md,
// section 17).
func shareFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "share-content", Usage: "share the data of the mods the host runs (defs, patches, languages, textures, sounds; never code) with joiners that lack them, " +
			"over the game connection and, with --http, under /content/; anyone who reaches the host can fetch it, password or not"},
		&cli.StringSliceFlag{Name: "share-content-except", Usage: "with --share-content: hold back the mod with this package `ID` (repeatable), for a mod whose licence does not allow redistribution; joiners must get it themselves"},
	}
}

// checkShareFlags refuses --share-content-except without --share-content.
func checkShareFlags(c *cli.Context) error {
	if !c.Bool("share-content") && len(c.StringSlice("share-content-except")) > 0 {
		return cliutil.Usagef("--share-content-except needs --share-content")
	}
	return nil
}

// shareContent builds, with --share-content, the manifest of the content
// the host loaded, once, and the handler that serves it (nil without the
// option). Content not read from folders (the embedded content, a relay
// host's def databases from a manifest or its arbiter) cannot be shared.
func shareContent(c *cli.Context, bundle *gamecontent.Bundle, log *slog.Logger) (*modsync.Handler, error) {
	if !c.Bool("share-content") {
		return nil, nil
	}
	if bundle == nil || bundle.Embedded {
		return nil, cliutil.Usagef("--share-content shares mods loaded from folders: give them with --content (the embedded content is every joiner's already)")
	}
	except := c.StringSlice("share-content-except")
	for _, id := range except {
		if !containsFold(bundle.Mods, id) {
			return nil, cliutil.Usagef("--share-content-except %q: the host loads no mod of that package ID (it loads %s)", id, strings.Join(bundle.Mods, ", "))
		}
	}
	m, err := modsync.Build(bundle.Set, modsync.BuildOptions{Except: except})
	if err != nil {
		return nil, fmt.Errorf("share content: %w", err)
	}
	h, err := modsync.NewHandler(m)
	if err != nil {
		return nil, fmt.Errorf("share content: %w", err)
	}
	files, notShared := 0, 0
	for _, d := range m.Mods {
		files += len(d.Files)
		notShared += len(d.NotShared)
	}
	log.Info("sharing content", "mods", len(m.Mods), "held_back", len(except), "files", files, "not_shared", notShared,
		"bytes", h.Bytes(), "manifest", h.ManifestHash().String()[:16])
	return h, nil
}

// containsFold reports whether ids holds id, letter case aside.
func containsFold(ids []string, id string) bool {
	for _, x := range ids {
		if strings.EqualFold(x, strings.TrimSpace(id)) {
			return true
		}
	}
	return false
}
