package main

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/status"
)

// TestPingSaysPortMapping: join ping prints how the host is reached from
// the internet when the host says (its router's port mapping), and
// nothing of it when the host does not.
func TestPingSaysPortMapping(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	mapped := serveStatus(t, b, func(c *host.Config) {
		c.Reach = func() status.Reach {
			return status.Reach{Mapping: status.MappingMapped, External: netip.MustParseAddrPort("198.51.100.1:30502")}
		}
	})
	code, out, errOut := runJoin(t, "ping", mapped)
	if code != 0 || !strings.Contains(out, ", port mapping mapped at 198.51.100.1:30502\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the mapping and its address", code, out, errOut)
	}
	code, out, _ = runJoin(t, "ping", mapped, "--json")
	if code != 0 || !strings.Contains(out, `"port_mapping":"mapped","external":"198.51.100.1:30502"`) {
		t.Fatalf("--json: exit %d, %q", code, out)
	}
	silent := serveStatus(t, b)
	code, out, _ = runJoin(t, "ping", silent)
	if code != 0 || strings.Contains(out, "port mapping") {
		t.Fatalf("a host that does not say: exit %d, %q; want no port mapping", code, out)
	}
}

// serveStatus runs a host of b and answers its UDP status query on a
// loopback port of its own, whose address it returns.
func serveStatus(t *testing.T, b *gamecontent.Bundle, mods ...func(*host.Config)) string {
	t.Helper()
	_, srv := serveBundleServer(t, b, mods...)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeStatus(ctx, pc)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		pc.Close()
	})
	return pc.LocalAddr().String()
}
