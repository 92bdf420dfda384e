package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// The NAT probe tells what a router does, in the terms of RFC 4787, from
// a machine behind it and servers on the internet at two addresses (the
// first with two ports):
//   - mapping: one UDP socket asks each of the three servers which
//     address it came from. The same address from all three is an
//     endpoint-independent mapping; the same from both ports of the first
//     address but another from the second address, address-dependent;
//     else address-and-port-dependent (a symmetric NAT).
//   - filtering: a fresh socket sends to the first server only, which has
//     its second port and the second address send to the address it
//     came from before it answers. Both arriving is endpoint-independent
//     filtering (a full cone), only the second port's address-dependent
//     (address-restricted), neither address-and-port-dependent (port-
//     restricted).
//   - TCP: whether connections to ports 3478 and 443 open.
const (
	helperNATServers = "lab-nat-servers"
	helperNATProbe   = "lab-nat-probe"
)

// The mapping and filtering behaviours (RFC 4787's names, shortened).
const (
	behIndependent = "endpoint-independent"
	behAddr        = "address-dependent"
	behAddrPort    = "address+port-dependent"
	behNone        = "-" // no UDP passes
)

// probeResult is what the probe found behind one router.
type probeResult struct {
	UDP       bool     `json:"udp"`
	Mapped    []string `json:"mapped"` // as each server saw the mapping socket
	Mapping   string   `json:"mapping"`
	Filtering string   `json:"filtering"`
	TCP3478   bool     `json:"tcp3478"`
	TCP443    bool     `json:"tcp443"`
}

// probeServers are the probe's UDP servers: the first address's two
// ports, then the second address.
func probeServers() []string {
	return []string{
		net.JoinHostPort(probeAddr, strconv.Itoa(probePort)),
		net.JoinHostPort(probeAddr, strconv.Itoa(probePort2)),
		net.JoinHostPort(probeAlt, strconv.Itoa(probePort)),
	}
}

// serveNATProbe runs the probe's servers until killed: the three UDP
// sockets, and TCP listeners on the first address's ports 3478 and 443
// that accept and close.
func serveNATProbe() error {
	addrs := probeServers()
	socks := make([]*net.UDPConn, len(addrs))
	for i, a := range addrs {
		ua, err := net.ResolveUDPAddr("udp4", a)
		if err != nil {
			return err
		}
		if socks[i], err = net.ListenUDP("udp4", ua); err != nil {
			return err
		}
	}
	for _, port := range []string{"3478", "443"} {
		ln, err := net.Listen("tcp4", net.JoinHostPort(probeAddr, port))
		if err != nil {
			return err
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	errs := make(chan error, len(socks))
	for i := range socks {
		go func() { errs <- answerProbes(socks, i) }()
	}
	return <-errs
}

// answerProbes answers on socks[i]: "map" with the address the request
// came from and its own ("seen FROM by SERVER"); "filter" the same, after the other sockets have each sent
// that address a datagram.
func answerProbes(socks []*net.UDPConn, i int) error {
	buf := make([]byte, 64)
	for {
		n, from, err := socks[i].ReadFromUDP(buf)
		if err != nil {
			return err
		}
		switch string(buf[:n]) {
		case "filter":
			for j, o := range socks {
				if j != i {
					_, _ = o.WriteToUDP([]byte("from "+o.LocalAddr().String()), from)
				}
			}
			fallthrough
		case "map":
			_, _ = socks[i].WriteToUDP([]byte("seen "+from.String()+" by "+socks[i].LocalAddr().String()), from)
		}
	}
}

// runNATProbe probes the router in front of this namespace and prints
// the result as one line of JSON.
func runNATProbe() error {
	var r probeResult
	servers := probeServers()
	if err := probeMapping(&r, servers); err != nil {
		return err
	}
	if r.UDP {
		if err := probeFiltering(&r, servers); err != nil {
			return err
		}
	} else {
		r.Mapping, r.Filtering = behNone, behNone
	}
	r.TCP3478 = probeTCP(net.JoinHostPort(probeAddr, "3478")) == nil
	r.TCP443 = probeTCP(net.JoinHostPort(probeAddr, "443")) == nil
	return json.NewEncoder(os.Stdout).Encode(r)
}

// probeMapping asks each server, from one socket, which address it sees.
func probeMapping(r *probeResult, servers []string) error {
	c, err := net.ListenUDP("udp4", nil)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, s := range servers {
		seen, _, err := ask(c, s, "map", 0)
		if err != nil {
			return err
		}
		r.Mapped = append(r.Mapped, seen)
	}
	m := r.Mapped
	switch {
	case m[0] == "" || m[1] == "" || m[2] == "":
		if m[0] != "" || m[1] != "" || m[2] != "" {
			return fmt.Errorf("only some probe servers answered: %q", m)
		}
		r.UDP = false
	case m[0] == m[1] && m[1] == m[2]:
		r.UDP, r.Mapping = true, behIndependent
	case m[0] == m[1]:
		r.UDP, r.Mapping = true, behAddr
	default:
		r.UDP, r.Mapping = true, behAddrPort
	}
	return nil
}

// probeFiltering sends "filter" to the first server from a fresh socket
// and sees which of the others get through.
func probeFiltering(r *probeResult, servers []string) error {
	c, err := net.ListenUDP("udp4", nil)
	if err != nil {
		return err
	}
	defer c.Close()
	seen, from, err := ask(c, servers[0], "filter", 400*time.Millisecond)
	if err != nil {
		return err
	}
	if seen == "" {
		return errors.New("the first probe server did not answer the filtering probe")
	}
	switch {
	case from[servers[2]] && from[servers[1]]:
		r.Filtering = behIndependent
	case from[servers[2]]:
		return fmt.Errorf("the second address got through but not the first address's second port: %v", from)
	case from[servers[1]]:
		r.Filtering = behAddr
	default:
		r.Filtering = behAddrPort
	}
	return nil
}

// ask sends msg to server (three tries, 300 ms apart) and returns the
// address it says it saw ("" when it never answered) and, reading on for
// linger after the answer, which servers sent "from" datagrams.
func ask(c *net.UDPConn, server, msg string, linger time.Duration) (string, map[string]bool, error) {
	to, err := net.ResolveUDPAddr("udp4", server)
	if err != nil {
		return "", nil, err
	}
	from := map[string]bool{}
	seen := ""
	buf := make([]byte, 128)
	for try := 0; try < 3 && seen == ""; try++ {
		if _, err := c.WriteToUDP([]byte(msg), to); err != nil {
			return "", nil, err
		}
		deadline := time.Now().Add(300 * time.Millisecond)
		for {
			_ = c.SetReadDeadline(deadline)
			n, _, err := c.ReadFromUDP(buf)
			if err != nil {
				break // the deadline
			}
			got := string(buf[:n])
			if s, ok := strings.CutPrefix(got, "seen "); ok && seen == "" && strings.HasSuffix(s, " by "+server) {
				seen = strings.TrimSuffix(s, " by "+server)
				deadline = time.Now().Add(linger)
			} else if s, ok := strings.CutPrefix(got, "from "); ok {
				from[s] = true
			}
		}
	}
	return seen, from, nil
}
