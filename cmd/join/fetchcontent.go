package main

import (
	"context"
	"fmt"
	"log/slog"

	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/modsync"
	"github.com/urfave/cli/v2"
)

// contentFlags are the flags of content sync (docs/protocol.md, section
// 17).
func contentFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "fetch-content", Usage: "when your mods differ from the host's and the host shares its content, fetch the files you lack " +
			"(data only, checked by hash) into the content cache and load the host's mods from your folders and the cache"},
		contentCacheFlag(),
	}
}

// fetchContent runs content sync before the join, with --fetch-content:
// it asks the host for its manifest over the session connection, prints
// a line for each mod this machine lacks or has in another version,
// fetches only the files it lacks into the cache, and returns the host's
// mods loaded from the player's own folders and the cache. The player's
// folders are only read. Without the flag, or when the host shares
// nothing or the content matches, it returns bundle. cfg says how to
// reach the host; an error is explained as a join's is.
func fetchContent(ctx context.Context, c *cli.Context, cfg join.Config, bundle *gamecontent.Bundle, log *slog.Logger) (*gamecontent.Bundle, error) {
	if !c.Bool("fetch-content") {
		return bundle, nil
	}
	cfg.Databases = bundle.Summary()
	loaded, err := syncBundle(ctx, c, cfg, bundle, log)
	if err != nil {
		return nil, explain(err, bundle, passwordFrom(c))
	}
	return loaded, nil
}

// syncBundle is fetchContent with the flag given.
func syncBundle(ctx context.Context, c *cli.Context, cfg join.Config, bundle *gamecontent.Bundle, log *slog.Logger) (*gamecontent.Bundle, error) {
	cache, err := openContentCache(c)
	if err != nil {
		return nil, cannotStart(err)
	}
	var local *modsync.Manifest
	if !bundle.Embedded {
		if local, err = modsync.Build(bundle.Set, modsync.BuildOptions{}); err != nil {
			return nil, cannotStart(err)
		}
	}
	var dirs []string
	var st modsync.Stats
	gameVersion := bundle.GameVersion
	offer, err := join.FetchContent(ctx, cfg, func(ctx context.Context, cc *join.ContentConn) error {
		dirs, gameVersion, st, err = syncContent(ctx, cc, cache, local, gameVersion)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("content sync: %w", err)
	}
	switch {
	case !offer.Shared:
		log.Info("the host does not share its content: joining with yours")
		return bundle, nil
	case offer.Matches:
		log.Debug("content matches the host's")
		return bundle, nil
	}
	fmt.Fprintf(stdout, "content: %d files, %d bytes fetched (%d from cache)\n", st.Files, st.FetchedBytes, st.Cached+st.Local)
	loaded, err := gamecontent.Load(dirs, gameVersion)
	if err != nil {
		return nil, cannotStart(fmt.Errorf("the host's content, fetched: %w", err))
	}
	return loaded, nil
}

// syncContent compares the host's manifest with the player's, says what
// differs, fetches what is lacking and returns the folders to load and
// the game version to read them for: the host's (else gameVersion), so
// that they select the folders the host's copies did.
func syncContent(ctx context.Context, cc *join.ContentConn, cache *modsync.Cache, local *modsync.Manifest, gameVersion string) ([]string, string, modsync.Stats, error) {
	m, _, err := cc.Manifest(ctx, modsync.DefaultLimits)
	if err != nil {
		return nil, "", modsync.Stats{}, err
	}
	if m.GameVersion != "" {
		gameVersion = m.GameVersion
	}
	differ := map[string]bool{}
	for _, s := range modsync.Compare(m, local) {
		if s.State != modsync.Same {
			fmt.Fprintln(stdout, "content:", s)
			differ[s.PackageID] = true
		}
	}
	f := &modsync.Fetcher{Source: cc, Cache: cache, Limits: modsync.DefaultLimits}
	if local != nil {
		f.Local = local.LocalFiles()
	}
	st, err := f.Fetch(ctx, modsync.Need(m, func(d *modsync.Mod) bool { return differ[d.PackageID] }))
	if err != nil {
		return nil, "", st, err
	}
	dirs, err := cache.Dirs(m, local)
	return dirs, gameVersion, st, err
}
