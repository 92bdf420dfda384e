package lan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// Listen opens the host's discovery sockets on port: one IPv4 and one
// IPv6 socket on the wildcard address (so broadcast probes arrive), each
// shared with other hosts on the machine where the system allows it, and
// joined to Group4 or Group6 on each of ifaces. It returns the sockets it
// could open (IPv6 may be missing on a machine without it) and an error
// only when none opened. Joining a group on an interface is announced on
// that interface (IGMP, MLD): pass only the interfaces the host serves.
func Listen(ctx context.Context, port int, ifaces []net.Interface) ([]net.PacketConn, error) {
	lc := net.ListenConfig{Control: reuseControl}
	var pcs []net.PacketConn
	var errs []error
	for _, fam := range []struct {
		network, wildcard string
		group             netip.Addr
	}{{"udp4", "0.0.0.0", Group4}, {"udp6", "::", Group6}} {
		pc, err := lc.ListenPacket(ctx, fam.network, net.JoinHostPort(fam.wildcard, strconv.Itoa(port)))
		if err != nil {
			errs = append(errs, fmt.Errorf("discovery port %s: %w", fam.network, err))
			continue
		}
		if port == 0 { // a test's port: the IPv6 socket takes the same number
			port = pc.LocalAddr().(*net.UDPAddr).Port
		}
		for _, ifi := range ifaces {
			if err := joinGroup(pc, fam.group, ifi); err != nil {
				errs = append(errs, fmt.Errorf("join %s on %s: %w", fam.group, ifi.Name, err))
			}
		}
		pcs = append(pcs, pc)
	}
	if len(pcs) == 0 {
		return nil, errors.Join(errs...)
	}
	return pcs, nil
}

// joinGroup joins pc to group on ifi. An interface without an IPv4
// address joins no IPv4 group: named by the address 0.0.0.0, the system
// would choose the interface itself.
func joinGroup(pc net.PacketConn, group netip.Addr, ifi net.Interface) error {
	if group.Is4() && firstIPv4(ifi) == ([4]byte{}) {
		return nil
	}
	return control(pc, func(fd uintptr) error {
		if group.Is4() {
			return join4(fd, group.As4(), firstIPv4(ifi))
		}
		return join6(fd, group.As16(), ifi.Index)
	})
}

// setMulticastInterface makes pc send IPv4 multicast out of the interface
// holding the address from.
func setMulticastInterface(pc net.PacketConn, from netip.Addr) error {
	return control(pc, func(fd uintptr) error { return multicastIf4(fd, from.As4()) })
}

// control runs set on pc's socket, a UDP one, and returns both its error
// and the system's for reaching the socket.
func control(pc net.PacketConn, set func(fd uintptr) error) error {
	uc, ok := pc.(*net.UDPConn)
	if !ok {
		return errors.ErrUnsupported
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) { serr = set(fd) })
	return errors.Join(cerr, serr)
}

// firstIPv4 is ifi's first IPv4 address, or 0.0.0.0 (any interface).
func firstIPv4(ifi net.Interface) [4]byte {
	for _, p := range prefixes4(ifi) {
		return p.Addr().As4()
	}
	return [4]byte{}
}

// prefixes4 lists ifi's IPv4 networks.
func prefixes4(ifi net.Interface) []netip.Prefix {
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil
	}
	var out []netip.Prefix
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		ones, bits := ipn.Mask.Size()
		if !ok || !ip.Unmap().Is4() || bits == 0 {
			continue
		}
		if bits == 128 {
			ones -= 96
		}
		out = append(out, netip.PrefixFrom(ip.Unmap(), ones))
	}
	return out
}

// ServedInterfaces returns the interfaces a host listening on listen
// serves: the loopback interfaces for a loopback address, the interface
// holding a specific address, every interface that is up and can
// multicast for the unspecified address.
func ServedInterfaces(listen netip.Addr) ([]net.Interface, error) {
	all, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("interfaces: %w", err)
	}
	var out []net.Interface
	for _, ifi := range all {
		if ifi.Flags&net.FlagUp == 0 {
			continue
		}
		loop := ifi.Flags&net.FlagLoopback != 0
		switch {
		case listen.IsLoopback():
			if loop {
				out = append(out, ifi)
			}
		case listen.IsUnspecified():
			if loop || ifi.Flags&net.FlagMulticast != 0 {
				out = append(out, ifi)
			}
		case holds(ifi, listen):
			out = append(out, ifi)
		}
	}
	return out, nil
}

// holds reports whether ifi has address a.
func holds(ifi net.Interface, a netip.Addr) bool {
	addrs, err := ifi.Addrs()
	if err != nil {
		return false
	}
	for _, x := range addrs {
		if ipn, ok := x.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok && ip.Unmap() == a.Unmap().WithZone("") {
				return true
			}
		}
	}
	return false
}

// LoopbackOnly is an Options.Accept for a host that listens on loopback:
// it answers only probes from this machine.
func LoopbackOnly(a netip.Addr) bool { return a.IsLoopback() }
