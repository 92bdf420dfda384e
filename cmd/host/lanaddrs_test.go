package main

import (
	"bytes"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
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
