package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The NAT matrix's network (steps 5 and 6): an "internet" namespace with
// the coordinator, the TURN server and the probe servers on one link,
// and sites, each a router of one kind of NAT with one machine behind
// it. The internet is a documentation range (RFC 5737); the homes behind
// the routers are private ranges (RFC 1918), as homes are, which the
// internet drops without a word, as ISPs drop such addresses. Nothing is
// routed to the machine's own network.
const (
	nsInet     = "lhnat-inet"
	inetLink   = "br-inet"
	inetISP    = "203.0.113.1" // the internet's own address: the routers' default gateway
	coordAddr  = "203.0.113.2" // the coordinator, HTTPS on 443
	turnAddr   = "203.0.113.3" // coturn: STUN and TURN on 3478 UDP and TCP, TURN over TLS on 443
	probeAddr  = "203.0.113.4" // the NAT probe's first server address (two ports)
	probeAlt   = "203.0.113.5" // its second address
	inetBits   = "/24"
	siteLAN    = "10"  // sites' LANs are 10.SIDE.INDEX.0/24
	lanHost    = ".10" // the machine behind each router
	lanRouter  = ".1"  // the router's LAN address
	siteWAN0   = 20    // site i's router is 203.0.113.(20+i)
	probePort  = 4001  // the probe servers' UDP port on both addresses
	probePort2 = 4002  // the second UDP port on probeAddr
)

// natKind is how a site's router treats traffic: one of four NATs, or a
// network hostile to UDP.
type natKind int

const (
	fullCone natKind = iota
	addrRestricted
	portRestricted
	symmetric
	udpBlocked
	tcp443Only
)

// natKinds are the four NATs of the matrix, in order.
var natKinds = []natKind{fullCone, addrRestricted, portRestricted, symmetric}

func (k natKind) String() string {
	return [...]string{"full-cone", "addr-restricted", "port-restricted", "symmetric", "udp-blocked", "tcp443-only"}[k]
}

// short is the kind in namespace and interface names.
func (k natKind) short() string {
	return [...]string{"full", "addr", "port", "sym", "noudp", "t443"}[k]
}

// site is one router of kind with one machine behind it: a host's home
// (side "h") or a joiner's (side "j").
type site struct {
	side  string
	index int
	kind  natKind
}

func (s site) router() string  { return "lhnat-r" + s.side + "-" + s.kind.short() }
func (s site) machine() string { return "lhnat-" + s.side + "-" + s.kind.short() }
func (s site) wanAddr() string { return fmt.Sprintf("203.0.113.%d", siteWAN0+s.index) }
func (s site) lanNet() string {
	side := 1
	if s.side == "j" {
		side = 2
	}
	return fmt.Sprintf("%s.%d.%d", siteLAN, side, s.index)
}
func (s site) lanAddr() string      { return s.lanNet() + lanHost }
func (s site) routerLAN() string    { return s.lanNet() + lanRouter }
func (s site) inetPort() string     { return "v" + s.side + "-" + s.kind.short() }
func (s site) String() string       { return s.side + ":" + s.kind.String() }
func (s site) namespaces() []string { return []string{s.router(), s.machine()} }

// labSites are the matrix's sites: a host behind each of the four NATs,
// a joiner behind each, and the two joiner networks hostile to UDP.
func labSites() (hosts, joiners []site) {
	for i, k := range natKinds {
		hosts = append(hosts, site{side: "h", index: i, kind: k})
	}
	for i, k := range append(append([]natKind{}, natKinds...), udpBlocked, tcp443Only) {
		joiners = append(joiners, site{side: "j", index: len(natKinds) + i, kind: k})
	}
	return hosts, joiners
}

// natNamespaces are every namespace of the matrix.
func natNamespaces() []string {
	hosts, joiners := labSites()
	out := []string{nsInet}
	for _, s := range append(hosts, joiners...) {
		out = append(out, s.namespaces()...)
	}
	return out
}

// removeNATNamespaces deletes the matrix's namespaces that exist.
func removeNATNamespaces() {
	for _, ns := range natNamespaces() {
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
			_, _ = sh("ip", "netns", "del", ns)
		}
	}
}

// buildNATNetwork makes the internet and every site.
func buildNATNetwork() error {
	removeNATNamespaces()
	cmds := [][]string{
		{"ip", "netns", "add", nsInet},
		{"ip", "-n", nsInet, "link", "set", "lo", "up"},
		{"ip", "-n", nsInet, "link", "add", inetLink, "type", "bridge"},
		{"ip", "-n", nsInet, "link", "set", inetLink, "up"},
		// The rest of the internet: a link to nowhere that the default
		// route points at, so that what the servers send to an address
		// no one here has (a home's private address, which ICE offers as
		// a candidate) vanishes as it would out there. Without a route
		// the sender hears "network unreachable" at once, and coturn
		// stops relaying for an allocation that met it.
		{"ip", "-n", nsInet, "link", "add", "nowhere", "type", "veth", "peer", "name", "nowhere1"},
		{"ip", "-n", nsInet, "link", "set", "nowhere", "up"},
		{"ip", "-n", nsInet, "link", "set", "nowhere1", "up"},
		{"ip", "-n", nsInet, "route", "add", "default", "dev", "nowhere"},
	}
	for _, a := range []string{inetISP, coordAddr, turnAddr, probeAddr, probeAlt} {
		cmds = append(cmds, []string{"ip", "-n", nsInet, "addr", "add", a + inetBits, "dev", inetLink})
	}
	if err := runAll(cmds); err != nil {
		return err
	}
	if err := nftIn(nsInet, inetRuleset); err != nil {
		return err
	}
	hosts, joiners := labSites()
	for _, s := range append(hosts, joiners...) {
		if err := buildSite(s); err != nil {
			return fmt.Errorf("site %s: %w", s, err)
		}
	}
	return nil
}

// buildSite makes a site's router, linked to the internet, and the
// machine on its LAN.
func buildSite(s site) error {
	r, m := s.router(), s.machine()
	cmds := [][]string{
		{"ip", "netns", "add", r}, {"ip", "-n", r, "link", "set", "lo", "up"},
		{"ip", "netns", "add", m}, {"ip", "-n", m, "link", "set", "lo", "up"},
		{"ip", "-n", nsInet, "link", "add", s.inetPort(), "type", "veth", "peer", "name", "wan0", "netns", r},
		{"ip", "-n", nsInet, "link", "set", s.inetPort(), "master", inetLink, "up"},
		{"ip", "-n", r, "addr", "add", s.wanAddr() + inetBits, "dev", "wan0"},
		{"ip", "-n", r, "link", "set", "wan0", "up"},
		{"ip", "-n", r, "route", "add", "default", "via", inetISP},
		{"ip", "-n", r, "link", "add", "lan0", "type", "veth", "peer", "name", "eth0", "netns", m},
		{"ip", "-n", r, "addr", "add", s.routerLAN() + "/24", "dev", "lan0"},
		{"ip", "-n", r, "link", "set", "lan0", "up"},
		{"ip", "-n", m, "addr", "add", s.lanAddr() + "/24", "dev", "eth0"},
		{"ip", "-n", m, "link", "set", "eth0", "up"},
		{"ip", "-n", m, "route", "add", "default", "via", s.routerLAN()},
		{"ip", "netns", "exec", r, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"},
	}
	if err := runAll(cmds); err != nil {
		return err
	}
	return nftIn(r, natRuleset(s.kind, s.lanAddr()))
}

// runAll runs commands in order, stopping at the first that fails.
func runAll(cmds [][]string) error {
	for _, c := range cmds {
		if _, err := sh(c...); err != nil {
			return err
		}
	}
	return nil
}

// nftIn loads an nftables ruleset in namespace ns.
func nftIn(ns, rules string) error {
	cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft in %s: %w: %s", ns, err, out)
	}
	return nil
}

// inetRuleset is the internet's: what a router sends it for a private
// address (a home LAN address a joiner tries) is dropped without an
// answer, as on the real internet, where such a connection attempt hangs
// rather than failing at once.
const inetRuleset = `table ip isp {
	chain prerouting {
		type filter hook prerouting priority raw; policy accept;
		ip daddr { 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 } drop
	}
}
`

// natRuleset is the nftables ruleset of a router of kind, whose LAN holds
// the one machine lan. Linux's masquerade keeps a connection's source
// port where it can, so with one machine behind it a UDP socket keeps one
// mapping whatever it sends to (endpoint-independent mapping), and only
// the exact address and port it sent to may answer (conntrack): a
// port-restricted cone. The other kinds start from that:
//   - full-cone: every port the machine sent from is open to anyone
//     (a dynamic set of the ports in use, matched by a DNAT rule);
//   - addr-restricted: open to any port of the addresses the machine
//     sent to from it (a set of address and port);
//   - symmetric: a new random port for every new destination
//     (masquerade fully-random), so the address a STUN server sees is not
//     the one a peer is sent from;
//   - udp-blocked: a port-restricted NAT that forwards no UDP at all;
//   - tcp443-only: a port-restricted NAT that forwards only TCP to port
//     443.
func natRuleset(kind natKind, lan string) string {
	var pre, track, block string
	masq := "masquerade"
	switch kind {
	case fullCone:
		pre = `iifname "wan0" udp dport @cone dnat to ` + lan
		track = `iifname "lan0" oifname "wan0" meta l4proto udp update @cone { udp sport }`
	case addrRestricted:
		pre = `iifname "wan0" ip saddr . udp dport @peers dnat to ` + lan
		track = `iifname "lan0" oifname "wan0" meta l4proto udp update @peers { ip daddr . udp sport }`
	case symmetric:
		masq = "masquerade fully-random"
	case udpBlocked:
		block = `iifname "lan0" meta l4proto udp drop`
	case tcp443Only:
		block = `iifname "lan0" meta l4proto != tcp drop
		iifname "lan0" tcp dport != 443 drop`
	}
	return fmt.Sprintf(`table ip nat {
	set cone {
		type inet_service
		flags dynamic,timeout
		timeout 2m
	}
	set peers {
		type ipv4_addr . inet_service
		flags dynamic,timeout
		timeout 2m
	}
	chain prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		%s
	}
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "wan0" %s
	}
	chain forward {
		type filter hook forward priority filter; policy drop;
		%s
		%s
		ct state established,related accept
		iifname "lan0" oifname "wan0" accept
		iifname "wan0" ct status dnat accept
	}
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		iifname "lo" accept
		iifname "lan0" accept
	}
}
`, pre, masq, track, block)
}
