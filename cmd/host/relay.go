package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
)

// relayFlags are serve's relay-mode flags (docs/protocol.md, section 14).
func relayFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "relay", Usage: "run no simulation: the world comes from the arbiter, the client that proves --arbiter-secret-file, which uploads it when asked; the def databases joiners must match come from --content (or the embedded default content), --defs-manifest or --defs-from-arbiter"},
		&cli.StringFlag{Name: "arbiter-secret-file", Usage: "with --relay: the arbiter secret is the first line of `FILE`"},
		&cli.IntFlag{Name: "relay-world-mib", Value: int(host.DefaultConfig().Relay.WorldRawLimit >> 20),
			Usage: "with --relay: refuse an upload whose blobs declare more raw MiB than this in all; it also bounds the re-encoding of the arbiter's world for a joiner that reads only gzip"},
	}
}

// relayConfig reads the relay flags: with --relay, the arbiter secret,
// which it needs.
func relayConfig(c *cli.Context) (host.RelayConfig, error) {
	if err := checkRelayDefs(c); err != nil {
		return host.RelayConfig{}, err
	}
	file := c.String("arbiter-secret-file")
	if !c.Bool("relay") {
		if file != "" {
			return host.RelayConfig{}, cliutil.Usagef("--arbiter-secret-file needs --relay")
		}
		if c.IsSet("relay-world-mib") {
			return host.RelayConfig{}, cliutil.Usagef("--relay-world-mib needs --relay")
		}
		return host.RelayConfig{}, nil
	}
	if file == "" {
		return host.RelayConfig{}, cliutil.Usagef("--relay needs --arbiter-secret-file: without an arbiter secret no client can upload the world")
	}
	secret, err := cliutil.Secret("arbiter secret", file, "")
	if err != nil {
		return host.RelayConfig{}, err
	}
	return host.RelayConfig{ArbiterSecret: secret, DefsFromArbiter: c.Bool("defs-from-arbiter"),
		WorldRawLimit: uint64(c.Int("relay-world-mib")) << 20}, nil
}

// newServer makes the host: with --relay a relay host, which has no world
// of its own (world is nil) and, with --defs-manifest or
// --defs-from-arbiter, no content (bundle is nil); otherwise it generates
// or loads the world. content is what the host announces; relaySaved
// tells a relay host resumed from a save, which has its world at once.
func newServer(c *cli.Context, cfg host.Config, start *saveStart, bundle *gamecontent.Bundle, log *slog.Logger) (srv *host.Server, world lockstep.Sim, content host.Content, relaySaved bool, err error) {
	if c.Bool("relay") {
		saved, err := relayResume(c, &cfg, start, log)
		if err != nil {
			return nil, nil, host.Content{}, false, err
		}
		if bundle != nil {
			content = hostcontent.Content(bundle, log)
			if content.Share, err = shareContent(c, bundle, log); err != nil {
				return nil, nil, host.Content{}, false, err
			}
		} else if content, err = relayContent(c, saved, log); err != nil {
			return nil, nil, host.Content{}, false, err
		}
		srv, err = host.NewRelay(cfg, content)
		return srv, nil, content, saved != nil, err
	}
	content = hostcontent.Content(bundle, log)
	if content.Share, err = shareContent(c, bundle, log); err != nil {
		return nil, nil, host.Content{}, false, err
	}
	world, resumed, err := startWorld(c, start, bundle, log)
	if err != nil {
		return nil, nil, host.Content{}, false, err
	}
	cfg.Save.Resumed = resumed // the players' session tokens kept beside the save come back with it
	srv, err = host.New(cfg, content, world)
	return srv, world, content, false, err
}

// relayResume has a relay host with --save start from the newest valid of
// the save and its autosaves, unless --new or --force-new start afresh
// (an empty session, waiting for the arbiter's world). The save's blobs
// stay as the arbiter uploaded them. It returns the save's meta, or nil
// for a new session.
func relayResume(c *cli.Context, cfg *host.Config, start *saveStart, log *slog.Logger) (*saves.Meta, error) {
	if start == nil {
		return nil, nil
	}
	switch {
	case c.Bool("force-new") && len(start.existing) > 0:
		into, err := start.moveAside(time.Now())
		if err != nil {
			return nil, err
		}
		log.Warn("--force-new: moved the old session's files aside; none was deleted", "into", into, "files", len(start.existing))
		return nil, nil
	case c.Bool("new") && len(start.existing) > 0:
		return nil, start.refuseNew()
	case c.Bool("new") || c.Bool("force-new"):
		return nil, nil
	case len(start.existing) == 0:
		return nil, cliutil.Usagef("there is no save at %s, nor autosaves beside it; add --new to start a new session there", start.path)
	}
	best, _, ok := saves.NewestValid(start.path)
	if !ok {
		return nil, fmt.Errorf("save %s cannot be loaded, nor any autosave beside it", start.path)
	}
	f, err := saves.Read(best.Path)
	if err != nil {
		return nil, err
	}
	body, err := f.ReadBody()
	if err != nil {
		return nil, err
	}
	cfg.Relay.Resume, cfg.Save.Resumed = body, true
	log.Info("save loaded", "path", best.Path, "tick", body.Header.Granted, "point_tick", body.Header.Tick, "bytes", f.Size)
	return &f.Meta, nil
}
