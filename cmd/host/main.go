// Command host runs a lockstep co-op session: "host serve" hosts the
// embedded default world (or content given with --content) for joiners,
// and "host defs" inspects and compares def databases offline.
package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/cmd/internal/contentcli"
	"github.com/lockhost/lockhost/cmd/internal/defscli"
	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/gamecontent"
	"github.com/lockhost/lockhost/internal/gcpolicy"
	"github.com/lockhost/lockhost/internal/hostcontent"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/metrics"
	"github.com/lockhost/lockhost/roster"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/web"
	"github.com/lockhost/lockhost/wire"
	"github.com/urfave/cli/v2"
)

func main() {
	gcpolicy.Apply()
	os.Exit(cliutil.Run(newApp(), os.Args, os.Stderr, nil))
}

func newApp() *cli.App {
	app := &cli.App{
		Name:  "host",
		Usage: "host a lockstep co-op session",
		Description: "Runs the session's simulation and admits players with 'join'. Every player runs the\n" +
			"same deterministic world; only commands travel once a player has joined.",
		Commands: []*cli.Command{serveCommand(), savesCommand(), desyncsCommand(), defscli.Command()},
	}
	cliutil.SetVersion(app, wire.ProtocolVersion)
	return app
}

func serveCommand() *cli.Command {
	flags := []cli.Flag{
		configFlag(),
		&cli.StringFlag{Name: "listen", Value: fmt.Sprintf(":%d", wire.DefaultPort), Usage: "TCP `ADDR` to accept players on"},
		&cli.StringFlag{Name: "http", Usage: "serve a live status page, /metrics (Prometheus) and /healthz on `ADDR`; a bare port such as 8080 listens on loopback only, 0.0.0.0:8080 on every interface"},
		&cli.StringFlag{Name: "http-token-file", Usage: "with --http: ask for the token on the first line of `FILE` on every route but /healthz (or set " + web.TokenEnv + "); a browser asks for it as a password, a scraper sends it as a bearer token"},
		&cli.StringFlag{Name: "game-name", Value: "lockhost colony", Usage: "session name shown to joiners"},
		&cli.IntFlag{Name: "tick-rate", Value: 60, Usage: "simulated ticks per second at normal speed"},
		&cli.IntFlag{Name: "max-players", Value: 8, Usage: "most players online at once"},
		&cli.IntFlag{Name: "max-spectators", Value: 4, Usage: "most spectators online at once, counted apart from players"},
		&cli.StringFlag{Name: "factions", Value: "shared", Usage: "shared: every player in one colony; per-player: a faction each"},
		cliutil.PasswordFlag("require this session password of every joiner"),
		&cli.Float64Flag{Name: "conn-rate", Value: 5, Usage: "new connections per second allowed from one IP address, an IPv6 address counted by its /64 (bursts of twice that)"},
		&cli.IntFlag{Name: "max-pending", Value: 64, Usage: "most connections still joining (not yet admitted) at once; more are refused"},
		&cli.IntFlag{Name: "max-pending-per-addr", Value: 4, Usage: "most connections still joining from one address, an IPv6 address counted by its /64"},
		&cli.Float64Flag{Name: "min-download-rate", Value: 16 << 10, Usage: "slowest average world download in bytes per second: a joiner slower than that, past the 30 s stall allowance, is dropped and its slot freed"},
	}
	flags = append(flags,
		&cli.StringFlag{Name: "save", Usage: "save `FILE`: load the newest valid of it and its autosaves, save there on exit and autosave beside it; its folder must be writable"},
		&cli.BoolFlag{Name: "new", Usage: "with --save: start a new world there; refused (exit 2) if the save or its autosaves exist"},
		&cli.BoolFlag{Name: "force-new", Usage: "with --save: start a new world there, first moving an existing save and its autosaves into a dated folder beside it (nothing is deleted)"},
		&cli.BoolFlag{Name: "recover", Usage: "with --save: if the save is damaged, keep it as FILE.damaged-<time> and start from the newest valid autosave"},
		&cli.DurationFlag{Name: "autosave", Value: 5 * time.Minute, Usage: "autosave interval"},
		&cli.IntFlag{Name: "keep", Value: 5, Usage: "autosaves to keep"},
		&cli.StringFlag{Name: "lag-policy", Value: "wait", Usage: "when a player falls --max-lag ticks behind: wait (slow, then hold time until they catch up) or drop (disconnect them)"},
		&cli.Uint64Flag{Name: "max-lag", Value: 120, Usage: "how many ticks a player may fall behind"},
		&cli.DurationFlag{Name: "max-hold", Value: time.Minute, Usage: "with --lag-policy wait: the longest time is held for one player, added up over its rejoins within 10 minutes, before they are dropped"},
		&cli.DurationFlag{Name: "drop-cooldown", Value: 2 * time.Minute, Usage: "how long a player dropped for lagging or desyncs must wait before rejoining"},
		&cli.Float64Flag{Name: "command-rate", Value: 100, Usage: "commands per second one player may send (bursts of twice that)"},
		compressionFlag(),
		&cli.BoolFlag{Name: "lazy-join-points", Usage: "build a join point only when a joiner needs one, instead of keeping one ready (saves CPU on an idle host; joiners wait for the compression)"},
		&cli.IntFlag{Name: "hash-every", Value: 60, Usage: "ticks between state-hash checks of every player"},
		&cli.IntFlag{Name: "desync-limit", Value: 3, Usage: "desyncs a player may have within --desync-window, counted over its rejoins, before being dropped"},
		&cli.DurationFlag{Name: "desync-window", Value: 10 * time.Minute, Usage: "the window --desync-limit counts in"},
		&cli.IntFlag{Name: "drop-unverified", Usage: "drop a playing client that reports no state hashes for this many --hash-every intervals past --max-lag"},
		dataDirFlag(),
		&cli.BoolFlag{Name: "tls", Usage: "speak TLS only: a self-signed key and certificate are made in the data folder on first start and kept; the fingerprint to give joiners is printed"},
		&cli.StringFlag{Name: "tls-cert", Usage: "with --tls: use this certificate `FILE` (PEM) instead of the self-signed one"},
		&cli.StringFlag{Name: "tls-key", Usage: "with --tls: the key `FILE` (PEM) of --tls-cert"},
	)
	flags = append(flags, relayFlags()...)
	flags = append(flags, adminFlags()...)
	flags = append(flags, worldFlags()...)
	flags = append(flags, contentcli.Flags()...)
	flags = append(flags, cliutil.LogFlags()...)
	file := &configFile{}
	return &cli.Command{
		Name:  "serve",
		Usage: "host a session until interrupted",
		Description: "Generates a world from the content (the embedded default content unless --content is\n" +
			"given), or loads the newest valid of --save and its autosaves, runs it headless, and admits\n" +
			"players. Ctrl-C tells every player the host is closing and writes the final save; if that\n" +
			"save fails the host exits 5 and names the newest good save.\n" +
			"Every option below except --config can also be set in a TOML file named by --config (see\n" +
			"host.example.toml); the command line wins over environment variables, which win over the file.\n" +
			numbersRule,
		Flags:  withRanges(flags),
		Before: file.apply,
		Action: file.explain(serve),
	}
}

// serverTLS loads or makes the host's TLS identity when --tls asks for
// one, and prints the fingerprint joiners pin.
func serverTLS(c *cli.Context, data string, log *slog.Logger) (*tls.Config, error) {
	certFile, keyFile := c.String("tls-cert"), c.String("tls-key")
	if !c.Bool("tls") {
		if certFile != "" || keyFile != "" {
			return nil, cliutil.Usagef("--tls-cert and --tls-key need --tls")
		}
		return nil, nil
	}
	var cert tls.Certificate
	var err error
	switch {
	case certFile != "" && keyFile != "":
		cert, err = tlsid.LoadFiles(certFile, keyFile)
	case certFile != "" || keyFile != "":
		return nil, cliutil.Usagef("give both --tls-cert and --tls-key, or neither for the self-signed identity")
	default:
		var created bool
		cert, created, err = tlsid.LoadOrCreate(data)
		if err == nil && created {
			log.Info("made a new TLS identity", "dir", data)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	fp := tlsid.Fingerprint(cert)
	log.Info("TLS on", "fingerprint", fp)
	fmt.Fprintf(os.Stderr, "TLS certificate fingerprint: %s\njoiners check it with: join HOST --tls --fingerprint %s\n", fp, fp)
	return tlsid.ServerConfig(cert), nil
}

func serve(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Usagef("serve takes no arguments, got %q", c.Args().First())
	}
	if err := checkNumbers(c); err != nil {
		return err
	}
	log, err := cliutil.Logger(c, os.Stderr)
	if err != nil {
		return err
	}
	if path := c.String("config"); path != "" {
		log.Info("config file read", "path", path)
	}
	httpToken, err := statusToken(c)
	if err != nil {
		return err
	}
	// The configuration is checked, and every folder, file and port the
	// host needs is checked or opened, before the content is read and the
	// world generated or loaded, which can take seconds: a slip fails at
	// once.
	data, err := dataDir(c)
	if err != nil {
		return err
	}
	if err := checkDataDir(data); err != nil {
		return err
	}
	var bundle *gamecontent.Bundle
	cfg, err := hostConfig(c, func() *gamecontent.Bundle { return bundle }, log)
	if err != nil {
		return err
	}
	if (c.Bool("new") || c.Bool("force-new") || c.Bool("recover")) && c.String("save") == "" {
		return cliutil.Usagef("--new, --force-new and --recover need --save")
	}
	pre, err := prepare(c, log)
	if err != nil {
		return err
	}
	defer pre.close()
	warnOpen(pre.game.Addr(), len(cfg.Password) > 0, log)
	var observer *metrics.Host
	if pre.web != nil {
		observer = metrics.New()
		cfg.Observer = observer
	}
	if bundle, err = contentcli.FromFlags(c); err != nil {
		return err
	}
	if !bundle.Embedded {
		log.Info("content", "game_version", bundle.GameVersion, "folders", bundle.Folders())
	}
	for _, n := range bundle.Notes() {
		log.Warn(n)
	}
	srv, world, err := newServer(c, cfg, pre.start, bundle, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	webDone := make(chan error, 1)
	if webLn := pre.web; webLn != nil {
		pre.web = nil // Serve closes it
		reg, err := metrics.NewRegistry(observer, srv)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		h := web.Handler(srv, web.Config{Gatherer: reg, Logger: log, Token: httpToken})
		go func() { webDone <- web.Serve(ctx, webLn, h, log) }()
	} else {
		webDone <- nil
	}
	adminDone := make(chan error, 1)
	ways := pre.admin
	pre.admin = nil
	go func() { adminDone <- ways.run(ctx, srv, log) }()
	if world == nil {
		log.Info("relay host ready: waiting for the arbiter's world", "password", len(cfg.Password) > 0,
			"mods", len(bundle.Mods), "def_databases", len(bundle.Set.Databases), "embedded_content", bundle.Embedded)
	} else {
		log.Info("world ready", "maps", len(world.MapIDs()), "tick", world.Tick(), "password", len(cfg.Password) > 0, "desync_reports", cfg.DesyncDir,
			"mods", len(bundle.Mods), "def_databases", len(bundle.Set.Databases), "embedded_content", bundle.Embedded)
	}
	game := pre.game
	pre.game = nil // ServeListeners closes it
	err = srv.ServeListeners(ctx, game)
	stop() // the status page goes with the host, whatever ended it
	if werr := <-webDone; werr != nil {
		log.Warn("status page stopped with an error", "err", werr)
	}
	if aerr := <-adminDone; aerr != nil {
		log.Warn("RCON stopped with an error", "err", aerr)
	}
	if err != nil {
		return err
	}
	if rec := srv.FinalSave(); rec != nil && rec.Err != "" {
		log.Error("host stopped, but its final save failed", "path", rec.Path, "err", rec.Err)
		return finalSaveFailed(rec.Path, rec.Err)
	}
	log.Info("host stopped")
	return nil
}

// warnOpen says so when anyone who reaches the host may join: it listens
// on every interface (the default --listen) without a password.
func warnOpen(addr net.Addr, password bool, log *slog.Logger) {
	ta, ok := addr.(*net.TCPAddr)
	if password || !ok || !ta.IP.IsUnspecified() {
		return
	}
	log.Warn("the host accepts players on every interface with no password: anyone who can reach port "+
		strconv.Itoa(ta.Port)+" may join; set a password with --password-file or "+cliutil.PasswordEnv+
		", or try it on this machine only with --listen 127.0.0.1:"+strconv.Itoa(ta.Port), "addr", addr.String())
}

// startWorld loads the save start names, or generates a new world: after
// --force-new has moved an old colony aside, or refused by --new over one.
// resumed says the world came from the save.
func startWorld(c *cli.Context, start *saveStart, bundle *gamecontent.Bundle, log *slog.Logger) (world lockstep.Sim, resumed bool, err error) {
	switch {
	case start != nil && c.Bool("force-new") && len(start.existing) > 0:
		into, err := start.moveAside(time.Now())
		if err != nil {
			return nil, false, err
		}
		log.Warn("--force-new: moved the old colony's files aside; none was deleted", "into", into, "files", len(start.existing))
	case start != nil && c.Bool("new") && len(start.existing) > 0:
		return nil, false, start.refuseNew()
	}
	if start != nil && !c.Bool("new") && !c.Bool("force-new") {
		loadStart := time.Now()
		sim, f, err := start.load(bundle, c.Bool("recover"), log)
		if err != nil {
			return nil, false, err
		}
		log.Info("save loaded", "path", f.Path, "tick", f.Meta.Tick, "bytes", f.Size, "ms", time.Since(loadStart).Milliseconds())
		return sim, true, nil
	}
	genStart := time.Now()
	w, wcfg, err := newWorld(c, bundle, log)
	if err != nil {
		return nil, false, err
	}
	log.Info("world generated", "maps", wcfg.Maps, "map_size", wcfg.Width, "seed", wcfg.Seed, "ms", time.Since(genStart).Milliseconds())
	return w, false, nil
}

// hostConfig builds the host's configuration from serve's flags (values
// from the config file included): everything but the world and the
// content. bundle is only called when a save is written, once the
// content is loaded.
func hostConfig(c *cli.Context, bundle func() *gamecontent.Bundle, log *slog.Logger) (host.Config, error) {
	if err := cliutil.CheckListenAddr("--listen", c.String("listen")); err != nil {
		return host.Config{}, err
	}
	factions, err := roster.ParseFactionMode(c.String("factions"))
	if err != nil {
		return host.Config{}, cliutil.Usagef("--factions: %v", err)
	}
	pw, err := cliutil.Password(c.String("password-file"))
	if err != nil {
		return host.Config{}, err
	}
	autosave := c.Duration("autosave")
	if autosave == 0 {
		autosave = -1 // the config's "never"
	}
	lag, err := host.ParseLagPolicy(c.String("lag-policy"))
	if err != nil {
		return host.Config{}, cliutil.Usagef("--lag-policy: %v", err)
	}
	data, err := dataDir(c)
	if err != nil {
		return host.Config{}, err
	}
	tlsCfg, err := serverTLS(c, data, log)
	if err != nil {
		return host.Config{}, err
	}
	relay, err := relayConfig(c)
	if err != nil {
		return host.Config{}, err
	}
	spectators := c.Int("max-spectators")
	if spectators == 0 {
		spectators = -1 // the config's "none"
	}
	cfg := host.Config{
		GameName:          c.String("game-name"),
		TickRate:          c.Int("tick-rate"),
		MaxPlayers:        c.Int("max-players"),
		MaxSpectators:     spectators,
		Factions:          factions,
		Password:          pw,
		ConnRate:          c.Float64("conn-rate"),
		MaxPending:        c.Int("max-pending"),
		MaxPendingPerAddr: c.Int("max-pending-per-addr"),
		MinDownloadRate:   c.Float64("min-download-rate"),
		DropCooldown:      c.Duration("drop-cooldown"),
		LazyJoinPoints:    c.Bool("lazy-join-points"),
		Compression:       c.String("compression"),
		LagPolicy:         lag,
		MaxLag:            c.Uint64("max-lag"),
		MaxHold:           c.Duration("max-hold"),
		CommandRate:       c.Float64("command-rate"),
		CommandBurst:      max(1, int(2*c.Float64("command-rate"))),
		Save: host.SaveConfig{Path: c.String("save"), Every: autosave, Keep: c.Int("keep"),
			Meta: func() saves.Meta { return hostcontent.SaveMeta(bundle(), c.String("game-name")) }},
		ConnBurst:      max(1, int(2*c.Float64("conn-rate"))),
		HashEvery:      c.Int("hash-every"),
		DesyncDir:      filepath.Join(data, desync.DirName),
		BanFile:        filepath.Join(data, host.BansFileName),
		DesyncLimit:    c.Int("desync-limit"),
		DesyncWindow:   c.Duration("desync-window"),
		DropUnverified: c.Int("drop-unverified"),
		TLS:            tlsCfg,
		Logger:         log,
		Relay:          relay,
	}
	if err := cfg.Defaults().Validate(); err != nil {
		return host.Config{}, cliutil.Usagef("%v", err)
	}
	return cfg, nil
}

// statusToken is the token the status routes ask for: the first line of
// --http-token-file, else web.TokenEnv, else none.
func statusToken(c *cli.Context) (string, error) {
	if c.String("http") == "" && c.String("http-token-file") != "" {
		return "", cliutil.Usagef("--http-token-file needs --http")
	}
	tok, err := cliutil.Secret("status token", c.String("http-token-file"), web.TokenEnv)
	if err != nil {
		return "", cliutil.Usagef("--http-token-file: %v", err)
	}
	return string(tok), nil
}
