package lan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lockhost/lockhost/status"
)

// DefaultWait is how long Discover listens for replies: hosts on a LAN
// answer within milliseconds, and a user waits about a second.
const DefaultWait = 800 * time.Millisecond

// resends is how many times Discover sends its probes in all, spread over
// the first half of its wait, in case one is lost.
const resends = 2

// quietRounds is how many more times Discover sends its probes while it
// has heard no reply, an eighth of its wait apart after the first
// rounds, the last three quarters into its wait, so a host still has
// time to answer it: a probe that a flooded host's limit or socket
// dropped gets another chance. All rounds together stay within one
// source's burst at a host (DefaultBurst: two probes a round on each
// interface, broadcast and multicast).
const quietRounds = 4

// Found is a host that answered a probe.
type Found struct {
	// Addr is where to join it: a reply's source address and the game
	// port it named. A host heard on several addresses (its replies
	// carry one host ID) is found once, at the best of them: loopback,
	// then IPv4, then IPv6, a link-local one last.
	Addr netip.AddrPort
	// Also are the other addresses it answered from, best first.
	Also []netip.AddrPort
	// Info is its status reply.
	Info status.Info
	// RTT is the time from the first probe to its first reply.
	RTT time.Duration
}

// DiscoverOptions says where Discover sends its probes.
type DiscoverOptions struct {
	// Port is the discovery port (default Port).
	Port int
	// Interfaces are the interfaces to probe by broadcast and multicast;
	// nil means every interface that is up. Tests name the loopback
	// interface so that no probe leaves the machine.
	Interfaces []net.Interface
	// Wait is how long to listen for replies (default DefaultWait).
	Wait time.Duration
}

// Discover sends probes on the interfaces opts names and returns the hosts
// that answered within its wait, sorted by name and address; a host that
// answered on several addresses is listed once (Found.Also).
func Discover(ctx context.Context, opts DiscoverOptions) ([]Found, error) {
	if opts.Port == 0 {
		opts.Port = Port
	}
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	ifaces := opts.Interfaces
	if ifaces == nil {
		all, err := net.Interfaces()
		if err != nil {
			return nil, fmt.Errorf("discover: %w", err)
		}
		ifaces = upInterfaces(all)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Wait)
	defer cancel()
	d := &discovery{id: rand.Uint32(), port: opts.Port, found: map[uint64]*Found{}, start: time.Now()}
	pcs, err := d.open(ctx)
	if err != nil {
		return nil, err
	}
	for i := range resends + quietRounds {
		if i >= resends && d.heard() {
			break
		}
		if err := d.sendAll(pcs, ifaces); err != nil {
			if i == 0 {
				return nil, err
			}
			break // the first round went out: listen for its replies
		}
		gap := opts.Wait / (2 * resends)
		if i+1 >= resends {
			gap = opts.Wait / 8
		}
		if i+1 < resends+quietRounds {
			select {
			case <-ctx.Done():
			case <-time.After(gap):
			}
		}
	}
	<-ctx.Done()
	d.wg.Wait()
	return d.sorted(), nil
}

// discovery is one Discover call's state.
type discovery struct {
	id    uint32
	port  int
	start time.Time
	wg    sync.WaitGroup

	mu    sync.Mutex
	found map[uint64]*Found // by host ID; guarded by mu
}

// open opens an IPv4 and, where there is IPv6, an IPv6 socket, each read
// until ctx is done.
func (d *discovery) open(ctx context.Context) (map[string]net.PacketConn, error) {
	pcs := map[string]net.PacketConn{}
	for _, network := range []string{"udp4", "udp6"} {
		pc, err := net.ListenPacket(network, ":0")
		if err != nil {
			if network == "udp4" {
				return nil, fmt.Errorf("discover: %w", err)
			}
			continue
		}
		pcs[network] = pc
		context.AfterFunc(ctx, func() { _ = pc.Close() })
		d.wg.Go(func() { d.read(pc) })
	}
	return pcs, nil
}

// sendAll sends one probe to every broadcast and multicast target of
// ifaces. It fails only when no probe could be sent.
func (d *discovery) sendAll(pcs map[string]net.PacketConn, ifaces []net.Interface) error {
	probe := AppendProbe(nil, d.id)
	var sent int
	var errs []error
	send := func(pc net.PacketConn, to netip.AddrPort) {
		if _, err := pc.WriteTo(probe, net.UDPAddrFromAddrPort(to)); err != nil {
			errs = append(errs, fmt.Errorf("probe %s: %w", to, err))
			return
		}
		sent++
	}
	for _, ifi := range ifaces {
		for _, p := range prefixes4(ifi) {
			if bc, ok := broadcast(p); ok {
				send(pcs["udp4"], netip.AddrPortFrom(bc, uint16(d.port)))
			}
			if err := setMulticastInterface(pcs["udp4"], p.Addr()); err == nil {
				send(pcs["udp4"], netip.AddrPortFrom(Group4, uint16(d.port)))
			}
		}
		if pc := pcs["udp6"]; pc != nil && ifi.Flags&net.FlagMulticast != 0 {
			send(pc, netip.AddrPortFrom(Group6.WithZone(ifi.Name), uint16(d.port)))
		}
	}
	if sent == 0 {
		return fmt.Errorf("discover: no probe sent: %w", errors.Join(append(errs, errors.New("no interface to probe"))...))
	}
	return nil
}

// heard reports whether a host has answered.
func (d *discovery) heard() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.found) > 0
}

// read collects replies on pc until it is closed.
func (d *discovery) read(pc net.PacketConn) {
	// Room for one byte more than the largest reply, so a longer
	// datagram is seen as too long rather than cut into a valid one.
	buf := make([]byte, MaxReplySize+1)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		r, err := DecodeReply(buf[:n])
		u, ok := from.(*net.UDPAddr)
		if err != nil || r.ProbeID != d.id || !ok {
			continue
		}
		d.add(r, netip.AddrPortFrom(u.AddrPort().Addr().Unmap(), r.GamePort))
	}
}

// add records reply r from addr: a new host, or one more address of a
// host already found.
func (d *discovery) add(r Reply, addr netip.AddrPort) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.found[r.HostID]
	if f == nil {
		d.found[r.HostID] = &Found{Addr: addr, Info: r.Info, RTT: time.Since(d.start)}
		return
	}
	if addr == f.Addr || slices.Contains(f.Also, addr) {
		return
	}
	all := append([]netip.AddrPort{f.Addr, addr}, f.Also...)
	slices.SortFunc(all, func(a, b netip.AddrPort) int {
		return cmp.Or(cmp.Compare(addrRank(a.Addr()), addrRank(b.Addr())), a.Compare(b))
	})
	f.Addr, f.Also = all[0], all[1:]
}

// addrRank orders a host's addresses for joining: loopback, IPv4, IPv6,
// link-local IPv6 last (it needs its zone).
func addrRank(a netip.Addr) int {
	switch {
	case a.IsLoopback():
		return 0
	case a.Is4():
		return 1
	case !a.IsLinkLocalUnicast():
		return 2
	}
	return 3
}

// sorted returns the hosts found, by name then address.
func (d *discovery) sorted() []Found {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Found, 0, len(d.found))
	for _, f := range d.found {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Found) int {
		return cmp.Or(cmp.Compare(a.Info.GameName, b.Info.GameName), a.Addr.Compare(b.Addr))
	})
	return out
}

// broadcast is the directed broadcast address of an IPv4 network, if it
// has one (not a /31 or /32).
func broadcast(p netip.Prefix) (netip.Addr, bool) {
	if !p.Addr().Is4() || p.Bits() > 30 {
		return netip.Addr{}, false
	}
	a := p.Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		a[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(a), true
}

// Carries reports whether interface ifi is up and running, so that it
// can reach another machine. Up alone is not enough: one with no carrier
// (a cable out, a bridge with nothing on it, such as podman's
// cni-podman0 with flags UP and state DOWN) reaches no host.
func Carries(ifi net.Interface) bool {
	return ifi.Flags&net.FlagUp != 0 && ifi.Flags&net.FlagRunning != 0
}

// upInterfaces keeps the interfaces that carry (Carries).
func upInterfaces(all []net.Interface) []net.Interface {
	var out []net.Interface
	for _, ifi := range all {
		if Carries(ifi) {
			out = append(out, ifi)
		}
	}
	return out
}

// InterfaceByName returns the named interface as a one-element list for
// DiscoverOptions.Interfaces.
func InterfaceByName(name string) ([]net.Interface, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", strconv.Quote(name), err)
	}
	return []net.Interface{*ifi}, nil
}
