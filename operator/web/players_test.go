package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/transport/ws"
)

// TestPlayersRoute: with Config.Players, /ws upgrades a player's
// WebSocket with no status token, even when the token guards the other
// routes (the game admits players); without it /ws is not served.
func TestPlayersRoute(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	src := &fakeSource{o: fullOverview(time.Now()), live: true}
	players := ws.NewListener(ws.Options{})
	defer players.Close()
	guarded := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet(), Token: token, Players: players}))
	defer guarded.Close()
	url := "ws" + strings.TrimPrefix(guarded.URL, "http") + ws.Path

	client, err := ws.Dial(ctx, url)
	if err != nil {
		t.Fatalf("a player on /ws without the status token: %v", err)
	}
	defer client.Close()
	hostEnd, err := players.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer hostEnd.Close()
	go hostEnd.Write([]byte("hi"))
	got := make([]byte, 2)
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "hi" {
		t.Fatalf("read %q, %v", got, err)
	}
	// The other routes still ask for the token.
	resp, err := http.Get(guarded.URL + "/api/overview")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/api/overview without the token: %d, want 401", resp.StatusCode)
	}

	without := httptest.NewServer(web.Handler(src, web.Config{Logger: testkit.Quiet()}))
	defer without.Close()
	if _, err := ws.Dial(ctx, "ws"+strings.TrimPrefix(without.URL, "http")+ws.Path); err == nil {
		t.Fatal("/ws served without Config.Players")
	}
}
