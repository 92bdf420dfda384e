package main

import (
	"context"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/coord/coordserver"
)

// registerAt registers a host reached at lan with a coordinator and
// returns its code.
func registerAt(t *testing.T, co *coord.Coordinator, lan ...string) string {
	return registerReach(t, co, coord.Reach{LAN: lan})
}

// registerReach registers a host that says it is reached as r.
func registerReach(t *testing.T, co *coord.Coordinator, r coord.Reach) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	secret, err := coord.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 4)
	h := coord.Register(ctx, coord.HostConfig{Coordinator: co, Secret: secret,
		Reach:        func() coord.Reach { return r },
		OnRegistered: func(coord.Code, *coord.TURN) { done <- struct{}{} }})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no registration in 10 s")
	}
	return string(h.Code())
}

// TestJoinByInvite joins a host by its invite code through a coordinator
// over loopback, and checks the mistakes and failures say what they are.
func TestJoinByInvite(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b)
	srv, err := coordserver.NewServer(coordserver.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	co, err := coord.ParseURL(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := free.Addr().String()
	free.Close()
	code := registerAt(t, co, closedAddr, addr) // the first address refuses: the race goes on
	dead := registerAt(t, co, closedAddr)
	// A host with TLS whose address takes the connection and says
	// nothing: the handshake hangs until --connect-timeout.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mute.Close() })
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	silent := registerReach(t, co, coord.Reach{Addrs: []string{mute.Addr().String()}, Fingerprint: "sha256:" + strings.Repeat("ab", 32)})
	other, _ := coord.NewSecret()
	unknown := string(coord.CodeOfSecret(other))
	known := filepath.Join(t.TempDir(), "known_hosts")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"by code", []string{code, "--coordinator", ts.URL, "--name", "Alice", "--exit-after-ready", "-q", "--known-hosts", known}, cliutil.ExitOK, "WorldReady tick=", "reached the host of " + code + ": lan"},
		{"no coordinator", []string{code, "--name", "Alice", "-q"}, cliutil.ExitUsage, "", "--coordinator URL"},
		{"bad code", []string{"+K7QF2M0", "--coordinator", ts.URL, "--name", "Alice", "-q"}, cliutil.ExitUsage, "", "is not one of its letters"},
		{"unknown code", []string{unknown, "--coordinator", ts.URL, "--name", "Alice", "-q"}, cliutil.ExitNetwork, "", "no host is registered as " + unknown},
		{"unreachable", []string{dead, "--coordinator", ts.URL, "--name", "Alice", "-q", "--connect-timeout", "2s", "--no-reconnect"}, cliutil.ExitNetwork, "",
			"could not reach the host of " + dead + ": none of the addresses it registered answered, and the host ended the connection attempt through the coordinator"},
		{"silent", []string{silent, "--coordinator", ts.URL, "--name", "Alice", "-q", "--connect-timeout", "1s", "--no-reconnect", "--known-hosts", known}, cliutil.ExitNetwork, "",
			"could not reach the host of " + silent + " within 1s: none of the addresses it registered answered"},
		{"zero connect timeout", []string{code, "--coordinator", ts.URL, "--name", "Alice", "--connect-timeout", "0s"}, cliutil.ExitUsage, "", "--connect-timeout 0s is refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, errOut := runJoin(t, tc.args...)
			if status != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", status, tc.code, out, errOut)
			}
			if !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out, tc.out, errOut, tc.err)
			}
		})
	}
}
