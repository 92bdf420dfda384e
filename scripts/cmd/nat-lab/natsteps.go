package main

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// natLab is the NAT matrix's state: its network, once built, and the
// internet's servers, once started.
type natLab struct {
	built    bool
	probes   *proc
	coord    *proc
	turn     *proc
	signal   *proc  // the ICE check's signalling relay
	coordURL string // as host coordinator printed it, with its pin
	certFile string // the TURN server's self-signed certificate, the lab's only root
}

// natSetup builds the matrix's network once and starts the probe servers.
func (l *lab) natSetup() error {
	if l.nat.built {
		return nil
	}
	t0 := time.Now()
	if err := buildNATNetwork(); err != nil {
		return err
	}
	l.nat.built = true
	p, err := start("probe servers", nsInet, false, nil, l.self, helperNATServers, "-")
	if err != nil {
		return err
	}
	l.nat.probes = p
	if err := waitUDP(nsInet, probeServers()[2]); err != nil {
		return err
	}
	hosts, joiners := labSites()
	fmt.Printf("nat-lab: NAT matrix network up (%.1f s): internet %s%s (coordinator %s, TURN %s, probes %s and %s); %d host and %d joiner sites, home LANs %s.x.y.0/24\n",
		time.Since(t0).Seconds(), inetISP, inetBits, coordAddr, turnAddr, probeAddr, probeAlt, len(hosts), len(joiners), siteLAN)
	return nil
}

// waitUDP waits until something in namespace ns holds the UDP address
// addr (the probe servers have bound their sockets).
func waitUDP(ns, addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := in(ns, "ss", "-Hlnu", "src", addr)
		if err == nil && strings.TrimSpace(out) != "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on UDP %s in %s: %v %s", addr, ns, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expected is what the probe must find behind a router of kind k.
func (k natKind) expected() probeResult {
	switch k {
	case fullCone:
		return probeResult{UDP: true, Mapping: behIndependent, Filtering: behIndependent, TCP3478: true, TCP443: true}
	case addrRestricted:
		return probeResult{UDP: true, Mapping: behIndependent, Filtering: behAddr, TCP3478: true, TCP443: true}
	case portRestricted:
		return probeResult{UDP: true, Mapping: behIndependent, Filtering: behAddrPort, TCP3478: true, TCP443: true}
	case symmetric:
		return probeResult{UDP: true, Mapping: behAddrPort, Filtering: behAddrPort, TCP3478: true, TCP443: true}
	case udpBlocked:
		return probeResult{Mapping: behNone, Filtering: behNone, TCP3478: true, TCP443: true}
	}
	return probeResult{Mapping: behNone, Filtering: behNone, TCP443: true}
}

// probeSite runs the NAT probe behind s's router.
func (l *lab) probeSite(s site) (probeResult, error) {
	var r probeResult
	out, err := inWithin(30*time.Second, s.machine(), l.self, helperNATProbe, "-")
	if err != nil {
		return r, fmt.Errorf("probe behind %s: %v: %s", s, err, strings.TrimSpace(out))
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		return r, fmt.Errorf("probe behind %s: %v: %q", s, err, out)
	}
	return r, nil
}

// checkProbe says how r differs from what a router of s's kind must do
// ("" when it does not): the behaviours, and that the address the
// servers saw is the router's (the NAT is there at all).
func checkProbe(s site, r probeResult) string {
	want := s.kind.expected()
	var bad []string
	if r.UDP != want.UDP || r.Mapping != want.Mapping || r.Filtering != want.Filtering {
		bad = append(bad, fmt.Sprintf("UDP %v mapping %s filtering %s, want UDP %v mapping %s filtering %s",
			r.UDP, r.Mapping, r.Filtering, want.UDP, want.Mapping, want.Filtering))
	}
	if r.TCP3478 != want.TCP3478 || r.TCP443 != want.TCP443 {
		bad = append(bad, fmt.Sprintf("TCP 3478 %v 443 %v, want %v %v", r.TCP3478, r.TCP443, want.TCP3478, want.TCP443))
	}
	for _, m := range r.Mapped {
		if host, _, err := net.SplitHostPort(m); m != "" && (err != nil || host != s.wanAddr()) {
			bad = append(bad, fmt.Sprintf("a server saw %s, not the router's address %s", m, s.wanAddr()))
			break
		}
	}
	return strings.Join(bad, "; ")
}

// step5 probes every site's router and prints what each does; it fails
// unless each does what its kind names.
func (l *lab) step5() (string, error) {
	if err := l.natSetup(); err != nil {
		return "", err
	}
	hosts, joiners := labSites()
	sites := append(hosts, joiners...)
	results := make([]probeResult, len(sites))
	errs := make([]error, len(sites))
	var wg sync.WaitGroup
	for i, s := range sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = l.probeSite(s)
		}()
	}
	wg.Wait()
	fmt.Printf("nat-lab:   %-20s %-22s %-22s %-4s %-8s %-7s %s\n", "router", "mapping", "filtering", "UDP", "TCP 3478", "TCP 443", "seen as (one socket to 3 servers)")
	var bad []string
	for i, s := range sites {
		if errs[i] != nil {
			bad = append(bad, errs[i].Error())
			continue
		}
		r := results[i]
		what := checkProbe(s, r)
		verdict := "as named"
		if what != "" {
			verdict = "WRONG: " + what
			bad = append(bad, s.String()+": "+what)
		}
		fmt.Printf("nat-lab:   %-20s %-22s %-22s %-4s %-8s %-7s %s  %s\n", s, r.Mapping, r.Filtering, yes(r.UDP), yes(r.TCP3478), yes(r.TCP443),
			strings.Join(r.Mapped, " "), verdict)
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%d of %d routers do not behave as their kind: %s", len(bad), len(sites), strings.Join(bad, "; "))
	}
	return fmt.Sprintf("%d routers probed (%d host, %d joiner sites): each maps, filters and passes TCP as its kind names", len(sites), len(hosts), len(joiners)), nil
}

// yes prints a bool as a table cell.
func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
