package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// player joins addr as name the way the tool does (notices, chat and the
// typed-command log printed to out) and runs the session until the test
// ends.
func player(t *testing.T, addr, name string, b *gamecontent.Bundle, out io.Writer) (*join.Session, *typedLog) {
	t.Helper()
	typed := &typedLog{out: out}
	cfg := join.Config{Addr: addr, Name: name, Databases: b.Summary(), MapLoader: colony.MapLoader(b.Content),
		Logger:  testkit.Quiet(),
		Notice:  func(text string) { fmt.Fprintln(out, "notice:", text) },
		Chat:    func(c join.ChatLine) { fmt.Fprintln(out, chatLine(c)) },
		OnApply: typed.applied}
	ctx, cancel := context.WithCancel(context.Background())
	sess, err := join.Join(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatalf("join %s: %v", name, err)
	}
	typed.me.Store(sess.Info().PlayerID)
	done := make(chan error, 1)
	go func() { done <- sess.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return sess, typed
}

// waitOutput waits for want in buf; the bound only ends a hang.
func waitOutput(t *testing.T, buf *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%s", want, buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTypedCommandsAnswer types the commands docs/players.md shows under
// "Playing" (pawns first, for an ID to move), into a real session: each
// one says what happened, to this player or (speed, chat) to everyone.
func TestTypedCommandsAnswer(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b)
	var out, bobOut syncbuf.Buffer
	stdout, stderr = &out, &out
	defer func() { stdout, stderr = os.Stdout, os.Stderr }()
	sess, typed := player(t, addr, "Alice", b, &out)
	player(t, addr, "Bob", b, &bobOut)
	// Both, as "players" below prints them: the roster's update of
	// Alice's own status can come after Bob's.
	testkit.WaitFor(t, "Alice to see herself and Bob playing", func() bool {
		ps := sess.Players()
		return len(ps) == 2 && ps[0].Status == "playing" && ps[1].Status == "playing"
	})
	cur := &current{}
	cur.set(sess)

	pawns := make(chan int32, 1)
	sess.Do(func(sim lockstep.Sim) { pawns <- sim.(*colony.World).Pawns(0)[0].ID })
	pawn := <-pawns
	script := fmt.Sprintf("pawns 0\nmaps\nplayers\nspeed 2\nspawn Steel 0 10 12 25\nmove 0 %d 40 41\nhello, Bob\nsay  second line\npawns 9\nspeed fast\n", pawn)
	readCommands(context.Background(), strings.NewReader(script), cur, typed)

	for _, want := range []string{
		fmt.Sprintf("pawn %d ", pawn),
		"map 1: 64x64",
		"2 in the session:", "Alice: playing, faction 1, latency ", "Bob: playing, faction 1, latency ",
		"notice: Speed set to 2 by Alice.",
		"spawned 25 Steel on map 0 at 10,12",
		fmt.Sprintf("pawn %d on map 0 is walking to 40,41", pawn),
		"chat: <Alice> hello, Bob",
		"chat: <Alice> second line",
		"there is no map 9",
		`"fast" is not a number`,
	} {
		waitOutput(t, &out, want)
	}
	for _, want := range []string{"notice: Speed set to 2 by Alice.", "chat: <Alice> hello, Bob", "chat: <Alice> second line"} {
		waitOutput(t, &bobOut, want)
	}
	if strings.Contains(out.String(), "unknown command") {
		t.Fatalf("a chat line was taken for a mistyped command:\n%s", out.String())
	}
}
