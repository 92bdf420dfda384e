package main

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/transport/lan"
)

// loopbackName is the loopback interface's name, the only interface
// these tests probe: no discovery probe of theirs leaves the machine.
func loopbackName(t *testing.T) string {
	t.Helper()
	ifaces, err := lan.ServedInterfaces(netip.MustParseAddr("127.0.0.1"))
	if err != nil || len(ifaces) == 0 {
		t.Fatalf("no loopback interface: %v", err)
	}
	return ifaces[0].Name
}

// serveDiscoverable hosts a small world named name on loopback, answering
// LAN discovery on port (0: a free one), and returns its game address and
// discovery port.
func serveDiscoverable(t *testing.T, b *gamecontent.Bundle, name string, port int) (string, int) {
	t.Helper()
	world, err := colony.New(b.Content, colony.Config{Maps: 1, Width: 48, Height: 48, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := host.New(hosttest.Config(host.Config{GameName: name}),
		host.Content{GameVersion: b.GameVersion, Mods: b.Mods, Databases: b.Summary()}, world)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ifaces, _ := lan.InterfaceByName(loopbackName(t))
	pcs, err := lan.Listen(ctx, port, ifaces)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.ServeListeners(ctx, &host.Listeners{TCP: ln, Discovery: pcs}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("host %s: %v", name, err)
		}
	})
	return ln.Addr().String(), pcs[0].LocalAddr().(*net.UDPAddr).Port
}

// TestDiscoverAndJoinByName: join discover lists a host on loopback with
// its address, game, players, password, TLS and content match; join NAME
// joins it; a name nobody answers to, or two hosts answer to, is said so
// (without pointing at --help, which would not help).
func TestDiscoverAndJoinByName(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr, port := serveDiscoverable(t, b, "Attic", 0)
	where := []string{"--interface", loopbackName(t), "--discovery-port", strconv.Itoa(port)}

	code, out, errOut := runJoin(t, append([]string{"discover"}, where...)...)
	want := "Attic  " + addr + "  game=" + b.GameVersion + " players=0/8 password=no tls=no content=matches"
	if code != cliutil.ExitOK || strings.TrimSpace(out) != want {
		t.Fatalf("discover: exit %d\nstdout %q\nwant   %q\nstderr %s", code, out, want, errOut)
	}

	code, out, errOut = runJoin(t, append([]string{"Attic", "--name", "Alice", "-q", "--exit-after-ready"}, where...)...)
	if code != cliutil.ExitOK || !strings.Contains(out, "WorldReady") || !strings.Contains(errOut, "found Attic at "+addr) {
		t.Fatalf("join by name: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	code, _, errOut = runJoin(t, append([]string{"Cellar", "--name", "Alice", "-q"}, where...)...)
	if code != cliutil.ExitNetwork || !strings.Contains(errOut, `no host named "Cellar" answered on the local network`) {
		t.Fatalf("unknown name: exit %d, stderr %s", code, errOut)
	}

	second, _ := serveDiscoverable(t, b, "Attic", port) // shares the discovery port
	code, _, errOut = runJoin(t, append([]string{"Attic", "--name", "Alice", "-q"}, where...)...)
	// Not a mistake --help explains: the sentence says what to do.
	if code != cliutil.ExitUsage || !strings.Contains(errOut, `2 hosts named "Attic" answered`) || !strings.Contains(errOut, second) ||
		strings.Contains(errOut, "--help") {
		t.Fatalf("two hosts of one name: exit %d, stderr %s", code, errOut)
	}
}

// TestIsAddress: what join takes as an address rather than a name to find.
func TestIsAddress(t *testing.T) {
	for arg, want := range map[string]bool{
		"192.0.2.1": true, "192.0.2.1:30502": true, "::1": true, "[::1]:30502": true, "example.org": true,
		"localhost": true, "ws://example.org:8080/ws": true, "Attic": false, "my_host": false,
	} {
		if got := isAddress(arg); got != want {
			t.Errorf("isAddress(%q) = %v, want %v", arg, got, want)
		}
	}
}

// TestDiscoverCannotProbe: join discover that cannot send a single probe
// (--interface names an interface with no IPv4 address to broadcast
// from and no multicast) exits 4, the network's code, saying no probe
// was sent; an interface name the machine does not have is a usage
// slip, exit 2, naming it. Nothing leaves the machine: the interfaces
// have no address to send from, and the discovery port is a test's.
func TestDiscoverCannotProbe(t *testing.T) {
	port := []string{"--discovery-port", strconv.Itoa(freeUDPPort(t))}
	check := func(t *testing.T, iface string, wantCode int, wantErr ...string) {
		t.Helper()
		code, out, errOut := runJoin(t, append([]string{"discover", "--interface", iface}, port...)...)
		t.Logf("discover --interface %s: exit %d: %s", iface, code, errOut)
		if code != wantCode || out != "" {
			t.Errorf("discover --interface %s: exit %d, want %d\nstdout %q\nstderr %s", iface, code, wantCode, out, errOut)
		}
		for _, w := range wantErr {
			if !strings.Contains(errOut, w) {
				t.Errorf("discover --interface %s: stderr lacks %q:\n%s", iface, w, errOut)
			}
		}
	}
	t.Run("no address", func(t *testing.T) {
		// An interface as net.InterfaceByName returns one that is up
		// but holds no address (its index is no interface's here).
		interfaceByName = func(name string) ([]net.Interface, error) {
			return []net.Interface{{Index: 1 << 30, Name: name, Flags: net.FlagUp | net.FlagBroadcast}}, nil
		}
		defer func() { interfaceByName = lan.InterfaceByName }()
		check(t, "bare0", cliutil.ExitNetwork, "no probe sent", "no interface to probe")
	})
	t.Run("this machine's interface without address", func(t *testing.T) {
		// Such as an ifb device: down, no address, no multicast.
		ifaces, err := net.Interfaces()
		if err != nil {
			t.Fatal(err)
		}
		for _, ifi := range ifaces {
			addrs, err := ifi.Addrs()
			if err == nil && len(addrs) == 0 && ifi.Flags&net.FlagMulticast == 0 {
				check(t, ifi.Name, cliutil.ExitNetwork, "no probe sent", "no interface to probe")
				return
			}
		}
		t.Skip("this machine has no interface without an address and multicast")
	})
	t.Run("no such interface", func(t *testing.T) {
		check(t, "nosuch0", cliutil.ExitUsage, `--interface: interface "nosuch0"`)
	})
}

// freeUDPPort is a UDP port on loopback that nothing listens on.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}
