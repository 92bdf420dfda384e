package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/netip"
	"strings"
	"testing"

	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/testing/testkit"
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
	return answerStatus(t, srv)
}

// answerStatus answers srv's UDP status query on a loopback port of its
// own, whose address it returns.
func answerStatus(t *testing.T, srv *host.Server) string {
	t.Helper()
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

// TestPingSaysPaths: join ping says how many players came by each path
// (over loopback, every player is "lan"), and nothing of paths with
// nobody online.
func TestPingSaysPaths(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr, srv := serveBundleServer(t, b)
	statusAddr := answerStatus(t, srv)
	code, out, _ := runJoin(t, "ping", statusAddr)
	if code != 0 || strings.Contains(out, "paths") {
		t.Fatalf("nobody online: exit %d, %q; want no paths", code, out)
	}
	code, out, _ = runJoin(t, "ping", statusAddr, "--json")
	if code != 0 || strings.Contains(out, "paths") {
		t.Fatalf("nobody online, --json: exit %d, %q; want no paths", code, out)
	}
	player(t, addr, "Ann", b, io.Discard)
	player(t, addr, "Bob", b, io.Discard)
	testkit.WaitFor(t, "the Overview to show both", func() bool { return len(srv.Overview().Players) == 2 })
	code, out, errOut := runJoin(t, "ping", statusAddr)
	if code != 0 || !strings.Contains(out, " 2/8 players") || !strings.HasSuffix(out, ", paths: 2 lan\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 players, paths: 2 lan", code, out, errOut)
	}
	code, out, _ = runJoin(t, "ping", statusAddr, "--json")
	var r struct {
		Players int            `json:"players"`
		Paths   map[string]int `json:"paths"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Players != 2 || !maps.Equal(r.Paths, map[string]int{"lan": 2}) {
		t.Fatalf("--json: exit %d, %q (%v); want paths {lan: 2}", code, out, err)
	}
}
