package main

import (
	"log/slog"
	"net"
	"net/netip"
	"slices"

	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/transport/lan"
	"github.com/lockhost/lockhost/transport/ws"
)

// ifaceAddrs is one network interface's addresses, as reachableAddrs
// reads them.
type ifaceAddrs struct {
	up, loopback bool
	addrs        []netip.Addr
}

// machineInterfaces lists this machine's interfaces and their addresses.
// It only reads the system's tables: nothing is sent.
func machineInterfaces() []ifaceAddrs {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []ifaceAddrs
	for _, ifc := range ifaces {
		ia := ifaceAddrs{up: lan.Carries(ifc), loopback: ifc.Flags&net.FlagLoopback != 0}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(p.IP); ok {
					ia.addrs = append(ia.addrs, ip.Unmap())
				}
			}
		}
		out = append(out, ia)
	}
	return out
}

// reachableAddrs are the addresses other machines reach a listener on
// listen by: listen itself when it names one address; for every
// interface (0.0.0.0 or ::, which Go serves on IPv4 and IPv6 alike), the
// unicast addresses of the interfaces that are up and running (lan.Carries),
// IPv4 first, leaving out loopback (unless there is nothing else) and
// link-local addresses, which a browser cannot use without a zone.
func reachableAddrs(listen netip.Addr, ifaces []ifaceAddrs) []netip.Addr {
	listen = listen.Unmap()
	if !listen.IsUnspecified() {
		return []netip.Addr{listen}
	}
	var found, loop []netip.Addr
	for _, ifc := range ifaces {
		if !ifc.up {
			continue
		}
		for _, a := range ifc.addrs {
			a = a.Unmap()
			switch {
			case !a.IsValid() || a.IsUnspecified() || a.IsMulticast() || a.IsLinkLocalUnicast():
			case ifc.loopback || a.IsLoopback():
				loop = append(loop, a)
			default:
				found = append(found, a)
			}
		}
	}
	if len(found) == 0 {
		found = loop
	}
	slices.SortStableFunc(found, func(a, b netip.Addr) int {
		switch {
		case a.Is4() == b.Is4():
			return 0
		case a.Is4():
			return -1
		}
		return 1
	})
	return slices.Compact(found)
}

// logJoinURLs says where players join the --http listener at addr: the
// browser page and the WebSocket, at this machine's addresses (one line
// each, the first address in url, the others in also), never at the
// wildcard address the listener reports.
func logJoinURLs(log *slog.Logger, addr net.Addr, ifaces []ifaceAddrs) {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		log.Info("players may join over WebSocket", "url", "ws://"+addr.String()+ws.Path)
		log.Info("players may join from a browser", "url", "http://"+addr.String()+play.Path)
		return
	}
	var hosts []string
	for _, a := range reachableAddrs(ap.Addr(), ifaces) {
		hosts = append(hosts, netip.AddrPortFrom(a, ap.Port()).String())
	}
	if len(hosts) == 0 {
		hosts = []string{ap.String()}
	}
	urls := func(scheme, path string) []any {
		kv := []any{"url", scheme + hosts[0] + path}
		if len(hosts) > 1 {
			var also []string
			for _, h := range hosts[1:] {
				also = append(also, scheme+h+path)
			}
			kv = append(kv, "also", also)
		}
		return kv
	}
	log.Info("players may join over WebSocket", urls("ws://", ws.Path)...)
	log.Info("players may join from a browser", urls("http://", play.Path)...)
}
