package main

import (
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/gamecontent"
	"github.com/lockhost/lockhost/internal/hostcontent"
	"github.com/lockhost/lockhost/lockstep"
)

// relayFlags are serve's relay-mode flags (docs/protocol.md, section 15).
func relayFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "relay", Usage: "run no simulation: the world comes from the arbiter, the client that proves --arbiter-secret-file, which uploads it when asked; --content still names the def databases joiners must match"},
		&cli.StringFlag{Name: "arbiter-secret-file", Usage: "with --relay: the arbiter secret is the first line of `FILE`"},
	}
}

// relayConfig reads the relay flags: with --relay, the arbiter secret,
// which it needs, and no save, which relay mode does not write.
func relayConfig(c *cli.Context) (host.RelayConfig, error) {
	file := c.String("arbiter-secret-file")
	if !c.Bool("relay") {
		if file != "" {
			return host.RelayConfig{}, cliutil.Usagef("--arbiter-secret-file needs --relay")
		}
		return host.RelayConfig{}, nil
	}
	if file == "" {
		return host.RelayConfig{}, cliutil.Usagef("--relay needs --arbiter-secret-file: without an arbiter secret no client can upload the world")
	}
	if c.String("save") != "" {
		return host.RelayConfig{}, cliutil.Usagef("--relay does not save: leave out --save (the world is the arbiter's)")
	}
	secret, err := cliutil.Secret("arbiter secret", file, "")
	if err != nil {
		return host.RelayConfig{}, err
	}
	return host.RelayConfig{ArbiterSecret: secret}, nil
}

// newServer makes the host: with --relay a relay host, which has no world
// of its own (world is nil); otherwise it generates or loads the world.
func newServer(c *cli.Context, cfg host.Config, start *saveStart, bundle *gamecontent.Bundle, log *slog.Logger) (*host.Server, lockstep.Sim, error) {
	content := hostcontent.Content(bundle, log)
	if c.Bool("relay") {
		srv, err := host.NewRelay(cfg, content)
		return srv, nil, err
	}
	world, resumed, err := startWorld(c, start, bundle, log)
	if err != nil {
		return nil, nil, err
	}
	cfg.Save.Resumed = resumed // the players' session tokens kept beside the save come back with it
	srv, err := host.New(cfg, content, world)
	return srv, world, err
}
