package portmap

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// Method chooses the protocols Find asks.
type Method string

// The methods of Find.
const (
	Auto   Method = "auto"    // both at once; the first that answers
	UPnP   Method = "upnp"    // UPnP-IGD only
	NATPMP Method = "nat-pmp" // NAT-PMP only
)

// FindTimeout bounds Find: an SSDP search waits 2 s for answers, NAT-PMP
// retries from 250 ms up.
const FindTimeout = 5 * time.Second

// Find asks the LAN for a router that forwards ports, by the protocols
// method names, and returns the first that answers. gateway is the router
// NAT-PMP asks (DefaultGateway when invalid).
func Find(ctx context.Context, method Method, gateway netip.Addr) (Router, error) {
	ctx, cancel := context.WithTimeout(ctx, FindTimeout)
	defer cancel()
	type found struct {
		r   Router
		err error
	}
	var askers []func() (Router, error)
	if method == Auto || method == NATPMP {
		askers = append(askers, func() (Router, error) { return findNATPMP(ctx, gateway) })
	}
	if method == Auto || method == UPnP {
		askers = append(askers, func() (Router, error) { return discoverUPnP(ctx) })
	}
	if len(askers) == 0 {
		return nil, fmt.Errorf("portmap: unknown method %q", method)
	}
	ch := make(chan found, len(askers))
	for _, ask := range askers {
		go func() {
			r, err := ask()
			ch <- found{r, err}
		}()
	}
	var errs []error
	for range askers {
		f := <-ch
		if f.err == nil {
			return f.r, nil
		}
		errs = append(errs, f.err)
	}
	return nil, fmt.Errorf("portmap: no router answered: %w", errors.Join(errs...))
}

// findNATPMP asks the gateway for its external address, the cheapest
// NAT-PMP request, to learn whether it speaks NAT-PMP.
func findNATPMP(ctx context.Context, gateway netip.Addr) (Router, error) {
	if !gateway.IsValid() {
		gw, err := DefaultGateway()
		if err != nil {
			return nil, fmt.Errorf("NAT-PMP: %w", err)
		}
		gateway = gw
	}
	timeout := FindTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	r := NewNATPMP(gateway, timeout)
	if _, err := r.ExternalIP(ctx); err != nil {
		return nil, err
	}
	return NewNATPMP(gateway, 3*time.Second), nil
}

// DefaultGateway is the IPv4 router of the default route: read from the
// routing table on Linux, else guessed as the .1 of the default route's
// local /24 (what home routers use).
func DefaultGateway() (netip.Addr, error) {
	if gw, err := linuxGateway("/proc/net/route"); err == nil || !errors.Is(err, os.ErrNotExist) {
		return gw, err
	}
	local, err := routeSource(netip.MustParseAddr("192.0.2.1"))
	if err != nil {
		return netip.Addr{}, err
	}
	b := local.As4()
	b[3] = 1
	return netip.AddrFrom4(b), nil
}

// linuxGateway reads the default route's gateway from a routing table in
// the format of /proc/net/route (addresses in hex, host byte order, which
// is little-endian on every platform Go runs Linux on but s390x, ppc64
// and mips; those read the bytes reversed).
func linuxGateway(path string) (netip.Addr, error) {
	f, err := os.Open(path)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("routing table: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[1] != "00000000" {
			continue
		}
		flags, err := strconv.ParseUint(fields[3], 16, 16)
		if err != nil || flags&0x2 == 0 { // RTF_GATEWAY
			continue
		}
		raw, err := hex.DecodeString(fields[2])
		if err != nil || len(raw) != 4 {
			continue
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], binary.LittleEndian.Uint32(raw))
		return netip.AddrFrom4(b), nil
	}
	if err := sc.Err(); err != nil {
		return netip.Addr{}, fmt.Errorf("routing table: %w", err)
	}
	return netip.Addr{}, errNoGateway
}

// routeSource is this machine's source address toward dst. A UDP
// "connection" only picks the route: it sends nothing.
func routeSource(dst netip.Addr) (netip.Addr, error) {
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, 9)))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("no IPv4 route: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap(), nil
}

// LocalAddr is this machine's address toward gateway (DefaultGateway when
// invalid): the address a router forwards to.
func LocalAddr(gateway netip.Addr) (netip.Addr, error) {
	if !gateway.IsValid() {
		gw, err := DefaultGateway()
		if err != nil {
			return netip.Addr{}, err
		}
		gateway = gw
	}
	return routeSource(gateway)
}

// documentation are the IPv4 ranges kept for examples (RFC 5737), which a
// test network behind a NAT may use as its LAN.
var documentation = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
}

// behindNAT says whether a is an address a home router hands out: private
// IPv4 (RFC 1918) or a documentation range.
func behindNAT(a netip.Addr) bool {
	a = a.Unmap()
	if !a.Is4() {
		return false
	}
	if a.IsPrivate() {
		return true
	}
	for _, p := range documentation {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Eligible says whether a host listening on listen (HOST:PORT) may ask a
// router to forward its port: not on loopback, and this machine's address
// toward the gateway (the listen address itself when it names one) is
// one a router behind a NAT hands out. gateway is the router to ask
// (DefaultGateway when invalid). When the host is not eligible, why says
// why in words.
func Eligible(listen string, gateway netip.Addr) (ok bool, why string) {
	ap, err := netip.ParseAddrPort(listenAddr(listen))
	if err != nil {
		return false, fmt.Sprintf("listen address %q: %v", listen, err)
	}
	ip := ap.Addr().Unmap()
	if ip.IsLoopback() {
		return false, "the host listens on loopback only"
	}
	if !ip.IsUnspecified() {
		if !behindNAT(ip) {
			return false, fmt.Sprintf("the listen address %v is not behind a home router", ip)
		}
		return true, ""
	}
	if !gateway.IsValid() {
		if gateway, err = DefaultGateway(); err != nil {
			return false, fmt.Sprintf("no router to ask: %v", err)
		}
	}
	local, err := routeSource(gateway)
	if err != nil {
		return false, fmt.Sprintf("no router to ask: %v", err)
	}
	if !behindNAT(local) {
		return false, fmt.Sprintf("this machine's address %v is not behind a home router", local)
	}
	return true, ""
}

// listenAddr fills in an empty host (":30502") as the unspecified IPv4
// address, and strips brackets' zone for parsing.
func listenAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return net.JoinHostPort(host, port)
}
