// Command join joins a lockstep co-op session from another machine: it
// downloads the host's world with a progress bar, catches up to the host's
// tick, reports WorldReady and stays in the session. "join defs" inspects
// and compares def databases offline.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/cmd/internal/contentcli"
	"github.com/lockhost/lockhost/cmd/internal/defscli"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/internal/gcpolicy"
	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/ws"
	"github.com/lockhost/lockhost/wire"
	"github.com/urfave/cli/v2"
)

// Where the tool reads and writes; variables so tests can stand in.
var (
	stdin  io.Reader = os.Stdin
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)

func main() {
	gcpolicy.ApplyJoin()
	code := cliutil.Run(newApp(), os.Args, stderr, classify)
	drainICE()
	os.Exit(code)
}

// classify maps join errors to exit codes: 3 when the host refused or
// ended the session, 4 for network failures (a WebSocket upgrade the
// host answered busy, 503, after the tries its Retry-After allowed, or
// answered with another status), a host's content that breaks its own
// offer (hostContentFault), timeouts and reconnecting given up,
// and 1 for anything else (a bug, or this machine failing). A join that
// cannot start as asked (startError) or was stopped before WorldReady
// (stoppedError) carries its own code.
func classify(err error) int {
	var re *join.RejectedError
	var me *tlsid.MismatchError
	var pin *coord.PinError
	if errors.As(err, &re) || errors.As(err, &me) || errors.As(err, &pin) || errors.Is(err, join.ErrNotRelay) {
		return cliutil.ExitRejected
	}
	var cs *coord.StatusError
	if errors.As(err, &cs) {
		return cliutil.ExitNetwork
	}
	var na *noAnswer
	var tm *tlsMismatch
	var gu *join.GaveUpError
	var se *ws.StatusError
	if errors.As(err, &na) || errors.As(err, &tm) || errors.As(err, &gu) || errors.As(err, &se) {
		return cliutil.ExitNetwork
	}
	if hostContentFault(err) {
		return cliutil.ExitNetwork
	}
	var ne net.Error
	var pe *join.ProtocolError
	if errors.As(err, &ne) || errors.As(err, &pe) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) || isEOF(err) {
		return cliutil.ExitNetwork
	}
	return cliutil.ExitFailure
}

// hostContentFault reports whether err is content the host sent that
// breaks its own offer (--fetch-content): a file whose bytes do not hash
// to what the manifest says, a path the cache refuses or a manifest over
// a limit. The host is at fault, as for any protocol error.
func hostContentFault(err error) bool {
	return errors.Is(err, modsync.ErrHashMismatch) || errors.Is(err, modsync.ErrUnsafePath) || errors.Is(err, modsync.ErrLimit)
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func newApp() *cli.App {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "name", Usage: "your `NAME` in the session: 3 to 15 letters, digits or underscores"},
		&cli.BoolFlag{Name: "exit-after-ready", Usage: "leave right after WorldReady (for scripts)"},
		&cli.BoolFlag{Name: "spectate", Usage: "watch the session: get the world and the live game, send no commands"},
		cliutil.PasswordFlag("the session password, if the host asks for one"),
		&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "give up if download and catch-up take longer (more than 0)"},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar"},
		&cli.Float64Flag{Name: "bot", Usage: "after joining, send about `RATE` random valid commands per second (demos, load tests; 0: none)"},
		&cli.BoolFlag{Name: "no-input", Usage: "do not read commands from standard input"},
		&cli.BoolFlag{Name: "no-reconnect", Usage: "when the connection drops, while joining or playing, stop instead of retrying with the session token"},
		&cli.DurationFlag{Name: "reconnect-for", Value: defaultReconnectFor, Usage: "after a drop, keep trying to reconnect for this long, then exit 4 (more than 0; --no-reconnect for no retries)"},
		&cli.StringFlag{Name: "make-terrain", Value: "auto", Usage: "make the maps' terrain from the host's recipes instead of downloading it: " +
			"auto (when that spares more download time than making it takes here, timed on the first map; never from a host on this machine or its LAN), always or never"},
		&cli.Float64Flag{Name: "link-mbit", Usage: "with --make-terrain auto: the link's expected throughput from the host, Mbit/s, weighed against making the terrain (default: about a home uplink's, 24)"},
		&cli.IntFlag{Name: "max-download-mib", Value: 2048, Usage: "refuse a world whose compressed transfer is larger than this (1 or more)"},
		&cli.BoolFlag{Name: "tls", Usage: "speak TLS to a host started with --tls: its certificate is trusted on first use and pinned in the known-hosts file"},
		&cli.StringFlag{Name: "fingerprint", Usage: "with --tls: accept only a host certificate with this `SHA256` fingerprint (as host serve --tls prints it)"},
		&cli.StringFlag{Name: "known-hosts", Usage: "with --tls: the `FILE` of pinned host fingerprints (default: known_hosts in the lockhost config folder)"},
		&cli.BoolFlag{Name: "debug-no-huge-pages", Hidden: true, Usage: "debugging: do not ask the kernel for huge pages for the world's memory"},
		&cli.StringFlag{Name: "debug-cpuprofile", Hidden: true, Usage: "debugging: write a CPU profile of the join, from the start to WorldReady, to `FILE`"},
		&cli.StringFlag{Name: "debug-memprofile", Hidden: true, Usage: "debugging: write a heap profile of the loaded world to `FILE` right after WorldReady"},
		&cli.StringFlag{Name: "debug-corrupt-map", Hidden: true, Usage: "debugging: change map MAP's state on this machine only at tick TICK (`MAP@TICK`), to exercise desync detection and repair"},
	}
	flags = append(flags, arbiterFlags()...)
	flags = append(flags, discoveryFlags()...)
	flags = append(flags, inviteFlags()...)
	flags = append(flags, contentcli.Flags()...)
	flags = append(flags, contentFlags()...)
	flags = append(flags, cliutil.LogFlags()...)
	app := &cli.App{
		Writer:    stdout,
		Name:      "join",
		Usage:     "join a lockstep co-op session",
		UsageText: "join HOST[:PORT] --name NAME [options]\njoin +CODE --name NAME --coordinator URL [options]   (an invite code)\njoin HOSTNAME --name NAME [options]   (a host join discover lists)\njoin ws://HOST:PORT/ws --name NAME [options]\njoin discover\njoin ping HOST[:PORT] [--json] [--count N]\njoin defs scan|export|diff ...\njoin content ls|verify|prune [--content-cache DIR]",
		Description: fmt.Sprintf("Connects to a host (default port %d; or through WebSocket to a ws:// or wss:// URL, the\n"+
			"host's --http address and the path /ws), checks that your content matches, downloads the\n"+
			"world, simulates it up to the host's tick and prints WorldReady, then follows the session\n"+
			"printing notices. Commands typed on standard input play (type help; for example\n"+
			"'speed 2' or 'spawn Steel 0 10 12 25'); --bot RATE sends random valid ones. quit, the end\n"+
			"of standard input (Ctrl-D, a script's end) or Ctrl-C leaves; with --no-input, Ctrl-C.\n\n"+
			"Exit codes: 0 success (Ctrl-C after WorldReady leaves and exits 0), 1 any other failure\n"+
			"(a bug, or this machine failing), 2 usage error or a join that cannot start as asked\n"+
			"(content that does not load), 3 refused or ended by the host, 4 network failure, host\n"+
			"busy, timeout or reconnecting given up, 130 stopped (Ctrl-C) before WorldReady: the host\n"+
			"is told, and counts a leave.", wire.DefaultPort),
		Flags:    flags,
		Action:   run,
		Commands: []*cli.Command{discoverCommand(), pingCommand(), defscli.Command(), contentCommand()},
	}
	cliutil.SetVersion(app, wire.ProtocolVersion)
	return app
}

// hostAddr adds the default port when addr has none; a WebSocket URL
// stays as it is.
func hostAddr(addr string) string {
	if _, _, err := net.SplitHostPort(addr); err == nil || ws.IsURL(addr) {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(wire.DefaultPort))
}

// checkHostAddr refuses a HOST[:PORT] whose port is not a port number,
// or a WebSocket URL without a host, as a usage mistake, before anything
// is dialled.
func checkHostAddr(arg string) error {
	if ws.IsURL(arg) {
		return checkWebSocketURL(arg)
	}
	_, port, err := net.SplitHostPort(hostAddr(arg))
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil || port == "0" {
		return cliutil.Usagef("%q: give the host as HOST or HOST:PORT, the port a number from 1 to 65535", arg)
	}
	return nil
}

// checkWebSocketURL refuses a ws:// or wss:// URL that names no host or
// whose port is not a port number.
func checkWebSocketURL(arg string) error {
	u, err := url.Parse(arg)
	if err == nil && u.Hostname() == "" {
		err = errors.New("no host")
	}
	if err == nil && u.Port() != "" {
		if p, perr := strconv.ParseUint(u.Port(), 10, 16); perr != nil || p == 0 {
			err = errors.New("bad port")
		}
	}
	if err != nil {
		return cliutil.Usagef("%q: give a WebSocket host as ws://HOST:PORT%s or wss://HOST:PORT%s, the port a number from 1 to 65535", arg, ws.Path, ws.Path)
	}
	return nil
}

func run(c *cli.Context) error {
	name, err := checkJoinArgs(c)
	if err != nil {
		return err
	}
	log, err := cliutil.Logger(c, stderr)
	if err != nil {
		return err
	}
	bundle, err := contentcli.Load(c, log, slog.LevelDebug)
	if err != nil {
		return cannotStart(err)
	}
	if err := checkNumbers(c, "join"); err != nil {
		return err
	}
	window, err := reconnectWindow(c)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()

	pw, err := cliutil.Password(c.String("password-file"))
	if err != nil {
		return err
	}
	corrupt, err := parseCorrupt(c.String("debug-corrupt-map"))
	if err != nil {
		return err
	}
	prof, err := openMemProfile(c.String("debug-memprofile"))
	if err != nil {
		return cannotStart(err)
	}
	defer prof.close()
	cpu, err := startCPUProfile(c.String("debug-cpuprofile"))
	if err != nil {
		return cannotStart(err)
	}
	defer cpu.stop()
	tgt, err := joinTarget(ctx, c)
	if err != nil {
		return err
	}
	if bundle, err = fetchContent(ctx, c, tgt.reach(log), bundle, log); err != nil {
		return err
	}
	bar := newProgressBar(stderr, c.Bool("quiet"))
	typed := &typedLog{out: stdout}
	cfg := joinConfig(c, tgt, bundle, bar, typed)
	cfg.Name, cfg.Password, cfg.OnStep, cfg.Logger = name, pw, corrupt.onStep, log
	if !c.Bool("debug-no-huge-pages") {
		cfg.PrepareMemory = func(raw, payload uint64) { prepareMemory(log, raw, payload) }
	}
	if err := arbiterConfig(c, &cfg, bundle); err != nil {
		return err
	}
	if err := terrainConfig(c, &cfg, bundle); err != nil {
		return err
	}
	rc := newReconnector(cfg, window)
	sess, err := firstJoin(ctx, rc)
	bar.clear()
	if err != nil {
		return explain(err, bundle, passwordFrom(c))
	}
	tgt.joined(cfg.Addr)
	if err := cpu.stop(); err != nil {
		return err
	}
	printReady(sess)
	if err := prof.write(); err != nil {
		return err
	}
	if c.Bool("exit-after-ready") {
		return leaveNow(sess, log)
	}
	return play(ctx, c, rc, sess, typed, bundle)
}

// leaveNow leaves the session right after WorldReady
// (--exit-after-ready).
func leaveNow(sess *join.Session, log *slog.Logger) error {
	if err := sess.Leave("exit after ready"); err != nil {
		log.Debug("leave", "err", err)
	}
	return nil
}

// checkJoinArgs checks the command line names one host, well formed, and
// a username, and returns the username.
func checkJoinArgs(c *cli.Context) (name string, err error) {
	if c.NArg() != 1 {
		return "", cliutil.Usagef("give the host to join: join HOST[:PORT] --name NAME")
	}
	name = c.String("name")
	if name == "" {
		return "", cliutil.Usagef("give a username with --name")
	}
	if arg := c.Args().First(); coord.IsCode(arg) {
		if _, err := coord.ParseCode(arg); err != nil {
			return "", cliutil.Usagef("%v", err)
		}
	} else if err := checkHostAddr(arg); err != nil {
		return "", err
	}
	return name, nil
}

// reconnectWindow is how long a dropped session is rejoined for:
// --reconnect-for, which must be positive, or 0 with --no-reconnect.
func reconnectWindow(c *cli.Context) (time.Duration, error) {
	window := c.Duration("reconnect-for")
	if window <= 0 {
		return 0, cliutil.Usagef("--reconnect-for must be more than 0 (use --no-reconnect to stop at the first drop)")
	}
	if c.Bool("no-reconnect") {
		return 0, nil
	}
	return window, nil
}

// dialFor is how to reach the host named addr: through WebSocket for a
// ws:// or wss:// URL, asking again while the host answers busy (503)
// within the connect's time, else over TCP (nil).
func dialFor(addr string) func(context.Context, string) (net.Conn, error) {
	if ws.IsURL(addr) {
		return ws.DialRetry
	}
	return nil
}

// joinConfig is the join's configuration from the flags and the content,
// with its callbacks printing to standard output over the progress bar.
func joinConfig(c *cli.Context, tgt target, bundle *gamecontent.Bundle, bar *progressBar, typed *typedLog) join.Config {
	cfg := join.Config{
		Addr:         hostAddr(tgt.addr),
		Dial:         dialFor(tgt.addr),
		TLS:          tgt.tls,
		Spectate:     c.Bool("spectate"),
		Databases:    bundle.Summary(),
		MapLoader:    colony.MapLoader(bundle.Content),
		ReadyTimeout: c.Duration("timeout"),
		MaxPayload:   uint64(max(1, c.Int("max-download-mib"))) << 20,
		Progress:     bar.update,
		Notice:       func(text string) { bar.clear(); fmt.Fprintln(stdout, "notice:", termsafe.String(text)) },
		Chat:         func(line join.ChatLine) { bar.clear(); fmt.Fprintln(stdout, chatLine(line)) },
		OnApply:      typed.applied,
		Desync: func(d join.DesyncEvent) {
			bar.clear()
			fmt.Fprintln(stdout, "desync:", termsafe.String(describeDesync(d)))
		},
		Resynced: func(r join.Resync) {
			what := fmt.Sprintf("map %s", joinIDs(r.Maps))
			if r.Full {
				what = "the whole world"
			}
			fmt.Fprintf(stdout, "repair: %s swapped in at tick %d (%s, waited %s)\n", what, r.Tick, size(r.Bytes), ms(r.Wait))
		},
	}
	tgt.inv.configure(&cfg)
	return cfg
}

// pin remembers a host certificate trusted on first use (learned is nil
// without --tls).
func pin(addr string, learned func() (string, bool), known *tlsid.KnownHosts) {
	if learned == nil {
		return
	}
	if fp, isNew := learned(); isNew {
		if err := known.Remember(addr, fp); err != nil {
			fmt.Fprintf(stderr, "warning: could not pin the host's certificate: %v\n", err)
		} else {
			fmt.Fprintf(stderr, "trusting %s on first use: certificate %s, pinned in %s\n", addr, fp, known.Path)
		}
	}
}

// terrainConfig sets whether the join makes the maps' terrain itself
// (--make-terrain).
func terrainConfig(c *cli.Context, cfg *join.Config, bundle *gamecontent.Bundle) error {
	switch c.String("make-terrain") {
	case "auto":
		cfg.Sections = colony.SectionBuilder(bundle.Content)
		mbit := c.Float64("link-mbit")
		if mbit < 0 {
			return cliutil.Usagef("--link-mbit is a throughput, not %v", mbit)
		}
		cfg.LinkSpeed = mbit * 1e6 / 8 // 0: the join library's estimate
	case "always":
		cfg.Sections, cfg.SectionsAlways = colony.SectionBuilder(bundle.Content), true
	case "never":
	default:
		return cliutil.Usagef("--make-terrain is auto, always or never, not %q", c.String("make-terrain"))
	}
	return nil
}

// printReady prints the WorldReady line with the join's timings.
func printReady(sess *join.Session) {
	t := sess.Timings()
	info := sess.Info()
	fmt.Fprintf(stdout, "WorldReady tick=%d game=%q player=%d connect=%s handshake=%s download=%s load=%s catch-up=%s total=%s "+
		"world=%s compressed/%s raw codec=%s caught-up=%d ticks (%.0f ticks/s) terrain-made=%d maps-thin=%d\n",
		t.ReadyTick, info.GameName, info.PlayerID, ms(t.Connect), ms(t.Handshake), ms(t.Download), ms(t.Load), ms(t.CatchUp), ms(t.Total),
		size(t.Bytes), size(t.RawBytes), t.Codec, t.CatchUpTicks, t.CatchUpRate(), t.Sections, t.Thin)
}

// play stays in the session the reconnector joined: commands typed on
// standard input and the bot's go to the current session, and drops are
// reconnected, until Ctrl-C or the session ends for good.
func play(ctx context.Context, c *cli.Context, rc *join.Reconnector, sess *join.Session, typed *typedLog, bundle *gamecontent.Bundle) error {
	cur := &current{}
	cur.set(sess)
	info := sess.Info()
	typed.me.Store(info.PlayerID)
	// The end of standard input (Ctrl-D, a script's last line) or quit
	// leaves as Ctrl-C does.
	playCtx, leave := context.WithCancel(ctx)
	defer leave()
	if !c.Bool("no-input") {
		fmt.Fprintln(stderr, "type commands on standard input (help lists them); quit, Ctrl-D or Ctrl-C leaves")
		go func() {
			if readCommands(playCtx, stdin, cur, typed) {
				leave()
			}
		}()
	}
	go runBot(playCtx, cur, c.Float64("bot"), uint64(info.PlayerID))
	if err := stay(playCtx, cur, rc); err != nil {
		return explain(err, bundle, passwordFrom(c))
	}
	fmt.Fprintln(stdout, "left the session")
	return nil
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func size(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// target is the host to join and how: an address, or a name on the LAN,
// with the TLS settings for it; or an invite code (inv) reached through
// the coordinator.
type target struct {
	addr    string
	tls     *tls.Config
	learned func() (string, bool)
	known   *tlsid.KnownHosts
	inv     *byInvite
}

// reach is how to reach the target, for content sync before the join.
func (t target) reach(log *slog.Logger) join.Config {
	cfg := join.Config{Addr: hostAddr(t.addr), Dial: dialFor(t.addr), TLS: t.tls, Logger: log}
	t.inv.configure(&cfg)
	return cfg
}

// joinTarget finds the host to join.
func joinTarget(ctx context.Context, c *cli.Context) (target, error) {
	arg := c.Args().First()
	if coord.IsCode(arg) {
		inv, err := lookupInvite(ctx, c, arg)
		if err != nil {
			return target{}, explainLookup(err)
		}
		return target{addr: arg, inv: inv}, nil
	}
	addr, cfg, learned, known, err := targetTLS(c)
	return target{addr: addr, tls: cfg, learned: learned, known: known}, err
}

// joined pins what the join learned of the host's certificate (addr is
// the address joined).
func (t target) joined(addr string) {
	pin(addr, t.learned, t.known)
	t.inv.ready()
}

// targetTLS finds the host to join (an address, or a name on the local
// network) and builds the TLS settings for it.
func targetTLS(c *cli.Context) (string, *tls.Config, func() (string, bool), *tlsid.KnownHosts, error) {
	target, err := resolveTarget(c, c.Args().First())
	if err != nil {
		return "", nil, nil, nil, err
	}
	cfg, learned, known, err := clientTLS(c, hostAddr(target))
	return target, cfg, learned, known, err
}

// clientTLS builds the TLS settings the flags ask for (nil without
// --tls): a pin from --fingerprint, or the known-hosts file.
func clientTLS(c *cli.Context, addr string) (*tls.Config, func() (string, bool), *tlsid.KnownHosts, error) {
	if !c.Bool("tls") {
		if c.String("fingerprint") != "" {
			return nil, nil, nil, cliutil.Usagef("--fingerprint needs --tls")
		}
		return nil, nil, nil, nil
	}
	pin := ""
	if f := c.String("fingerprint"); f != "" {
		p, err := tlsid.ParseFingerprint(f)
		if err != nil {
			return nil, nil, nil, cliutil.Usagef("--fingerprint: %v", err)
		}
		pin = p
	}
	path := c.String("known-hosts")
	if path == "" {
		p, err := tlsid.DefaultKnownHostsPath()
		if err != nil {
			return nil, nil, nil, cannotStart(fmt.Errorf("known hosts file: %w", err))
		}
		path = p
	}
	known := &tlsid.KnownHosts{Path: path}
	cfg, learned := tlsid.ClientConfig(addr, pin, known)
	return cfg, learned, known, nil
}

// explain turns a join error into the one sentence a user sees;
// password says where the join's password came from (passwordFrom).
func explain(err error, bundle *gamecontent.Bundle, password string) error {
	var me *tlsid.MismatchError
	if errors.As(err, &me) {
		return fmt.Errorf("WARNING: %w", me) // the whole warning, both fingerprints, nothing else
	}
	var re *join.RejectedError
	if errors.As(err, &re) {
		if re.Reason == wire.ReasonDefs {
			printDefsDetail(re, bundle)
		}
		return &refusal{re: re, password: password}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("timed out: %w", err)
	}
	return err
}

// startError is a failure before anything is dialled that is not a
// mistake in the command line: content that does not load (a mod
// without its base), a file that cannot be opened. Like a usage error it
// exits 2, without the pointer to --help (the call was right).
type startError struct{ err error }

// cannotStart marks err as a join that cannot start as asked.
func cannotStart(err error) error { return &startError{err: err} }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// ExitCode makes a join that cannot start exit with the usage code.
func (e *startError) ExitCode() int { return cliutil.ExitUsage }

// passwordFrom says where the join's password comes from, as a refusal
// names it: the password file, the environment variable, or "" for none
// (the order cliutil.Password reads them in).
func passwordFrom(c *cli.Context) string {
	if f := c.String("password-file"); f != "" {
		return "the password file " + f
	}
	if os.Getenv(cliutil.PasswordEnv) != "" {
		return cliutil.PasswordEnv
	}
	return ""
}

// refusal is a host's refusal as the user reads it, with what to do
// about it; it keeps the RejectedError for the exit code.
type refusal struct {
	re       *join.RejectedError
	password string // where the password came from (passwordFrom)
}

func (r *refusal) Error() string {
	msg := fmt.Sprintf("refused by the host (%s): %s", r.re.Reason, r.re.Error())
	if a := r.advice(); a != "" {
		msg += " " + a
	}
	return msg
}

// advice says how to get past a refusal that the joiner's own options
// cause, or "" when none of them would help.
func (r *refusal) advice() string {
	switch r.re.Reason {
	case wire.ReasonBadPassword:
		if r.password == "" {
			return "This host asks for a password: put it on the first line of a file and add --password-file FILE, or set " +
				cliutil.PasswordEnv + "."
		}
		return "The password from " + r.password + " is not the host's: ask the host for it."
	case wire.ReasonDefs:
		return "Load the host's mods, at the host's versions, with --content DIR, once per mod in its load order (the report above says what differs), " +
			"or, when the host shares its content, join with --fetch-content to fetch what you lack."
	case wire.ReasonUsernameLength, wire.ReasonUsernameChars, wire.ReasonUsernameAlreadyOnline:
		return "Choose another name with --name."
	}
	return ""
}

func (r *refusal) Unwrap() error { return r.re }
