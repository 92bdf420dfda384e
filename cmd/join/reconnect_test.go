package main

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/colony"
	"github.com/lockhost/lockhost/internal/gamecontent"
	"github.com/lockhost/lockhost/internal/syncbuf"
	"github.com/lockhost/lockhost/join"
)

// dropper forwards connections to target and can cut them all.
type dropper struct {
	addr  string
	mu    sync.Mutex
	conns []net.Conn
}

func startDropper(t *testing.T, target string) *dropper {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	d := &dropper{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			d.mu.Lock()
			d.conns = append(d.conns, c, u)
			d.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return d
}

// cut drops every connection, as a network failure would.
func (d *dropper) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// TestReconnectsWithToken: the join tool's session loop rejoins by itself
// after the connection drops, as the same player with the same faction, and
// its world agrees with the host's.
func TestReconnectsWithToken(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b)
	d := startDropper(t, addr)
	var out, errOut syncbuf.Buffer
	stdout, stderr = &out, &errOut
	defer func() { stdout, stderr = os.Stdout, os.Stderr }()

	cfg := join.Config{Addr: d.addr, Name: "Wanderer", Databases: b.Summary(), MapLoader: colony.MapLoader(b.Content)}
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
	go func() { done <- stay(ctx, cur, cfg, true) }()
	waitUntil(t, func() bool { tok, _ := sess.Token(); return tok != nil })
	d.cut()
	waitUntil(t, func() bool { return cur.get() != sess })
	again := cur.get().Info()
	if again.PlayerID != first.PlayerID || again.Faction != first.Faction {
		t.Fatalf("reconnected as player %d faction %d, was %d faction %d", again.PlayerID, again.Faction, first.PlayerID, first.Faction)
	}
	waitUntil(t, func() bool {
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
	d := startDropper(t, serveBundle(t, b))
	cfg := join.Config{Addr: d.addr, Name: "Wanderer", Databases: b.Summary(), MapLoader: colony.MapLoader(b.Content)}
	sess, err := join.Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cur := &current{}
	cur.set(sess)
	done := make(chan error, 1)
	go func() { done <- stay(context.Background(), cur, cfg, false) }()
	time.Sleep(100 * time.Millisecond)
	d.cut()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the session ended without an error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end")
	}
}

// TestRejoinGraceTooShort: a grace period too short for one try ends
// the rejoin at once, with an error that does not speak of a last try.
func TestRejoinGraceTooShort(t *testing.T) {
	var errOut syncbuf.Buffer
	stderr = &errOut
	defer func() { stderr = os.Stderr }()
	_, err := rejoin(context.Background(), join.Config{Addr: "127.0.0.1:1"}, []byte("token"), 500*time.Millisecond)
	if err == nil {
		t.Fatal("rejoined")
	}
	if want := "could not reconnect within 500ms"; !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "last try") {
		t.Errorf("error %q, want it to start with %q and not speak of a last try", err, want)
	}
	if s := errOut.String(); s != "" {
		t.Errorf("printed %q before giving up", s)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
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
		waitUntil(t, func() bool {
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
