package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/syncbuf"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// TestLeaveIsNotADrop has one player leave on purpose (Leave), one leave
// by stopping Run, and one vanish (Close with no leave). The watcher is
// told the first two left and the third's connection was lost; the
// counters say two leaves and one drop; the log has one line for each,
// with the player's name and ID.
func TestLeaveIsNotADrop(t *testing.T) {
	var logs syncbuf.Buffer
	h := startHost(t, host.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, locksteptest.New(1, 16))
	var watch chatLog
	startJoiner(t, h.addr, "Alice", spectate, watch.hook)

	bob, _ := joinWith(t, h.addr, "Bob", spectate)
	if err := bob.Leave("done for today"); err != nil {
		t.Fatalf("leave: %v", err)
	}
	waitFor(t, "Bob's leave notice", func() bool { return watch.noticed("Bob left the session.") })

	ctx, cancel := context.WithCancel(context.Background())
	carol, _ := joinWith(t, h.addr, "Carol", spectate)
	ran := make(chan error, 1)
	go func() { ran <- carol.Run(ctx) }()
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("run: %v", err)
	}
	waitFor(t, "Carol's leave notice", func() bool { return watch.noticed("Carol left the session.") })

	dave, _ := joinWith(t, h.addr, "Dave", spectate)
	dave.Close()
	waitFor(t, "Dave's drop notice", func() bool { return watch.noticed("Dave left the session (connection lost).") })

	waitFor(t, "the counters", func() bool { st := h.srv.Stats(); return st.Leaves == 2 && st.Drops == 1 })
	for _, tc := range []struct {
		s    *join.Session
		line string
	}{
		{bob, `msg="player left" player=%d name=Bob `},
		{carol, `msg="player left" player=%d name=Carol `},
		{dave, `msg="player dropped" player=%d name=Dave why="connection lost" `},
	} {
		line := fmt.Sprintf(tc.line, tc.s.Info().PlayerID)
		if n := strings.Count(logs.String(), line); n != 1 {
			t.Errorf("%d log lines %q, want 1:\n%s", n, line, logs.String())
		}
	}
	if watch.noticed("Bob left the session (") || watch.noticed("Carol left the session (") {
		t.Fatal("a leave on purpose was told as a lost connection")
	}
}
