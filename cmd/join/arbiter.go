package main

import (
	"github.com/urfave/cli/v2"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
)

// arbiterFlags make the join tool the arbiter of a relay host
// (docs/protocol.md, section 14).
func arbiterFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "arbiter-secret-file", Usage: "be the arbiter of a relay host (host serve --relay): prove the secret on the first line of `FILE`, upload the world when the session is new and a join point whenever the host asks"},
		&cli.Uint64Flag{Name: "world-seed", Value: 1, Usage: "with --arbiter-secret-file: the seed of the world uploaded to a new session"},
		&cli.IntFlag{Name: "world-mib", Usage: "with --arbiter-secret-file: upload a new session a world of about this many MiB of raw state (0: the default world)"},
	}
}

// arbiterConfig sets cfg up as the arbiter when --arbiter-secret-file asks:
// the secret, and the colony world a new session gets.
func arbiterConfig(c *cli.Context, cfg *join.Config, bundle *gamecontent.Bundle) error {
	file := c.String("arbiter-secret-file")
	if file == "" {
		if c.IsSet("world-seed") || c.IsSet("world-mib") {
			return cliutil.Usagef("--world-seed and --world-mib need --arbiter-secret-file")
		}
		return nil
	}
	if c.Bool("spectate") {
		return cliutil.Usagef("--arbiter-secret-file: the arbiter plays; leave out --spectate")
	}
	secret, err := cliutil.Secret("arbiter secret", file, "")
	if err != nil {
		return err
	}
	wcfg := colony.Config{Seed: c.Uint64("world-seed")}
	if mib := c.Int("world-mib"); mib > 0 {
		wcfg = colony.SizedConfig(int64(mib)<<20, c.Uint64("world-seed"))
	}
	if err := wcfg.Validate(); err != nil {
		return cliutil.Usagef("world: %v", err)
	}
	cfg.ArbiterSecret = secret
	cfg.World = func() (lockstep.Sim, error) { return colony.New(bundle.Content, wcfg) }
	return nil
}
