// Command host runs a lockstep co-op session: "host serve" hosts the
// embedded default world (or content given with --content) for joiners,
// and "host defs" inspects and compares def databases offline.
package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"github.com/lockhost/lockhost/transport/coordice"
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
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/gcpolicy"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/operator/agones"
	"github.com/lockhost/lockhost/operator/metrics"
	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/ws"
	"github.com/lockhost/lockhost/wire"
	"github.com/urfave/cli/v2"
)

func main() {
	gcpolicy.ApplyHost()
	code := cliutil.Run(newApp(), os.Args, os.Stderr, nil)
	drainICE()
	os.Exit(code)
}

func newApp() *cli.App {
	app := &cli.App{
		Name:  "host",
		Usage: "host a lockstep co-op session",
		Description: "Runs the session's simulation and admits players with 'join'. Every player runs the\n" +
			"same deterministic world; only commands travel once a player has joined.",
		Commands: []*cli.Command{serveCommand(), coordinatorCommand(), savesCommand(), desyncsCommand(), replayCommand(), defscli.Command()},
	}
	cliutil.SetVersion(app, wire.ProtocolVersion)
	return app
}

func serveCommand() *cli.Command {
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
		Flags:  serveFlags(),
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

// serving is what serve has checked, opened and made, step by step, before
// and while the host runs.
type serving struct {
	c         *cli.Context
	log       *slog.Logger
	httpToken string
	cfg       host.Config
	pre       *prepared
	observer  *metrics.Host       // nil without --http
	bundle    *gamecontent.Bundle // nil for a relay host with --defs-manifest or --defs-from-arbiter
	content   host.Content        // what the host announces to joiners
	world     lockstep.Sim
	srv       *host.Server
	// agones speaks to the Agones SDK server (nil outside Agones).
	agones *agones.Client
	agent  *agones.Agent // nil outside Agones
	// relaySaved is true for a relay host resumed from a save: it has
	// its world, and serves joiners before any arbiter comes.
	relaySaved bool
	// portMap is the router's forwarding of the game port (nil when the
	// host asks no router).
	portMap *portMapping
	// ice answers joiners who come through the coordinator (nil without
	// --coordinator).
	ice *coordice.Answerer
}

// serve hosts a session until interrupted. The configuration is checked,
// and every folder, file and port the host needs is checked or opened,
// before the content is read and the world generated or loaded, which can
// take seconds: a slip fails at once.
func serve(c *cli.Context) error {
	s := &serving{c: c}
	if err := s.check(); err != nil {
		return err
	}
	pre, err := prepare(c, s.log)
	if err != nil {
		return err
	}
	defer pre.close()
	s.pre = pre
	warnOpen(pre.game.Addr(), len(s.cfg.Admission.Password) > 0, s.log)
	if pre.web != nil {
		s.observer = metrics.New()
		s.cfg.Observer = s.observer
	}
	if err := s.makeServer(); err != nil {
		return err
	}
	s.agent = s.newAgent()
	err = s.run()
	agonesShutdown(s.agones, s.log) // after the final save
	if err != nil {
		return err
	}
	if rec := s.srv.FinalSave(); rec != nil && rec.Err != "" {
		s.log.Error("host stopped, but its final save failed", "path", rec.Path, "err", rec.Err)
		return finalSaveFailed(rec.Path, rec.Err)
	}
	s.log.Info("host stopped")
	return nil
}

// check reads and checks serve's options: the logger, the status token,
// the data folder and the host's configuration.
func (s *serving) check() error {
	c := s.c
	if c.NArg() > 0 {
		return cliutil.Usagef("serve takes no arguments, got %q", c.Args().First())
	}
	if err := checkNumbers(c); err != nil {
		return err
	}
	var err error
	if s.log, err = cliutil.Logger(c, os.Stderr); err != nil {
		return err
	}
	if path := c.String("config"); path != "" {
		s.log.Info("config file read", "path", path)
	}
	if s.httpToken, err = statusToken(c); err != nil {
		return err
	}
	if err := checkShareFlags(c); err != nil {
		return err
	}
	if s.agones, err = agonesClient(c); err != nil {
		return err
	}
	data, err := dataDir(c)
	if err != nil {
		return err
	}
	if err := checkDataDir(data); err != nil {
		return err
	}
	if s.cfg, err = hostConfig(c, func() host.Content { return s.content }, s.log); err != nil {
		return err
	}
	s.cfg.Reach = s.reach
	if (c.Bool("new") || c.Bool("force-new") || c.Bool("recover")) && c.String("save") == "" {
		return cliutil.Usagef("--new, --force-new and --recover need --save")
	}
	if _, err = planPortMapping(c.String("port-mapping"), "", false, func(string) (bool, string) { return false, "" }); err != nil {
		return err
	}
	_, err = checkCoordinator(c)
	return err
}

// makeServer reads the content, generates or loads the world and makes
// the host's server around it. A relay host whose def databases come from
// a manifest or its arbiter reads no content.
func (s *serving) makeServer() error {
	if !relayOwnDefs(s.c) {
		bundle, err := contentcli.Load(s.c, s.log, slog.LevelInfo)
		if err != nil {
			return err
		}
		s.bundle = bundle
	}
	var err error
	s.srv, s.world, s.content, s.relaySaved, err = newServer(s.c, s.cfg, s.pre.start, s.bundle, s.log)
	return err
}

// contentLog describes, for the log line that says the host is ready,
// where its def databases come from.
func (s *serving) contentLog() []any {
	from := "content"
	switch {
	case s.c.String("defs-manifest") != "":
		from = "manifest"
	case s.cfg.Relay.DefsFromArbiter:
		from = "arbiter"
	case s.bundle.Embedded:
		from = "embedded content"
	}
	return []any{"mods", len(s.content.Mods), "def_databases", len(s.content.Databases), "defs_from", from}
}

// run serves the game, the status page and the admin ways in until an
// interrupt or an error ends the host, and waits for all of them.
func (s *serving) run() error {
	ctx, stop := signal.NotifyContext(s.c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if s.portMap = s.startPortMapping(ctx, s.pre.game.Addr()); s.portMap != nil {
		defer s.portMap.stop() // after stop: a search under way ends with ctx
	}
	if err := s.startInvite(ctx); err != nil {
		return err
	}
	webDone, players, err := s.startWeb(ctx)
	if err != nil {
		return err
	}
	adminDone := make(chan error, 1)
	ways := s.pre.admin
	s.pre.admin = nil
	go func() { adminDone <- ways.run(ctx, s.srv, s.log) }()
	switch {
	case s.world == nil && s.relaySaved:
		s.log.Info("relay host ready: serving the saved world", append([]any{"password", len(s.cfg.Admission.Password) > 0},
			s.contentLog()...)...)
	case s.world == nil:
		s.log.Info("relay host ready: waiting for the arbiter's world", append([]any{"password", len(s.cfg.Admission.Password) > 0},
			s.contentLog()...)...)
	default:
		s.log.Info("world ready", append([]any{"maps", len(s.world.MapIDs()), "tick", s.world.Tick(),
			"password", len(s.cfg.Admission.Password) > 0, "desync_reports", s.cfg.Desync.Dir}, s.contentLog()...)...)
	}
	game := s.pre.game
	s.pre.game = nil // ServeListeners closes it, players included
	if players != nil {
		game.Extra = append(game.Extra, players)
	}
	if s.ice != nil {
		game.Extra = append(game.Extra, s.ice.Listener())
	}
	agonesDone := s.startAgones(ctx)
	err = s.srv.ServeListeners(ctx, game)
	stop() // the status page goes with the host, whatever ended it
	<-agonesDone
	if werr := <-webDone; werr != nil {
		s.log.Warn("status page stopped with an error", "err", werr)
	}
	if aerr := <-adminDone; aerr != nil {
		s.log.Warn("RCON stopped with an error", "err", aerr)
	}
	return err
}

// startWeb serves the status page on the --http listener, if any, until
// ctx ends; the channel says how it ended (at once nil without one). The
// listener also takes players over WebSocket at /ws: the returned
// listener, for the session to serve beside the game port (nil without
// --http).
func (s *serving) startWeb(ctx context.Context) (<-chan error, *ws.Listener, error) {
	done := make(chan error, 1)
	webLn := s.pre.web
	if webLn == nil {
		done <- nil
		return done, nil, nil
	}
	s.pre.web = nil // Serve closes it
	reg, err := metrics.NewRegistry(s.observer, s.srv)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics: %w", err)
	}
	if s.agent != nil {
		reg.MustRegister(s.agent.Collector())
	}
	// The read limit per message is the protocol's largest frame and a
	// little more (ws.DefaultReadLimit): the host's own frame limits
	// apply above it, as on TCP.
	players := ws.NewListener(ws.Options{Addr: webLn.Addr(), Logger: s.log, OriginPatterns: s.c.StringSlice("http-origin")})
	data, err := dataDir(s.c)
	if err != nil {
		return nil, nil, err
	}
	// The viewer lists and plays the recordings of the data folder,
	// this session's (--record) and earlier ones.
	playing := play.Handler(play.Config{Replays: filepath.Join(data, replayDirName)})
	h := web.Handler(s.srv, web.Config{Gatherer: reg, Logger: s.log, Token: s.httpToken, Players: players, Play: playing, Agones: s.agonesStatus(),
		PortMapping: s.portMappingView, Content: s.srv.ContentHandler()})
	logJoinURLs(s.log, webLn.Addr(), machineInterfaces())
	go func() { done <- web.Serve(ctx, webLn, h, s.log) }()
	return done, players, nil
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
// content. content is only called when a save is written, once the
// content is loaded.
func hostConfig(c *cli.Context, content func() host.Content, log *slog.Logger) (host.Config, error) {
	if err := cliutil.CheckListenAddr("--listen", c.String("listen")); err != nil {
		return host.Config{}, err
	}
	var cfg host.Config
	if err := setConfigFields(c, &cfg); err != nil {
		return host.Config{}, err
	}
	pw, err := cliutil.Password(c.String("password-file"))
	if err != nil {
		return host.Config{}, err
	}
	data, err := dataDir(c)
	if err != nil {
		return host.Config{}, err
	}
	tlsCfg, err := serverTLS(c, data, log)
	if err != nil {
		return host.Config{}, err
	}
	cfg.Admission.Password, cfg.Admission.TLS = pw, tlsCfg
	if cfg.Join.MaxUploadRate, err = uploadRate(c); err != nil {
		return host.Config{}, err
	}
	cfg.Admission.ConnBurst = max(1, int(2*cfg.Admission.ConnRate))
	cfg.Admission.BanFile = filepath.Join(data, host.BansFileName)
	cfg.Limits.CommandBurst = max(1, int(2*cfg.Limits.CommandRate))
	cfg.Desync.Dir = filepath.Join(data, desync.DirName)
	if err := recordConfig(c, data, &cfg); err != nil {
		return host.Config{}, err
	}
	if c.Bool("relay") && !c.IsSet("game-name") {
		cfg.GameName = host.DefaultConfig().Relay.GameName // a relay host serves any game
	}
	name := cfg.GameName
	cfg.Save.Meta = func() saves.Meta { return hostcontent.ContentMeta(content(), name) }
	cfg.Logger = log
	relay, err := relayConfig(c)
	if err != nil {
		return host.Config{}, err
	}
	cfg.Relay = relay
	if err := cfg.Defaults().Validate(); err != nil {
		return host.Config{}, cliutil.Usagef("%v", err)
	}
	return cfg, nil
}

// statusToken is the token the status routes ask for: the first line of
// --http-token-file, else web.TokenEnv, else none.
func statusToken(c *cli.Context) (string, error) {
	if c.String("http") == "" && len(c.StringSlice("http-origin")) > 0 {
		return "", cliutil.Usagef("--http-origin needs --http")
	}
	if c.String("http") == "" && c.String("http-token-file") != "" {
		return "", cliutil.Usagef("--http-token-file needs --http")
	}
	tok, err := cliutil.Secret("status token", c.String("http-token-file"), web.TokenEnv)
	if err != nil {
		return "", cliutil.Usagef("--http-token-file: %v", err)
	}
	return string(tok), nil
}
