package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The lab's namespaces, its addresses and its interfaces. Every address
// is in a documentation range (RFC 5737): nothing here is routed anywhere
// but between these namespaces, which have no link to the machine's own
// network.
const (
	nsRouter = "lhlab-router"
	nsHome   = "lhlab-home" // the host
	nsLAN2   = "lhlab-lan2" // a second machine on the home LAN
	nsOut    = "lhlab-out"  // the internet: the friend, the player, a STUN server

	lanPrefix   = "/24"
	routerLAN   = "192.0.2.1"
	homeAddr    = "192.0.2.10"
	lan2Addr    = "192.0.2.11"
	routerWAN   = "198.51.100.1"
	outAddr     = "198.51.100.20"
	stunAddr    = "198.51.100.3"
	stunPort    = "3478"
	gamePort    = "30502"
	wanIfname   = "wan0"
	lanBridge   = "br-lan"
	uplinkRate  = "10mbit"
	uplinkQueue = "200ms"
)

// namespaces are every namespace the lab makes, in the order it makes
// them.
var namespaces = []string{nsRouter, nsHome, nsLAN2, nsOut}

// sh runs one command and returns its combined output; its error carries
// that output.
func sh(args ...string) (string, error) {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// in runs a command inside namespace ns.
func in(ns string, args ...string) (string, error) {
	return sh(append([]string{"ip", "netns", "exec", ns}, args...)...)
}

// removeNamespaces deletes the lab's namespaces that exist (their
// interfaces go with them). It is safe to call at any time.
func removeNamespaces() {
	for _, ns := range namespaces {
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err == nil {
			_, _ = sh("ip", "netns", "del", ns)
		}
	}
}

// buildNetwork makes the lab: the router's LAN bridge with the host and
// the second LAN machine on it, the router's WAN link to the outside, IP
// forwarding, NAT and the forwarding filter of a home router.
func buildNetwork() error {
	removeNamespaces() // left by a run that was killed
	steps := [][]string{}
	for _, ns := range namespaces {
		steps = append(steps, []string{"ip", "netns", "add", ns}, []string{"ip", "-n", ns, "link", "set", "lo", "up"})
	}
	steps = append(steps,
		[]string{"ip", "-n", nsRouter, "link", "add", lanBridge, "type", "bridge"},
		[]string{"ip", "-n", nsRouter, "addr", "add", routerLAN + lanPrefix, "dev", lanBridge},
		[]string{"ip", "-n", nsRouter, "link", "set", lanBridge, "up"},
	)
	for _, m := range []struct{ ns, port, addr string }{{nsHome, "r-home", homeAddr}, {nsLAN2, "r-lan2", lan2Addr}} {
		steps = append(steps,
			[]string{"ip", "-n", nsRouter, "link", "add", m.port, "type", "veth", "peer", "name", "eth0", "netns", m.ns},
			[]string{"ip", "-n", nsRouter, "link", "set", m.port, "master", lanBridge, "up"},
			[]string{"ip", "-n", m.ns, "addr", "add", m.addr + lanPrefix, "dev", "eth0"},
			[]string{"ip", "-n", m.ns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", m.ns, "route", "add", "default", "via", routerLAN},
		)
	}
	steps = append(steps,
		[]string{"ip", "-n", nsRouter, "link", "add", wanIfname, "type", "veth", "peer", "name", "eth0", "netns", nsOut},
		[]string{"ip", "-n", nsRouter, "addr", "add", routerWAN + lanPrefix, "dev", wanIfname},
		[]string{"ip", "-n", nsRouter, "link", "set", wanIfname, "up"},
		[]string{"ip", "-n", nsOut, "addr", "add", outAddr + lanPrefix, "dev", "eth0"},
		[]string{"ip", "-n", nsOut, "addr", "add", stunAddr + lanPrefix, "dev", "eth0"},
		[]string{"ip", "-n", nsOut, "link", "set", "eth0", "up"},
		[]string{"ip", "netns", "exec", nsRouter, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"},
	)
	for _, s := range steps {
		if _, err := sh(s...); err != nil {
			return err
		}
	}
	return loadRuleset()
}

// ruleset is the router's nftables ruleset: a home router's (LAN out,
// replies back, nothing else in; within the LAN, everything, which the
// forward hook sees too where br_netfilter is loaded) with the chains miniupnpd fills with the
// mappings it grants (in table inet filter, its default names).
const ruleset = `table inet filter {
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		iifname "` + lanBridge + `" oifname "` + lanBridge + `" accept
		iifname "` + lanBridge + `" oifname "` + wanIfname + `" accept
		jump miniupnpd
	}
	chain miniupnpd {
	}
	chain prerouting {
		type nat hook prerouting priority -100; policy accept;
		jump prerouting_miniupnpd
	}
	chain postrouting {
		type nat hook postrouting priority 100; policy accept;
		jump postrouting_miniupnpd
		oifname "` + wanIfname + `" masquerade
	}
	chain prerouting_miniupnpd {
	}
	chain postrouting_miniupnpd {
	}
}
`

// loadRuleset loads the router's ruleset.
func loadRuleset() error {
	cmd := exec.Command("ip", "netns", "exec", nsRouter, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft ruleset: %w: %s", err, out)
	}
	return nil
}

// mappedRules lists the router's port mappings for port: the DNAT rules
// miniupnpd added.
func mappedRules(port string) ([]string, error) {
	out, err := in(nsRouter, "nft", "list", "chain", "inet", "filter", "prerouting_miniupnpd")
	if err != nil {
		return nil, err
	}
	var rules []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "dport "+port) {
			rules = append(rules, strings.TrimSpace(l))
		}
	}
	return rules, nil
}

// miniupnpdConf is the router's miniupnpd: UPnP-IGD and NAT-PMP on the LAN
// bridge, mappings allowed for the LAN's unprivileged ports only.
//
// miniupnpd refuses to forward anything when its WAN address is reserved
// (documentation ranges included: it assumes another NAT beyond), and
// refuses such an address in ext_ip too. A STUN check that finds the WAN
// address unfiltered lifts that, so the lab runs a STUN server on the
// outside and points miniupnpd at it.
func miniupnpdConf(dir string) string {
	return fmt.Sprintf(`ext_ifname=%s
listening_ip=%s
port=5000
enable_upnp=yes
enable_natpmp=yes
secure_mode=yes
system_uptime=no
ext_perform_stun=yes
ext_stun_host=%s
ext_stun_port=%s
upnp_table_name=filter
upnp_nat_table_name=filter
uuid=3a1c2f64-6e0b-4d8e-9a53-1f0c2d7b8e41
allow 1024-65535 192.0.2.0/24 1024-65535
deny 0-65535 0.0.0.0/0 0-65535
`, wanIfname, lanBridge, stunAddr, stunPort)
}

// shapeUplink limits the router's WAN egress (the home's uplink) to
// uplinkRate with a modem-sized queue of uplinkQueue.
func shapeUplink() error {
	_, err := in(nsRouter, "tc", "qdisc", "replace", "dev", wanIfname, "root", "tbf",
		"rate", uplinkRate, "burst", "32kbit", "latency", uplinkQueue)
	return err
}

// unshapeUplink removes the shaping.
func unshapeUplink() {
	_, _ = in(nsRouter, "tc", "qdisc", "del", "dev", wanIfname, "root")
}
