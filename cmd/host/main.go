// Command host runs a lockstep co-op session: "host serve" hosts the
// embedded default world (or content given with --content) for joiners,
// and "host defs" inspects and compares def databases offline.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/colony"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/cliutil"
	"github.com/lockhost/lockhost/internal/defscli"
	"github.com/lockhost/lockhost/internal/gamecontent"
	"github.com/lockhost/lockhost/roster"
	"github.com/lockhost/lockhost/wire"
	"github.com/urfave/cli/v2"
)

func main() {
	os.Exit(cliutil.Run(newApp(), os.Args, os.Stderr, nil))
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "host",
		Usage: "host a lockstep co-op session",
		Description: "Runs the session's simulation and admits players with 'join'. Every player runs the\n" +
			"same deterministic world; only commands travel once a player has joined.",
		Commands: []*cli.Command{serveCommand(), defscli.Command()},
	}
}

func serveCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "listen", Value: fmt.Sprintf(":%d", wire.DefaultPort), Usage: "TCP `ADDR` to accept players on"},
		&cli.StringFlag{Name: "game-name", Value: "lockhost colony", Usage: "session name shown to joiners"},
		&cli.IntFlag{Name: "tick-rate", Value: 60, Usage: "simulated ticks per second at normal speed"},
		&cli.IntFlag{Name: "max-players", Value: 8, Usage: "most players online at once"},
		&cli.IntFlag{Name: "max-spectators", Value: 4, Usage: "most spectators online at once, counted apart from players (0 for none)"},
		&cli.StringFlag{Name: "factions", Value: "shared", Usage: "shared: every player in one colony; per-player: a faction each"},
		cliutil.PasswordFlag("require this session password of every joiner"),
		&cli.Float64Flag{Name: "conn-rate", Value: 5, Usage: "new connections per second allowed from one IP address (bursts of twice that; -1 for no limit)"},
		&cli.IntFlag{Name: "maps", Value: colony.DefaultMaps, Usage: "maps in a new world"},
		&cli.IntFlag{Name: "map-size", Value: colony.DefaultWidth, Usage: "width and height of each map, in cells"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of a new world"},
		&cli.IntFlag{Name: "things-per-map", Value: colony.DefaultThingsPerMap, Usage: "things scattered on each map of a new world"},
		&cli.IntFlag{Name: "pawns-per-map", Value: colony.DefaultPawnsPerMap, Usage: "pawns on each map of a new world"},
		&cli.IntFlag{Name: "idle-maps", Usage: "maps, the highest-numbered, that get no pawns"},
		&cli.StringFlag{Name: "lag-policy", Value: "wait", Usage: "when a player falls --max-lag ticks behind: wait (slow, then hold time until they catch up) or drop (disconnect them)"},
		&cli.Uint64Flag{Name: "max-lag", Value: 120, Usage: "how many ticks a player may fall behind"},
		&cli.Float64Flag{Name: "command-rate", Value: 100, Usage: "commands per second one player may send (bursts of twice that)"},
		&cli.BoolFlag{Name: "lazy-join-points", Usage: "build a join point only when a joiner needs one, instead of keeping one ready (saves CPU on an idle host; joiners wait for the compression)"},
		&cli.IntFlag{Name: "world-mib", Usage: "generate a world of about this many MiB of raw state (chooses maps, map size and things; overrides those flags)"},
	}
	flags = append(flags, gamecontent.Flags()...)
	flags = append(flags, cliutil.LogFlags()...)
	return &cli.Command{
		Name:  "serve",
		Usage: "host a session until interrupted",
		Description: "Generates a world from the content (the embedded default content unless --content is\n" +
			"given), runs it headless, and admits players. Ctrl-C tells every player the host is closing.",
		Flags:  flags,
		Action: serve,
	}
}

func serve(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Usagef("serve takes no arguments, got %q", c.Args().First())
	}
	log, err := cliutil.Logger(c, os.Stderr)
	if err != nil {
		return err
	}
	bundle, err := gamecontent.FromFlags(c)
	if err != nil {
		return err
	}
	side := c.Int("map-size")
	wcfg := colony.Config{Maps: c.Int("maps"), Width: side, Height: side, Seed: c.Uint64("seed"),
		ThingsPerMap: c.Int("things-per-map"), PawnsPerMap: c.Int("pawns-per-map"), IdleMaps: c.Int("idle-maps")}
	if mib := c.Int("world-mib"); mib > 0 {
		wcfg = colony.SizedConfig(int64(mib)<<20, c.Uint64("seed"))
		wcfg.IdleMaps = c.Int("idle-maps")
		side = wcfg.Width
	}
	if err := wcfg.Validate(); err != nil {
		return cliutil.Usagef("world: %v", err)
	}
	genStart := time.Now()
	world, err := colony.New(bundle.Content, wcfg)
	if err != nil {
		return fmt.Errorf("generate world: %w", err)
	}
	log.Info("world generated", "ms", time.Since(genStart).Milliseconds())
	factions, err := roster.ParseFactionMode(c.String("factions"))
	if err != nil {
		return cliutil.Usagef("--factions: %v", err)
	}
	pw, err := cliutil.Password(c.String("password-file"))
	if err != nil {
		return err
	}
	lag, err := host.ParseLagPolicy(c.String("lag-policy"))
	if err != nil {
		return cliutil.Usagef("--lag-policy: %v", err)
	}
	spectators := c.Int("max-spectators")
	if spectators == 0 {
		spectators = -1 // the config's "none"
	}
	cfg := host.Config{
		GameName:       c.String("game-name"),
		TickRate:       c.Int("tick-rate"),
		MaxPlayers:     c.Int("max-players"),
		MaxSpectators:  spectators,
		Factions:       factions,
		Password:       pw,
		ConnRate:       c.Float64("conn-rate"),
		LazyJoinPoints: c.Bool("lazy-join-points"),
		LagPolicy:      lag,
		MaxLag:         c.Uint64("max-lag"),
		CommandRate:    c.Float64("command-rate"),
		CommandBurst:   max(1, int(2*c.Float64("command-rate"))),
		ConnBurst:      max(1, int(2*c.Float64("conn-rate"))),
		Logger:         log,
	}
	if err := cfg.Defaults().Validate(); err != nil {
		return cliutil.Usagef("%v", err)
	}
	manifest := bundle.Set.Manifest()
	content := host.Content{
		GameVersion: bundle.GameVersion, Mods: bundle.Mods, Databases: bundle.Summary(),
		Detail: func(types []string) []byte {
			b, err := defs.MarshalDetail(manifest.Only(types))
			if err != nil {
				log.Error("def detail", "err", err)
				return nil
			}
			return b
		},
	}
	srv, err := host.New(cfg, content, world)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("world ready", "maps", wcfg.Maps, "map_size", side, "seed", wcfg.Seed, "password", len(pw) > 0,
		"mods", len(bundle.Mods), "def_databases", len(bundle.Set.Databases), "embedded_content", bundle.Embedded)
	if err := srv.ListenAndServe(ctx, c.String("listen")); err != nil {
		return err
	}
	log.Info("host stopped")
	return nil
}
