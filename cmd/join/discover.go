package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/cmd/internal/contentcli"
	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/transport/lan"
	"github.com/lockhost/lockhost/transport/ws"
	"github.com/urfave/cli/v2"
)

// discoveryFlags say where LAN discovery probes go; join and join
// discover both take them.
func discoveryFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "interface", Usage: "find hosts on this network interface `NAME` only (default: every interface that is up)"},
		&cli.IntFlag{Name: "discovery-port", Value: lan.Port, Usage: "the UDP `PORT` hosts answer discovery on (host serve --discovery-port)"},
	}
}

func discoverCommand() *cli.Command {
	flags := append(discoveryFlags(), contentcli.Flags()...)
	return &cli.Command{
		Name:  "discover",
		Usage: "list the hosts on the local network",
		Description: "Asks the local network (broadcast and multicast, IPv4 and IPv6) for hosts and prints one\n" +
			"line per host that answers within a second: its name, address, game, players, whether a\n" +
			"password or TLS is needed and whether your content matches. Join one with join NAME.\n" +
			"Exit 0 when a host answered, 4 when none did or the network cannot be asked, 2 for a usage\n" +
			"error or content (--content) that does not load, 1 for anything else.",
		Flags:  flags,
		Action: discover,
	}
}

func discover(c *cli.Context) error {
	if c.NArg() != 0 {
		return cliutil.Usagef("join discover takes no arguments")
	}
	bundle, err := contentcli.FromFlags(c)
	if err != nil {
		return cannotStart(err)
	}
	found, err := discoverHosts(c)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return &noAnswer{addr: "the local network", err: errors.New("no host answered discovery")}
	}
	mine := status.SummaryHash(bundle.Summary())
	for _, f := range found {
		fmt.Fprintln(stdout, foundLine(f, mine, int32(len(bundle.Summary()))))
	}
	return nil
}

// interfaceByName looks --interface up; a test puts an interface with
// no address in its place, which no machine need have.
var interfaceByName = lan.InterfaceByName

// discoverHosts probes the interfaces the flags name.
func discoverHosts(c *cli.Context) ([]lan.Found, error) {
	opts := lan.DiscoverOptions{Port: c.Int("discovery-port")}
	if opts.Port < 1 || opts.Port > 65535 {
		return nil, cliutil.Usagef("--discovery-port %d is refused: it takes a port from 1 to 65535", opts.Port)
	}
	if name := c.String("interface"); name != "" {
		ifaces, err := interfaceByName(name)
		if err != nil {
			return nil, cliutil.Usagef("--interface: %v", err)
		}
		opts.Interfaces = ifaces
	}
	found, err := lan.Discover(c.Context, opts)
	if err != nil {
		// No socket to probe from, or no probe sent: the network.
		return nil, &noAnswer{addr: "the local network", err: err}
	}
	return found, nil
}

// foundLine is a found host as join discover prints it.
func foundLine(f lan.Found, mine uint64, databases int32) string {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	content := "matches"
	if f.Info.DefsHash != mine || f.Info.Databases != databases {
		content = "DIFFERS"
	}
	return fmt.Sprintf("%s  %s  game=%s players=%d/%d password=%s tls=%s content=%s",
		termsafe.String(f.Info.GameName), f.Addr, termsafe.String(f.Info.GameVersion), f.Info.Players, f.Info.MaxPlayers,
		yes(f.Info.Password), yes(f.Info.TLS), content)
}

// isAddress reports whether a join argument is an address (a WebSocket
// URL, HOST:PORT, an IP address, a dotted host name or localhost) rather
// than the name of a host to find on the local network.
func isAddress(arg string) bool {
	if ws.IsURL(arg) || strings.ContainsAny(arg, ":.") || strings.EqualFold(arg, "localhost") {
		return true
	}
	_, err := netip.ParseAddr(arg)
	return err == nil
}

// resolveTarget is the address to join: the argument itself when it is
// an address, else the one host on the local network with that name.
func resolveTarget(c *cli.Context, arg string) (string, error) {
	if isAddress(arg) {
		return arg, nil
	}
	found, err := discoverHosts(c)
	if err != nil {
		return "", err
	}
	f, err := pickByName(found, arg)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(stderr, "found %s at %s on the local network\n", termsafe.String(f.Info.GameName), f.Addr)
	return f.Addr.String(), nil
}

// pickByName chooses the host named name among those found: the exact
// name, else one that differs only in case. A host heard on several
// addresses counts once (lan.Found); two different hosts of one name are
// an error.
func pickByName(found []lan.Found, name string) (lan.Found, error) {
	var matches []lan.Found
	for _, exact := range []bool{true, false} {
		for _, f := range found {
			if exact && f.Info.GameName == name || !exact && strings.EqualFold(f.Info.GameName, name) {
				matches = append(matches, f)
			}
		}
		if len(matches) > 0 {
			break
		}
	}
	switch len(matches) {
	case 0:
		return lan.Found{}, &noAnswer{addr: name, err: fmt.Errorf("no host named %q answered on the local network "+
			"(join discover lists the hosts found; give another host as HOST:PORT)", name)}
	case 1:
		return matches[0], nil
	}
	addrs := make([]string, len(matches))
	for i, m := range matches {
		addrs[i] = m.Addr.String()
	}
	// Not a mistake in the command line --help would explain: the
	// sentence says what to do.
	return lan.Found{}, cannotStart(fmt.Errorf("%d hosts named %q answered, at %s: join one by its address",
		len(matches), name, strings.Join(addrs, ", ")))
}
