package main

import (
	"bytes"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/transport/lan"
)

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// A machine's interfaces, as a home machine has them: loopback, a LAN
// card with IPv4, link-local and global IPv6, a card that is down.
var homeMachine = []ifaceAddrs{
	{up: true, loopback: true, addrs: addrs("127.0.0.1", "::1")},
	{up: true, addrs: addrs("fe80::1c2b:3aff:fe4d:5e6f", "2001:db8::15", "192.168.1.15")},
	{up: false, addrs: addrs("10.9.0.2")},
	{up: true, addrs: addrs("169.254.7.7", "10.8.0.3")},
}

// TestReachableAddrs: a listener on every interface is reached at the
// machine's LAN addresses (IPv4 first, no loopback, link-local or
// down interface); one on an address, at that address; a machine with
// loopback only, at loopback.
func TestReachableAddrs(t *testing.T) {
	for _, tc := range []struct {
		listen string
		ifaces []ifaceAddrs
		want   []netip.Addr
	}{
		{"::", homeMachine, addrs("192.168.1.15", "10.8.0.3", "2001:db8::15")},
		{"0.0.0.0", homeMachine, addrs("192.168.1.15", "10.8.0.3", "2001:db8::15")},
		{"192.168.1.15", homeMachine, addrs("192.168.1.15")},
		{"127.0.0.1", homeMachine, addrs("127.0.0.1")},
		{"::", homeMachine[:1], addrs("127.0.0.1", "::1")},
		{"::", nil, nil},
	} {
		if got := reachableAddrs(netip.MustParseAddr(tc.listen), tc.ifaces); !slices.Equal(got, tc.want) {
			t.Errorf("listen %s: %v, want %v", tc.listen, got, tc.want)
		}
	}
}

// TestJoinURLsNameTheMachine: --http on every interface logs the
// addresses a friend can open, not the wildcard the listener reports
// (url=http://[::]:8080/play, which no browser elsewhere opens).
func TestJoinURLsNameTheMachine(t *testing.T) {
	var buf bytes.Buffer
	logJoinURLs(slog.New(slog.NewTextHandler(&buf, nil)), &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, homeMachine)
	for _, want := range []string{
		`msg="players may join over WebSocket" url=ws://192.168.1.15:8080/ws also="[ws://10.8.0.3:8080/ws ws://[2001:db8::15]:8080/ws]"`,
		`msg="players may join from a browser" url=http://192.168.1.15:8080/play also="[http://10.8.0.3:8080/play http://[2001:db8::15]:8080/play]"`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks\n%s\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "[::]") {
		t.Errorf("the log names the wildcard address:\n%s", buf.String())
	}
	buf.Reset()
	logJoinURLs(slog.New(slog.NewTextHandler(&buf, nil)), &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, homeMachine)
	if want := "url=http://127.0.0.1:8080/play\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("loopback listener: log lacks %q:\n%s", want, buf.String())
	}
}

// TestCarries: the interfaces whose addresses a host names to friends
// are the ones up and running (carrier, or operationally up). A bridge
// that is up with nothing on it, such as podman's cni-podman0 (state
// DOWN, NO-CARRIER, flags UP), is left out: no friend reaches the host
// through it. Loopback and point-to-point links (a VPN's tun or wg
// interface) count when running like any other; reachableAddrs keeps
// loopback for when nothing else is left.
func TestCarries(t *testing.T) {
	for _, tc := range []struct {
		ifc  net.Interface
		want bool
	}{
		{net.Interface{Name: "eth0", Flags: net.FlagUp | net.FlagBroadcast | net.FlagMulticast | net.FlagRunning}, true},
		{net.Interface{Name: "cni-podman0", Flags: net.FlagUp | net.FlagBroadcast | net.FlagMulticast}, false},
		{net.Interface{Name: "eth1", Flags: net.FlagBroadcast | net.FlagMulticast}, false},
		{net.Interface{Name: "eth2", Flags: net.FlagBroadcast | net.FlagRunning}, false},
		{net.Interface{Name: "lo", Flags: net.FlagUp | net.FlagLoopback | net.FlagRunning}, true},
		{net.Interface{Name: "lo", Flags: net.FlagLoopback}, false},
		{net.Interface{Name: "wg0", Flags: net.FlagUp | net.FlagPointToPoint | net.FlagRunning}, true},
		{net.Interface{Name: "tun0", Flags: net.FlagUp | net.FlagPointToPoint | net.FlagMulticast}, false},
	} {
		if got := lan.Carries(tc.ifc); got != tc.want {
			t.Errorf("%s (%v): carries = %v, want %v", tc.ifc.Name, tc.ifc.Flags, got, tc.want)
		}
	}
}
