package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/coord/coordserver"
	"github.com/lockhost/lockhost/transport/coord/turnserver"
	"github.com/urfave/cli/v2"
)

// ownersFile is the file in the coordinator's data folder that keeps
// which host holds each code.
const ownersFile = "coordinator-owners.json"

// turnSecretEnv gives host coordinator the TURN server's shared secret.
const turnSecretEnv = "LOCKHOST_TURN_SECRET"

// coordinatorCommand is "host coordinator": run a coordinator.
func coordinatorCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "listen", Value: ":8443", Usage: "the `HOST:PORT` the coordinator serves HTTPS on (hosts, joiners, invite links)"},
		&cli.StringFlag{Name: "tls-cert", Usage: "the certificate `FILE` (PEM) to serve, for example from a certificate authority; with --tls-key"},
		&cli.StringFlag{Name: "tls-key", Usage: "the private key `FILE` (PEM) of --tls-cert"},
		&cli.BoolFlag{Name: "plain-http", Usage: "serve plain HTTP, for a coordinator behind a proxy that ends TLS (never on an open network)"},
		&cli.StringFlag{Name: "data-dir", EnvVars: []string{dataDirEnv}, DefaultText: defaultDataDir(),
			Usage: "the coordinator's data folder `DIR`: which host holds each code (" + ownersFile + "), the self-signed certificate; made if missing"},
		&cli.StringFlag{Name: "public-url", Usage: "the coordinator's `URL` as hosts and joiners reach it, for the lines it prints (default: https://THIS-MACHINE:PORT)"},
		&cli.StringSliceFlag{Name: "turn-url", Usage: "a TURN server `URL` handed to hosts and joiners with short-lived credentials, for example " +
			"turn:turn.example.org:3478?transport=udp or turns:turn.example.org:443?transport=tcp (repeat for several)"},
		&cli.StringFlag{Name: "turn-secret-file", Usage: "the `FILE` holding the secret shared with the TURN server (coturn's static-auth-secret); or set " + turnSecretEnv},
		&cli.StringFlag{Name: "turn-embedded", Usage: "also run a TURN server in this process at `HOST:PORT` (UDP and TCP, for example :3478), " +
			"checking the credentials this coordinator hands out; without --turn-url it is the TURN server handed out (default: none; coturn is the tested one)"},
		&cli.StringFlag{Name: "turn-relay-ip", Usage: "the `IP` peers reach --turn-embedded's relays at (default: its listen IP; needed when it listens on all interfaces)"},
		&cli.BoolFlag{Name: "turn-allow-private-peers", Usage: "let --turn-embedded relay to loopback, private and link-local addresses (refused by default, " +
			"so that the relay cannot reach into its own network; for a relay on a LAN or a test on one machine)"},
		&cli.IntFlag{Name: "turn-max-allocations", Value: 1000, Usage: "the most relays --turn-embedded holds open at once"},
		&cli.DurationFlag{Name: "turn-ttl", Value: time.Hour, Usage: "how long TURN credentials stay valid"},
		&cli.Float64Flag{Name: "lookup-rate", Value: 1, Usage: "invite lookups, signalling attempts and invite pages per second per source address (the /24 or /64 gets four times as many)"},
		&cli.IntFlag{Name: "lookup-burst", Value: 20, Usage: "lookups one address may make at once before --lookup-rate applies"},
		&cli.Float64Flag{Name: "register-rate", Value: 0.1, Usage: "host registrations per second per source address (the /24 or /64 gets four times as many)"},
		&cli.IntFlag{Name: "register-burst", Value: 5, Usage: "registrations one address may make at once before --register-rate applies"},
		&cli.IntFlag{Name: "max-hosts", Value: 10000, Usage: "the most hosts registered at once"},
	}
	return &cli.Command{
		Name:  "coordinator",
		Usage: "run a coordinator: invite codes, lookups and signalling for hosts behind any router",
		Description: "A coordinator lets friends join a host by an invite code (join +K7QF2MX) or an invite link\n" +
			"(https://COORDINATOR/+K7QF2MX) instead of an address. Hosts started with --coordinator URL keep a\n" +
			"connection open to it and register the addresses they can be reached at; a code is derived from a\n" +
			"secret in the host's data folder, so it stays the same across restarts. Joiners look the code up,\n" +
			"try the host's LAN and internet addresses, and can exchange connection offers with the host through\n" +
			"the coordinator. It hands out short-lived credentials for a TURN server (coturn with use-auth-secret)\n" +
			"when --turn-url and the shared secret are given, or runs one itself with --turn-embedded (pion/turn,\n" +
			"a single-binary option; without a secret it makes one for the run). It never carries game traffic\n" +
			"(a TURN relay carries only encrypted data channels); one coordinator can serve a whole community.\n" +
			"Without --tls-cert it makes a self-signed certificate in --data-dir and prints the URL with its\n" +
			"fingerprint (https://HOST:PORT#sha256:...), which hosts and joiners pin.\n" +
			"Metrics (lockhost_coordinator_*, connection attempts by outcome among them) are at /metrics.\n" +
			numbersRule,
		Flags:  withRanges(append(flags, cliutil.LogFlags()...)),
		Action: runCoordinator,
	}
}

// coordinatorConfig reads the coordinator's options.
func coordinatorConfig(c *cli.Context) (coordserver.ServerConfig, error) {
	cfg := coordserver.ServerConfig{TURNURLs: c.StringSlice("turn-url"), TURNTTL: c.Duration("turn-ttl"),
		LookupRate: c.Float64("lookup-rate"), LookupBurst: c.Int("lookup-burst"),
		RegisterRate: c.Float64("register-rate"), RegisterBurst: c.Int("register-burst"), MaxHosts: c.Int("max-hosts"),
		Player: play.Handler(play.Config{})} // invite links open the browser player, which joins through WebRTC
	secret := os.Getenv(turnSecretEnv)
	if f := c.String("turn-secret-file"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return cfg, cliutil.Usagef("--turn-secret-file: %v", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	cfg.TURNSecret = []byte(secret)
	dir, err := dataDir(c)
	if err != nil {
		return cfg, err
	}
	if err := checkDataDir(dir); err != nil {
		return cfg, err
	}
	cfg.OwnersFile = filepath.Join(dir, ownersFile)
	if err := cfg.Validate(); err != nil {
		return cfg, cliutil.Usagef("TURN: %v (give --turn-secret-file or %s with --turn-url)", err, turnSecretEnv)
	}
	return cfg, nil
}

// coordinatorTLS is the certificate the coordinator serves, and the pin
// to print for a self-signed one ("" for files given).
func coordinatorTLS(c *cli.Context, log *slog.Logger) (*tls.Config, string, error) {
	certFile, keyFile := c.String("tls-cert"), c.String("tls-key")
	if c.Bool("plain-http") {
		if certFile != "" || keyFile != "" {
			return nil, "", cliutil.Usagef("--plain-http serves no certificate: drop --tls-cert and --tls-key")
		}
		return nil, "", nil
	}
	var cert tls.Certificate
	var err error
	pin := ""
	switch {
	case certFile != "" && keyFile != "":
		cert, err = tlsid.LoadFiles(certFile, keyFile)
	case certFile != "" || keyFile != "":
		return nil, "", cliutil.Usagef("give both --tls-cert and --tls-key, or neither for a self-signed certificate")
	default:
		dir, derr := dataDir(c)
		if derr != nil {
			return nil, "", derr
		}
		var created bool
		cert, created, err = tlsid.LoadOrCreate(dir)
		if created {
			log.Info("made a self-signed certificate", "dir", dir)
		}
		pin = tlsid.Fingerprint(cert)
	}
	if err != nil {
		return nil, "", fmt.Errorf("TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, pin, nil
}

// coordinatorURL is the URL hosts and joiners give as --coordinator.
func coordinatorURL(c *cli.Context, addr net.Addr, plain bool, pin string) string {
	u := c.String("public-url")
	if u == "" {
		scheme := "https"
		if plain {
			scheme = "http"
		}
		host, port, _ := net.SplitHostPort(addr.String())
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			if name, err := os.Hostname(); err == nil {
				host = name
			}
		}
		u = scheme + "://" + net.JoinHostPort(host, port)
	}
	if pin != "" && !strings.Contains(u, "#") {
		u += "#" + pin
	}
	return u
}

// startEmbeddedTURN starts --turn-embedded's TURN server, if given, with
// cfg's secret (a random one for this run when none is given) and, when
// no --turn-url is, hands out its URLs.
func startEmbeddedTURN(c *cli.Context, cfg *coordserver.ServerConfig) (*turnserver.Server, error) {
	addr := c.String("turn-embedded")
	if addr == "" {
		if c.IsSet("turn-relay-ip") || c.IsSet("turn-max-allocations") || c.IsSet("turn-allow-private-peers") {
			return nil, cliutil.Usagef("--turn-relay-ip, --turn-max-allocations and --turn-allow-private-peers need --turn-embedded")
		}
		return nil, nil
	}
	tcfg := turnserver.Config{Addr: addr, Secret: cfg.TURNSecret, MaxAllocations: c.Int("turn-max-allocations"),
		AllowPrivatePeers: c.Bool("turn-allow-private-peers")}
	if ip := c.String("turn-relay-ip"); ip != "" {
		if tcfg.RelayIP = net.ParseIP(ip); tcfg.RelayIP == nil || tcfg.RelayIP.IsUnspecified() {
			return nil, cliutil.Usagef("--turn-relay-ip %q: give the IP address peers reach this machine at", ip)
		}
	}
	if len(tcfg.Secret) == 0 { // no --turn-url either (coordinatorConfig refuses that): the secret stays in this process
		tcfg.Secret = make([]byte, 32)
		rand.Read(tcfg.Secret)
		cfg.TURNSecret = tcfg.Secret
	}
	if err := tcfg.Validate(); errors.Is(err, turnserver.ErrNoRelayIP) {
		return nil, cliutil.Usagef("--turn-embedded %s listens on all interfaces: give --turn-relay-ip, the IP peers reach this machine at", addr)
	} else if err != nil {
		return nil, cliutil.Usagef("--turn-embedded: %v", err)
	}
	srv, err := turnserver.Start(tcfg)
	if err != nil {
		return nil, cliutil.Usagef("--turn-embedded %s: %v", addr, err)
	}
	if len(cfg.TURNURLs) == 0 {
		cfg.TURNURLs = srv.URLs()
	}
	return srv, nil
}

// runCoordinator serves a coordinator until interrupted.
func runCoordinator(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Usagef("coordinator takes no arguments, got %q", c.Args().First())
	}
	log, err := cliutil.Logger(c, os.Stderr)
	if err != nil {
		return err
	}
	if err := checkNumbers(c); err != nil {
		return err
	}
	cfg, err := coordinatorConfig(c)
	if err != nil {
		return err
	}
	cfg.Logger = log
	relay, err := startEmbeddedTURN(c, &cfg)
	if err != nil {
		return err
	}
	if relay != nil {
		defer relay.Close()
		log.Info("embedded TURN server ready", "port", relay.Port(), "urls", strings.Join(relay.URLs(), " "), "handed_out", strings.Join(cfg.TURNURLs, " "))
	}
	tlsCfg, pin, err := coordinatorTLS(c, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.String("listen"))
	if err != nil {
		return cliutil.Usagef("--listen %s: %v", c.String("listen"), err)
	}
	url := coordinatorURL(c, ln.Addr(), tlsCfg == nil, pin)
	if _, err := coord.ParseURL(url); err != nil {
		ln.Close()
		return cliutil.Usagef("--public-url: %v", err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	handler, err := coordserver.NewServer(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	log.Info("coordinator ready", "addr", ln.Addr().String(), "url", url, "turn_urls", len(cfg.TURNURLs))
	fmt.Fprintf(os.Stderr, "coordinator ready; hosts register with:\n  host serve --coordinator %s\nand friends join with:\n  join +CODE --coordinator %s\n", url, url)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("coordinator: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	srv.Close() // hosts' and joiners' WebSockets are hijacked: Shutdown does not wait for them
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("coordinator stopped")
	return nil
}
