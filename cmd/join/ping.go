package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/cmd/internal/contentcli"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/transport/ws"
	"github.com/urfave/cli/v2"
)

func pingCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the status as JSON, one object per ping"},
		&cli.IntFlag{Name: "count", Value: 1, Usage: "pings to send (1 or more); with more than one, min/avg/max latency follow"},
		&cli.DurationFlag{Name: "timeout", Value: 2 * time.Second, Usage: "how long to wait for each answer (more than 0)"},
	}
	flags = append(flags, contentcli.Flags()...)
	return &cli.Command{
		Name:      "ping",
		Usage:     "ask a host for its status over UDP without joining",
		ArgsUsage: "HOST[:PORT]",
		Description: "Prints the latency, players, game, tick, whether a password is needed, whether your\n" +
			"content matches the host's, and the way each player's connection came (paths: lan, direct,\n" +
			"punched, turn-udp, turn-tcp, turn-tls, turn) when the host says. Exit 0 when the host answered,\n" +
			"4 when it did not, 2 for a usage error or content (--content) that does not load, 1 for\n" +
			"anything else.",
		Flags:  flags,
		Action: ping,
	}
}

// pingResult is one answer, as --json prints it.
type pingResult struct {
	Addr           string  `json:"addr"`
	LatencyMs      float64 `json:"latency_ms"`
	Players        int32   `json:"players"`
	MaxPlayers     int32   `json:"max_players"`
	GameName       string  `json:"game_name"`
	GameVersion    string  `json:"game_version"`
	Protocol       uint32  `json:"protocol"`
	Tick           uint64  `json:"tick"`
	Password       bool    `json:"password"`
	TLS            bool    `json:"tls"`
	Databases      int32   `json:"def_databases"`
	ContentMatches bool    `json:"content_matches"`
	// PortMapping and External say how the host is reached from the
	// internet (its router's port mapping); empty from a host that does
	// not say.
	PortMapping string `json:"port_mapping,omitempty"`
	External    string `json:"external,omitempty"`
	// Paths counts the players by the way their connection came ("lan",
	// "direct", "punched", "turn-udp", ...); absent from a host that
	// does not say, or with no player online.
	Paths map[string]int `json:"paths,omitempty"`
	// paths is Paths in words, for the line without --json.
	paths string
}

func ping(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usagef("give the host to ping: join ping HOST[:PORT]")
	}
	if ws.IsURL(c.Args().First()) {
		return cliutil.Usagef("ping asks over UDP, on the game port: give the host as HOST[:PORT], not a WebSocket URL")
	}
	if err := checkHostAddr(c.Args().First()); err != nil {
		return err
	}
	addr := hostAddr(c.Args().First())
	bundle, err := contentcli.FromFlags(c)
	if err != nil {
		return cannotStart(err)
	}
	if err := checkNumbers(c, "ping"); err != nil {
		return err
	}
	mine := status.SummaryHash(bundle.Summary())
	n := c.Int("count")
	var rtts []time.Duration
	for i := 0; i < n; i++ {
		if i > 0 {
			time.Sleep(500 * time.Millisecond)
		}
		info, rtt, err := status.Ping(c.Context, addr, c.Duration("timeout"))
		if err != nil {
			if n == 1 || len(rtts) == 0 && i == n-1 {
				return &noAnswer{addr: addr, err: err}
			}
			fmt.Fprintf(stdout, "%s: no answer: %v\n", addr, err)
			continue
		}
		rtts = append(rtts, rtt)
		r := pingResult{Addr: addr, LatencyMs: float64(rtt.Microseconds()) / 1000, Players: info.Players, MaxPlayers: info.MaxPlayers,
			GameName: info.GameName, GameVersion: info.GameVersion, Protocol: info.Protocol, Tick: info.Tick,
			Password: info.Password, TLS: info.TLS, Databases: info.Databases, ContentMatches: info.DefsHash == mine}
		if info.Reach.Mapping != status.MappingUnknown {
			r.PortMapping = info.Reach.Mapping.String()
		}
		if info.Reach.External.IsValid() {
			r.External = info.Reach.External.String()
		}
		if info.Paths.Total() > 0 {
			r.Paths, r.paths = info.Paths.Map(), info.Paths.String()
		}
		if c.Bool("json") {
			b, _ := json.Marshal(r)
			fmt.Fprintln(stdout, string(b))
			continue
		}
		pw, content := "no password", "your content matches"
		if r.Password {
			pw = "password needed"
		}
		if r.TLS {
			pw += ", TLS (join with --tls)"
		}
		if !r.ContentMatches {
			content = "your content DIFFERS (run join to see which defs)"
		}
		fmt.Fprintf(stdout, "%s: %.1f ms, %q %d/%d players, tick %d, game %s, protocol %d, %s, %s%s%s\n",
			addr, r.LatencyMs, r.GameName, r.Players, r.MaxPlayers, r.Tick, r.GameVersion, r.Protocol, pw, content, reachText(r), pathsText(r))
	}
	if len(rtts) == 0 {
		return &noAnswer{addr: addr, err: errors.New("no answers")}
	}
	if n > 1 && !c.Bool("json") {
		slices.Sort(rtts)
		var sum time.Duration
		for _, r := range rtts {
			sum += r
		}
		fmt.Fprintf(stdout, "%d/%d answered; latency min %.1f ms, avg %.1f ms, max %.1f ms\n", len(rtts), n,
			ms64(rtts[0]), ms64(sum/time.Duration(len(rtts))), ms64(rtts[len(rtts)-1]))
	}
	return nil
}

func ms64(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// noAnswer is a ping nobody answered: exit 4.
type noAnswer struct {
	addr string
	err  error
}

func (e *noAnswer) Error() string { return fmt.Sprintf("no answer from %s: %v", e.addr, e.err) }
func (e *noAnswer) Unwrap() error { return e.err }

// reachText says how the host is reached from the internet, as its reply
// told: nothing from a host that does not say.
func reachText(r pingResult) string {
	switch {
	case r.PortMapping == "":
		return ""
	case r.External != "":
		return ", port mapping " + r.PortMapping + " at " + r.External
	}
	return ", port mapping " + r.PortMapping
}

// pathsText says how many players came by each path, as the host's reply
// told: nothing from a host that does not say or with nobody online.
func pathsText(r pingResult) string {
	if r.paths == "" {
		return ""
	}
	return ", paths: " + r.paths
}
