package host_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestJoinStoppedBeforeReadyIsALeave stops a join (its context) in the
// handshake and in the download, through a relay slow enough to hold it
// in each: Join returns context.Canceled, and the host counts a leave
// (the player's, or a join left before admission), never a drop, a
// refusal or an error.
func TestJoinStoppedBeforeReadyIsALeave(t *testing.T) {
	for _, tc := range []struct {
		phase  join.Phase
		leaves uint64 // players that left
		line   string
	}{
		{join.PhaseHandshake, 0, "client left before admission"},
		{join.PhaseDownload, 1, "player left"},
	} {
		t.Run(string(tc.phase), func(t *testing.T) {
			var logs syncbuf.Buffer
			h := startHost(t, host.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, locksteptest.New(1, 16))
			r := testkit.StartRelay(t, h.addr)
			r.SetDelay(300 * time.Millisecond)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := joinCfg(r.Addr(), "Quitter", newHashLog())
			cfg.Progress = func(p join.Progress) {
				if p.Phase == tc.phase {
					cancel()
				}
			}
			if _, err := join.Join(ctx, cfg); !errors.Is(err, context.Canceled) {
				t.Fatalf("join: %v, want context.Canceled", err)
			}
			testkit.WaitFor(t, "the host's "+tc.line+" line", func() bool { return strings.Contains(logs.String(), tc.line) })
			st := h.srv.Overview().Stats
			if st.Leaves != tc.leaves || st.Drops != 0 {
				t.Fatalf("leaves %d drops %d, want %d and 0", st.Leaves, st.Drops, tc.leaves)
			}
			for _, bad := range []string{"dropped", "refused", "level=ERROR"} {
				if strings.Contains(logs.String(), bad) {
					t.Fatalf("the host logged %q:\n%s", bad, logs.String())
				}
			}
		})
	}
}
