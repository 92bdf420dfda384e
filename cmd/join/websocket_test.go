package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/wire"
)

// TestWebSocketArgs: a ws:// or wss:// URL is taken as the host, as it
// is, and dialled through WebSocket; a malformed one is a usage mistake;
// HOST[:PORT] keeps its TCP meaning.
func TestWebSocketArgs(t *testing.T) {
	for _, tc := range []struct {
		arg, addr string
		ok, ws    bool
	}{
		{"ws://127.0.0.1:8080/ws", "ws://127.0.0.1:8080/ws", true, true},
		{"wss://host.example/ws", "wss://host.example/ws", true, true},
		{"ws://[::1]:8080/ws", "ws://[::1]:8080/ws", true, true},
		{"WS://HOST.EXAMPLE:80/ws", "WS://HOST.EXAMPLE:80/ws", true, true},
		{"ws:///ws", "", false, true},
		{"ws://host.example:0/ws", "", false, true},
		{"ws://host.example:99999/ws", "", false, true},
		{"ws://host.example:port/ws", "", false, true},
		{"ws://host example/ws", "", false, true},
		{"127.0.0.1:7777", "127.0.0.1:7777", true, false},
		{"host.example", "host.example:" + strconv.Itoa(wire.DefaultPort), true, false},
	} {
		err := checkHostAddr(tc.arg)
		if (err == nil) != tc.ok {
			t.Errorf("checkHostAddr(%q) = %v, want ok %v", tc.arg, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if got := hostAddr(tc.arg); got != tc.addr {
			t.Errorf("hostAddr(%q) = %q, want %q", tc.arg, got, tc.addr)
		}
		if got := dialFor(tc.arg) != nil; got != tc.ws {
			t.Errorf("dialFor(%q) through WebSocket %v, want %v", tc.arg, got, tc.ws)
		}
	}
}

// TestWebSocketBinary: the real host tool with --http takes players at
// /ws, and the real join tool joins through the URL it logs: with the
// session's password it reaches WorldReady, without it it is refused as
// over TCP; the host logs the player from the HTTP client's address.
// ping, which asks over UDP, refuses a URL.
func TestWebSocketBinary(t *testing.T) {
	joinBin, hostBin := buildTools(t)
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("correct horse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, _ := startHostBin(t, hostBin, "--http", "127.0.0.1:0", "--password-file", pwFile)
	m := regexp.MustCompile(`msg="players may join over WebSocket" url=(ws://\S+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("the host logs no WebSocket URL:\n%s", log.String())
	}
	url := m[1]
	if code, out, errOut := runBin(t, joinBin, url, "--name", "NoPw", "-q", "--exit-after-ready"); code != cliutil.ExitRejected ||
		!strings.Contains(errOut, "BadPassword") {
		t.Fatalf("no password over WebSocket: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut := runBin(t, joinBin, url, "--name", "Alice", "-q", "--exit-after-ready", "--password-file", pwFile)
	if code != 0 || !strings.Contains(out, "WorldReady") {
		t.Fatalf("join over WebSocket: exit %d\nstdout: %s\nstderr: %s\nhost:\n%s", code, out, errOut, log.String())
	}
	if !regexp.MustCompile(`msg="sending world" remote=127\.0\.0\.1:\d+ player=\d+ name=Alice`).MatchString(log.String()) {
		t.Fatalf("the host logs no Alice joined from 127.0.0.1:\n%s", log.String())
	}
	if code, _, errOut := runBin(t, joinBin, "ping", url); code != cliutil.ExitUsage || !strings.Contains(errOut, "UDP") {
		t.Fatalf("ping of a URL: exit %d, %q", code, errOut)
	}
}
