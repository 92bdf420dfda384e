package join

import (
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Whether a join makes the maps' regenerable sections (Config.Sections)
// or downloads them: making them costs this machine's cores, downloading
// them costs the link's time. A host on this machine or its LAN is
// always quicker to download from; otherwise the join makes the smallest
// section first, timed, and weighs what the rest would spare against
// what they would take (sectionChoice.decide).

// sectionChoice is what deciding whether to make the sections weighs.
type sectionChoice struct {
	// Local: the host is on this machine or on its LAN (hostLocal).
	Local bool
	// Saved is the bytes the thin maps would spare on the link.
	Saved uint64
	// Throughput is the link's, in bytes a second: measured, or estimated
	// (Config.LinkSpeed). 0: unknown.
	Throughput float64
	// Making is how long making every section would take on this
	// machine, as measured on the first one. 0: unknown.
	Making time.Duration
}

// decide says whether to make the sections, and why, in a sentence the
// join tool can log. It makes them only when the download time they
// spare is more than the time making them takes.
func (c sectionChoice) decide() (bool, string) {
	switch {
	case c.Local:
		return false, "the host is on this machine or its LAN: downloading the sections is quicker than making them"
	case c.Saved == 0:
		return false, "making the sections would spare no download"
	case c.Throughput <= 0 || c.Making <= 0:
		return false, "the link's throughput or the time making the sections takes is unknown"
	}
	spared := time.Duration(float64(c.Saved) / c.Throughput * float64(time.Second))
	what := fmt.Sprintf("making the sections takes about %v here; they spare about %d kB, %v of download at %.0f kB/s",
		c.Making.Round(time.Millisecond), c.Saved/1000, spared.Round(time.Millisecond), c.Throughput/1000)
	if spared <= c.Making {
		return false, "not made: " + what
	}
	return true, "made: " + what
}

// hostLocal reports whether addr (a connection's remote address) is on
// this machine or its LAN: a loopback, private or link-local address, or
// one in the network of one of this machine's interfaces. An address
// that is not an IP (a transport of another kind) is not known to be
// local.
func hostLocal(addr net.Addr) bool {
	if addr == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return false
	}
	return onLAN(ap.Addr(), interfaceNets())
}

// onLAN reports whether ip is on this machine or its LAN, given the
// networks of this machine's interfaces.
func onLAN(ip netip.Addr, nets []netip.Prefix) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified() {
		return true
	}
	for _, n := range nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// interfaceNets are the networks of this machine's interfaces; none
// where the system does not tell (a browser).
func interfaceNets() []netip.Prefix {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Prefix
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		ones, bits := n.Mask.Size()
		if ip.Is4() && bits == 128 { // an IPv4 network with a 16-byte mask
			ones -= 96
		}
		if p, err := ip.Prefix(ones); err == nil {
			out = append(out, p)
		}
	}
	return out
}
