package main

import (
	"context"
	"log/slog"
	"net"
	"net/netip"

	"github.com/lockhost/lockhost/transport/lan"
)

// discoveryPortEnv sets --discovery-port from the environment; the tests
// set it to -1 so that no host of theirs answers a player's join
// discover on the real port.
const discoveryPortEnv = "LOCKHOST_DISCOVERY_PORT"

// openDiscovery opens the LAN discovery port for a host listening on
// game, on the interfaces that address serves (loopback only for a
// loopback address), or nothing with port 0. A port that cannot be opened
// is a warning: players can still join by address. The host logs the
// port when it starts answering.
func openDiscovery(ctx context.Context, port int, game net.Addr, log *slog.Logger) []net.PacketConn {
	if port <= 0 {
		return nil
	}
	ap, err := netip.ParseAddrPort(game.String())
	if err != nil {
		log.Warn("LAN discovery off: the game port is not an IP address", "addr", game.String())
		return nil
	}
	ifaces, err := lan.ServedInterfaces(ap.Addr().Unmap())
	if err != nil {
		log.Warn("LAN discovery off", "err", err)
		return nil
	}
	pcs, err := lan.Listen(ctx, port, ifaces)
	if err != nil {
		log.Warn("LAN discovery off: players on this network must type the address", "port", port, "err", err)
		return nil
	}
	return pcs
}
