package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestLeaveIsNotADrop has one player leave on purpose (Leave), one leave
// by stopping Run, one vanish (Close with no leave) and one have its
// connection reset. The watcher is told the first two left and the
// others' connections were lost; the counters say two leaves and two
// drops; the log has one line for each, with the player's name and ID.
func TestLeaveIsNotADrop(t *testing.T) {
	var logs syncbuf.Buffer
	h := startHost(t, host.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, locksteptest.New(1, 16))
	var watch chatLog
	startJoiner(t, h.addr, "Alice", spectate, watch.hook)

	bob, _ := joinWith(t, h.addr, "Bob", spectate)
	if err := bob.Leave("done for today"); err != nil {
		t.Fatalf("leave: %v", err)
	}
	testkit.WaitFor(t, "Bob's leave notice", func() bool { return watch.noticed("Bob left the session.") })

	ctx, cancel := context.WithCancel(context.Background())
	carol, _ := joinWith(t, h.addr, "Carol", spectate)
	ran := make(chan error, 1)
	go func() { ran <- carol.Run(ctx) }()
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("run: %v", err)
	}
	testkit.WaitFor(t, "Carol's leave notice", func() bool { return watch.noticed("Carol left the session.") })

	dave, _ := joinWith(t, h.addr, "Dave", spectate)
	dave.Close()
	testkit.WaitFor(t, "Dave's drop notice", func() bool { return watch.noticed("Dave left the session (connection lost).") })

	// Erin's connection is reset under her, as a crashed machine's or a
	// NAT's would be: a lost connection too, not a bad packet.
	relay := testkit.StartRelay(t, h.addr)
	erin, _ := joinWith(t, relay.Addr(), "Erin", spectate)
	relay.ResetAll()
	testkit.WaitFor(t, "Erin's drop notice", func() bool { return watch.noticed("Erin left the session (connection lost).") })

	testkit.WaitFor(t, "the counters", func() bool { st := h.srv.Overview().Stats; return st.Leaves == 2 && st.Drops == 2 })
	for _, tc := range []struct {
		s    *join.Session
		line string
	}{
		{bob, `msg="player left" player=%d name=Bob `},
		{carol, `msg="player left" player=%d name=Carol `},
		{dave, `msg="player dropped" player=%d name=Dave why="connection lost" `},
		{erin, `msg="player dropped" player=%d name=Erin why="connection lost" `},
	} {
		line := fmt.Sprintf(tc.line, tc.s.Info().PlayerID)
		if n := strings.Count(logs.String(), line); n != 1 {
			t.Errorf("%d log lines %q, want 1:\n%s", n, line, logs.String())
		}
	}
	if watch.noticed("Bob left the session (") || watch.noticed("Carol left the session (") {
		t.Fatal("a leave on purpose was told as a lost connection")
	}
	// Bob may leave before the host has finished his join (its last clock
	// sync): his join then ends as left, never as dropped.
	for _, j := range h.srv.Overview().Joins {
		if j.Name == "Bob" && j.Outcome != host.JoinOK && j.Outcome != host.JoinLeft {
			t.Fatalf("Bob's join ended %q, want joined or left", j.Outcome)
		}
	}
}

// TestPlayerLinesNameThePlayer runs joins, chat, a speed change,
// a leave and a drop with a JSON log at info level: every line about a
// player carries both its ID and its name, and each leave or drop is
// logged once.
func TestPlayerLinesNameThePlayer(t *testing.T) {
	var buf syncbuf.Buffer
	h := startHost(t, host.Config{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}, locksteptest.New(1, 16))
	startJoiner(t, h.addr, "Alice", spectate)
	bob := startJoiner(t, h.addr, "Bob")
	if err := bob.sess.Chat("hi"); err != nil {
		t.Fatal(err)
	}
	speed := lockstep.SetSpeed(2)
	if err := bob.sess.Send(speed.MapID, speed.Kind, speed.Payload); err != nil {
		t.Fatal(err)
	}
	carol, _ := joinWith(t, h.addr, "Carol", spectate)
	carol.Close()
	dave, _ := joinWith(t, h.addr, "Dave", spectate)
	if err := dave.Leave(""); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the drop, the leave and the speed", func() bool {
		l := buf.String()
		return strings.Contains(l, `"player dropped"`) && strings.Contains(l, `"player left"`) && strings.Contains(l, `"speed set"`)
	})
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q: %v", line, err)
		}
		if _, ok := rec["player"]; !ok {
			continue
		}
		if name, _ := rec["name"].(string); name == "" {
			t.Errorf("a player line without the name: %s", line)
		}
		if msg := rec["msg"].(string); msg == "player left" || msg == "player dropped" {
			counts[msg+" "+rec["name"].(string)]++
		}
	}
	if counts["player dropped Carol"] != 1 || counts["player left Dave"] != 1 || len(counts) != 2 {
		t.Fatalf("leave and drop lines %v, want one drop for Carol and one leave for Dave", counts)
	}
}
