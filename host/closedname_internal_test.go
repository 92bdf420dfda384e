package host

import (
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/wire"
)

// TestClosedConnectionFreesName: a name held by a connection the host has
// closed, whose leave its goroutine has not handed over yet, is free to a
// new join at once (the player told to go who joins again straight away);
// a name held by a connection still open is not. CI once refused such a
// join as UsernameAlreadyOnline when the session took the join before the
// leave.
func TestClosedConnectionFreesName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		close  func(c *conn)
		want   error
		leaves uint64 // Stats.Leaves after the second join
		drops  uint64
	}{
		{name: "open", close: func(*conn) {}, want: roster.ErrNameTaken},
		{name: "kicked", close: func(c *conn) { c.close(wire.ReasonBadPacket, "bad upload") }, drops: 1},
		{name: "left", close: func(c *conn) { c.left.Store(true); c.closeWith(nil, "") }, leaves: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{}.Defaults()
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			s := newSession(cfg, locksteptest.New(2, 64))
			bans, err := loadBans("")
			if err != nil {
				t.Fatal(err)
			}
			s.admin.bans = bans
			s.lastID = new(atomic.Int32)
			first := pipeConn(t)
			rep, ok := s.admit(joinReq{name: "Sam", passwordOK: true, conn: first})
			if !ok || rep.err != nil {
				t.Fatalf("the first join: %v (answered %v)", rep.err, ok)
			}
			tc.close(first)
			rep, ok = s.admit(joinReq{name: "sam", passwordOK: true, conn: pipeConn(t)})
			if !ok {
				t.Fatal("the second join was not answered")
			}
			if !errors.Is(rep.err, tc.want) {
				t.Fatalf("the second join: %v, want %v", rep.err, tc.want)
			}
			if got := s.roster.Len(); got != 1 {
				t.Fatalf("%d players on the roster, want 1", got)
			}
			st := s.stats.snapshot()
			if st.Leaves != tc.leaves || st.Drops != tc.drops {
				t.Fatalf("leaves %d, drops %d; want %d and %d", st.Leaves, st.Drops, tc.leaves, tc.drops)
			}
			// The leave its goroutine hands over later changes nothing.
			s.leave(leaveReq{id: rep.id - 1, conn: first, why: first.why})
			if got := s.roster.Len(); got != 1 {
				t.Fatalf("after the late leave: %d players, want 1", got)
			}
		})
	}
}
