package main

import (
	"fmt"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/cmd/internal/contentcli"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/transport/lan"
	"github.com/lockhost/lockhost/wire"
	"github.com/urfave/cli/v2"
)

// serveFlags are serve's options. Every default of an option that sets a
// host.Config field is read from host.DefaultConfig, so the help and the
// host agree (TestServeFlagDefaults holds them to it).
func serveFlags() []cli.Flag {
	d := host.DefaultConfig()
	flags := []cli.Flag{
		configFlag(),
		&cli.StringFlag{Name: "listen", Value: fmt.Sprintf(":%d", wire.DefaultPort), Usage: "TCP `ADDR` to accept players on"},
		portMappingFlag(),
		coordinatorFlag(),
		&cli.IntFlag{Name: "discovery-port", Value: lan.Port, EnvVars: []string{discoveryPortEnv}, Usage: "answer LAN discovery (join discover) on this UDP `PORT`, on the interfaces --listen serves"},
		&cli.StringFlag{Name: "http", Usage: "serve a live status page, /metrics (Prometheus), /healthz, /ws (players over WebSocket, admitted like those on the game port) and /play (the browser player) on `ADDR`; a bare port such as 8080 listens on loopback only, 0.0.0.0:8080 on every interface"},
		&cli.StringFlag{Name: "http-token-file", Usage: "with --http: ask for the token on the first line of `FILE` on every route but /healthz (or set " + web.TokenEnv + "); a browser asks for it as a password, a scraper sends it as a bearer token"},
		&cli.StringSliceFlag{Name: "http-origin", Usage: "with --http: let pages from this origin `PATTERN` open /ws too (repeatable; a pattern of the origin's host:port such as 127.0.0.1:* or example.com, or scheme://host); by default only the host's own pages may, and a client that is not a browser is not checked"},
		&cli.StringFlag{Name: "game-name", Value: d.GameName, Usage: "session name shown to joiners"},
		&cli.IntFlag{Name: "tick-rate", Value: d.TickRate, Usage: "simulated ticks per second at normal speed"},
		&cli.IntFlag{Name: "max-players", Value: d.Limits.MaxPlayers, Usage: "most players online at once"},
		&cli.IntFlag{Name: "max-spectators", Value: d.Limits.MaxSpectators, Usage: "most spectators online at once, counted apart from players"},
		&cli.StringFlag{Name: "factions", Value: d.Factions.String(), Usage: "shared: every player in one colony; per-player: a faction each"},
		cliutil.PasswordFlag("require this session password of every joiner"),
		&cli.Float64Flag{Name: "conn-rate", Value: d.Admission.ConnRate, Usage: "new connections per second allowed from one IP address, an IPv6 address counted by its /64 (bursts of twice that)"},
		&cli.IntFlag{Name: "max-pending", Value: d.Admission.MaxPending, Usage: "most connections still joining (not yet admitted) at once; more are refused"},
		&cli.IntFlag{Name: "max-pending-per-addr", Value: d.Admission.MaxPendingPerAddr, Usage: "most connections still joining from one address, an IPv6 address counted by its /64"},
		&cli.Float64Flag{Name: "min-download-rate", Value: d.Join.MinDownloadRate, Usage: fmt.Sprintf("slowest average world download in bytes per second: a joiner slower than that, past the %v stall allowance, is dropped and its slot freed", seconds(d.Timeouts.DownloadStall))},
		&cli.StringFlag{Name: "max-upload-rate", Value: "-1", Usage: "cap world downloads to joiners, all together, at `RATE` per second: bytes, or with a unit such as 8Mbit, 500KiB, 1MB; below your uplink, players keep their latency while a friend downloads (-1: no cap)"},
		&cli.IntFlag{Name: "max-upload-slots", Value: d.Join.MaxUploadSlots, Usage: "send the world to at most this many joiners at once; the next wait their turn, told their place in line"},
		&cli.DurationFlag{Name: "slot-share-window", Value: d.Join.SlotShareWindow, Usage: "with --max-upload-rate and --max-upload-slots: a joiner whose download runs below a quarter of its share of the rate (the rate divided by the slots) for this long while another waits yields its slot; its download pauses where it is until its turn comes again"},
		&cli.StringFlag{Name: "save", Usage: "save `FILE`: load the newest valid of it and its autosaves, save there on exit and autosave beside it; its folder must be writable"},
		&cli.BoolFlag{Name: "new", Usage: "with --save: start a new world there; refused (exit 2) if the save or its autosaves exist"},
		&cli.BoolFlag{Name: "force-new", Usage: "with --save: start a new world there, first moving an existing save and its autosaves into a dated folder beside it (nothing is deleted)"},
		&cli.BoolFlag{Name: "recover", Usage: "with --save: if the save is damaged, keep it as FILE.damaged-<time> and start from the newest valid autosave"},
		&cli.DurationFlag{Name: "autosave", Value: d.Save.Every, Usage: "autosave interval"},
		&cli.IntFlag{Name: "keep", Value: d.Save.Keep, Usage: "autosaves to keep"},
		&cli.StringFlag{Name: "lag-policy", Value: d.Lag.Policy.String(), Usage: "when a player falls --max-lag ticks behind: wait (slow, then hold time until they catch up) or drop (disconnect them)"},
		&cli.Uint64Flag{Name: "max-lag", Value: d.Lag.MaxLag, Usage: "how many ticks a player may fall behind"},
		&cli.DurationFlag{Name: "max-hold", Value: d.Lag.MaxHold, Usage: fmt.Sprintf("with --lag-policy wait: the longest time is held for one player, added up over its rejoins within %v, before they are dropped", minutes(d.Lag.HoldWindow))},
		&cli.DurationFlag{Name: "drop-cooldown", Value: d.Lag.DropCooldown, Usage: "how long a player dropped for lagging or desyncs must wait before rejoining"},
		&cli.Float64Flag{Name: "command-rate", Value: d.Limits.CommandRate, Usage: "commands per second one player may send (bursts of twice that)"},
		compressionFlag(),
		&cli.DurationFlag{Name: "rejoin-window", Value: d.Join.RejoinWindow, Usage: fmt.Sprintf("how long the host keeps the commands it stamped (at most %d MiB of them), so a player who dropped and still holds its world rejoins by replaying the ones it missed instead of downloading the world; about 0.5 MiB a minute at 100 commands a second", d.Join.RejoinWindowBytes>>20)},
		&cli.DurationFlag{Name: "rejoin-grace", Value: d.Timeouts.RejoinGrace, Usage: "how long after a drop a player may rejoin as itself with its session token"},
		&cli.BoolFlag{Name: "lazy-join-points", Value: d.Join.LazyJoinPoints, Usage: "build a join point only when a joiner needs one, instead of keeping one ready (saves CPU on an idle host; joiners wait for the compression)"},
		&cli.IntFlag{Name: "hash-every", Value: d.Desync.HashEvery, Usage: "ticks between state-hash checks of every player"},
		&cli.IntFlag{Name: "desync-limit", Value: d.Desync.Limit, Usage: "desyncs a player may have within --desync-window, counted over its rejoins, before being dropped"},
		&cli.DurationFlag{Name: "desync-window", Value: d.Desync.Window, Usage: "the window --desync-limit counts in"},
		&cli.IntFlag{Name: "drop-unverified", Value: d.Desync.DropUnverified, Usage: "drop a playing client that reports no state hashes for this many --hash-every intervals past --max-lag"},
		dataDirFlag(),
		&cli.BoolFlag{Name: "tls", Usage: "speak TLS only: a self-signed key and certificate are made in the data folder on first start and kept; the fingerprint to give joiners is printed"},
		&cli.StringFlag{Name: "tls-cert", Usage: "with --tls: use this certificate `FILE` (PEM) instead of the self-signed one"},
		&cli.StringFlag{Name: "tls-key", Usage: "with --tls: the key `FILE` (PEM) of --tls-cert"},
	}
	flags = append(flags, iceFlags()...)
	flags = append(flags, relayFlags()...)
	flags = append(flags, relayDefsFlags()...)
	flags = append(flags, adminFlags()...)
	flags = append(flags, agonesFlags()...)
	flags = append(flags, recordFlags()...)
	flags = append(flags, worldFlags()...)
	flags = append(flags, contentcli.Flags()...)
	flags = append(flags, shareFlags()...)
	flags = append(flags, cliutil.LogFlags()...)
	return withRanges(flags)
}

// seconds is d as the help says it: "30 s".
func seconds(d time.Duration) string { return fmt.Sprintf("%g s", d.Seconds()) }

// minutes is d as the help says it: "10 minutes".
func minutes(d time.Duration) string { return fmt.Sprintf("%g minutes", d.Minutes()) }

// configField ties a serve option to the host.Config field it sets: the
// option's value is written through field, and the option's default must
// be the field's value in host.DefaultConfig.
type configField struct {
	flag string
	// field points into cfg: a *int, *uint64, *float64, *time.Duration,
	// *string, *bool, *host.LagPolicy or *roster.FactionMode matching the
	// option's type (the two enums are read from their names).
	field func(cfg *host.Config) any
}

// configFields are every serve option that sets a host.Config field, the
// one table hostConfig reads them by.
var configFields = []configField{
	{"game-name", func(c *host.Config) any { return &c.GameName }},
	{"tick-rate", func(c *host.Config) any { return &c.TickRate }},
	{"factions", func(c *host.Config) any { return &c.Factions }},
	{"max-players", func(c *host.Config) any { return &c.Limits.MaxPlayers }},
	{"max-spectators", func(c *host.Config) any { return &c.Limits.MaxSpectators }},
	{"command-rate", func(c *host.Config) any { return &c.Limits.CommandRate }},
	{"conn-rate", func(c *host.Config) any { return &c.Admission.ConnRate }},
	{"max-pending", func(c *host.Config) any { return &c.Admission.MaxPending }},
	{"max-pending-per-addr", func(c *host.Config) any { return &c.Admission.MaxPendingPerAddr }},
	{"min-download-rate", func(c *host.Config) any { return &c.Join.MinDownloadRate }},
	{"compression", func(c *host.Config) any { return &c.Join.Compression }},
	{"max-upload-slots", func(c *host.Config) any { return &c.Join.MaxUploadSlots }},
	{"slot-share-window", func(c *host.Config) any { return &c.Join.SlotShareWindow }},
	{"lazy-join-points", func(c *host.Config) any { return &c.Join.LazyJoinPoints }},
	{"rejoin-window", func(c *host.Config) any { return &c.Join.RejoinWindow }},
	{"rejoin-grace", func(c *host.Config) any { return &c.Timeouts.RejoinGrace }},
	{"lag-policy", func(c *host.Config) any { return &c.Lag.Policy }},
	{"max-lag", func(c *host.Config) any { return &c.Lag.MaxLag }},
	{"max-hold", func(c *host.Config) any { return &c.Lag.MaxHold }},
	{"drop-cooldown", func(c *host.Config) any { return &c.Lag.DropCooldown }},
	{"hash-every", func(c *host.Config) any { return &c.Desync.HashEvery }},
	{"desync-limit", func(c *host.Config) any { return &c.Desync.Limit }},
	{"desync-window", func(c *host.Config) any { return &c.Desync.Window }},
	{"drop-unverified", func(c *host.Config) any { return &c.Desync.DropUnverified }},
	{"save", func(c *host.Config) any { return &c.Save.Path }},
	{"autosave", func(c *host.Config) any { return &c.Save.Every }},
	{"keep", func(c *host.Config) any { return &c.Save.Keep }},
}

// setConfigFields writes every option of configFields into cfg. Its error
// is a usage error naming the option.
func setConfigFields(c *cli.Context, cfg *host.Config) error {
	for _, f := range configFields {
		var err error
		switch p := f.field(cfg).(type) {
		case *int:
			*p = c.Int(f.flag)
		case *uint64:
			*p = c.Uint64(f.flag)
		case *float64:
			*p = c.Float64(f.flag)
		case *time.Duration:
			*p = c.Duration(f.flag)
		case *string:
			*p = c.String(f.flag)
		case *bool:
			*p = c.Bool(f.flag)
		case *host.LagPolicy:
			*p, err = host.ParseLagPolicy(c.String(f.flag))
		case *roster.FactionMode:
			*p, err = roster.ParseFactionMode(c.String(f.flag))
		default:
			panic(fmt.Sprintf("--%s: field of type %T", f.flag, p))
		}
		if err != nil {
			return cliutil.Usagef("--%s: %v", f.flag, err)
		}
	}
	return nil
}
