package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/lockhost/lockhost/transport/ws"
)

// TestWebSocketServe runs the real host with --http and a status token:
// it logs the URL players join over WebSocket at, and /ws upgrades with
// no token while the status routes ask for it; at an interrupt the host
// exits cleanly and /ws takes no one.
func TestWebSocketServe(t *testing.T) {
	dir := t.TempDir()
	bin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/host")
	tokenFile := writeFile(t, "token.txt", "a-status-token-5e1d\n")
	h := startServe(t, bin, filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--http-token-file", tokenFile)
	page := waitStatusPage(t, h.log, h.done)
	m := regexp.MustCompile(`msg="players may join over WebSocket" url=(ws://\S+)`).FindStringSubmatch(h.log.String())
	if m == nil {
		t.Fatalf("the host logs no WebSocket URL:\n%s", h.log.String())
	}
	if want := "ws" + page[len("http"):len(page)-1] + ws.Path; m[1] != want {
		t.Fatalf("WebSocket URL %s, want %s (the status page's address)", m[1], want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	nc, err := ws.Dial(ctx, m[1])
	if err != nil {
		t.Fatalf("a player on /ws without the status token: %v", err)
	}
	nc.Close()
	resp, err := http.Get(page + "api/overview")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/api/overview without the token: %d, want 401", resp.StatusCode)
	}
	if err := h.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = <-h.done
	h.done <- err // for the cleanup
	if err != nil {
		t.Fatalf("host exit after an interrupt: %v\n%s", err, h.log.String())
	}
	if nc, err := ws.Dial(ctx, m[1]); err == nil {
		nc.Close()
		t.Fatal("/ws upgrades after the host exited")
	}
}
