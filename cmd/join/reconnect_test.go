package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestReconnectsWithToken: the join tool's session loop rejoins by itself
// after the connection drops, as the same player with the same faction, and
// its world agrees with the host's.
func TestReconnectsWithToken(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b)
	d := testkit.StartRelay(t, addr)
	var out, errOut syncbuf.Buffer
	stdout, stderr = &out, &errOut
	defer func() { stdout, stderr = os.Stdout, os.Stderr }()

	cfg := join.Config{Addr: d.Addr(), Name: "Wanderer", Databases: b.Summary(), MapLoader: colony.MapLoader(b.Content)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := sess.Info()
	cur := &current{}
	cur.set(sess)
	done := make(chan error, 1)
	go func() { done <- stay(ctx, cur, newReconnector(cfg, time.Minute)) }()
	testkit.WaitFor(t, "a session token", func() bool { tok, _ := sess.Token(); return tok != nil })
	d.ResetAll()
	testkit.WaitFor(t, "a new session", func() bool { return cur.get() != sess })
	again := cur.get().Info()
	if again.PlayerID != first.PlayerID || again.Faction != first.Faction {
		t.Fatalf("reconnected as player %d faction %d, was %d faction %d", again.PlayerID, again.Faction, first.PlayerID, first.Faction)
	}
	testkit.WaitFor(t, "the rejoined player listed by name", func() bool {
		for _, p := range cur.get().Players() {
			if p.ID == again.PlayerID {
				return p.Name == "Wanderer"
			}
		}
		return false
	})
	log := errOut.String() + out.String()
	for _, want := range []string{"connection lost", "reconnecting in 1s", "reconnected: player"} {
		if !strings.Contains(log, want) {
			t.Errorf("output lacks %q:\n%s", want, log)
		}
	}
	// The rejoined world checked its map hashes against the host's on
	// load; the session then goes on.
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stay: %v", err)
	}
}

// TestNoReconnect: with reconnection off, a drop ends the session.
func TestNoReconnect(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	d := testkit.StartRelay(t, serveBundle(t, b))
	cfg := join.Config{Addr: d.Addr(), Name: "Wanderer", Databases: b.Summary(), MapLoader: colony.MapLoader(b.Content)}
	sess, err := join.Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cur := &current{}
	cur.set(sess)
	done := make(chan error, 1)
	go func() { done <- stay(context.Background(), cur, newReconnector(cfg, 0)) }()
	d.ResetAll()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the session ended without an error")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the session did not end")
	}
}

// TestReconnectWindowTooShort: a --reconnect-for too short for one try
// ends the rejoin at once, with an error that does not speak of a last
// try and the network exit code.
func TestReconnectWindowTooShort(t *testing.T) {
	var errOut syncbuf.Buffer
	stderr = &errOut
	defer func() { stderr = os.Stderr }()
	rc := newReconnector(join.Config{Addr: "127.0.0.1:1", Token: []byte("token")}, 500*time.Millisecond)
	_, err := rc.Rejoin(context.Background())
	if err == nil {
		t.Fatal("rejoined")
	}
	err = flagged(err)
	if want := "gave up reconnecting: --reconnect-for 500ms is too short for a try"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if code := classify(err); code != cliutil.ExitNetwork {
		t.Errorf("exit code %d, want %d", code, cliutil.ExitNetwork)
	}
	if s := errOut.String(); s != "" {
		t.Errorf("printed %q before giving up", s)
	}
}

// TestKickedOrBannedExitsWithoutReconnecting: the tool, reconnection on,
// shows the host's reason and exits 3 when the host kicks or bans it.
func TestKickedOrBannedExitsWithoutReconnecting(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr, srv := serveBundleServer(t, b)
	for _, tc := range []struct {
		name, want string
		act        func(name string) error
	}{
		{"Kicky", "(Kicked): You were kicked from the session: too loud.", func(name string) error {
			_, err := srv.Kick("api", name, "too loud")
			return err
		}},
		{"Banny", "(Banned): You are banned from this session: griefing.", func(name string) error {
			_, _, err := srv.Ban("api", name, 0, "griefing")
			return err
		}},
	} {
		type result struct {
			code        int
			out, errOut string
		}
		res := make(chan result, 1)
		go func() {
			code, out, errOut := runJoin(t, addr, "--name", tc.name, "--no-input")
			res <- result{code, out, errOut}
		}()
		testkit.WaitFor(t, "the player playing", func() bool {
			ps, _ := srv.Players()
			return len(ps) == 1 && ps[0].Name == tc.name && ps[0].Status == "playing"
		})
		if err := tc.act(tc.name); err != nil {
			t.Fatal(err)
		}
		var r result
		select {
		case r = <-res:
		case <-time.After(60 * time.Second): // bounds a hang only
			t.Fatalf("%s: the join tool did not exit", tc.name)
		}
		if r.code != 3 || !strings.Contains(r.errOut, tc.want) || strings.Contains(r.errOut+r.out, "reconnect") {
			t.Fatalf("%s: exit %d, stderr:\n%s\nstdout:\n%s", tc.name, r.code, r.errOut, r.out)
		}
	}
}
