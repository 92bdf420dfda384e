package host

import (
	"log/slog"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
)

// TestJoinPointRefresh: a joiner gets a new join point, rather than one
// whose catch-up would take longer than twice the last build, and keeps
// the current one otherwise: cheap to replay, still building, being sent
// to a joiner not in yet, or prepared in advance and sent to nobody yet.
// The point's age on the clock plays no part: every point here was cut
// an instant before.
func TestJoinPointRefresh(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ticks    int
		tickCost time.Duration
		build    time.Duration
		built    bool
		sending  int  // joiners admitted to it and not in yet
		sent     bool // admitted to it ever
		replaced bool
	}{
		{"replay longer than two builds", 300, 10 * time.Millisecond, time.Second, true, 0, true, true},
		{"replay shorter than two builds", 300, 5 * time.Millisecond, 2 * time.Second, true, 0, true, false},
		{"still building", 300, 10 * time.Millisecond, time.Second, false, 1, true, false},
		{"being sent to a joiner", 300, 10 * time.Millisecond, time.Second, true, 1, true, false},
		{"prepared, sent to nobody yet", 300, 10 * time.Millisecond, time.Second, true, 0, false, false},
		{"no build measured yet", 300, 10 * time.Millisecond, 0, true, 0, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth := lockstep.NewAuthority(locksteptest.New(2, 100))
			st := &stats{}
			st.s.LastBuild = tc.build
			j := &joinPoints{stats: st, log: slog.New(slog.DiscardHandler), maxAge: time.Hour}
			if err := j.cut(auth); err != nil {
				t.Fatal(err)
			}
			cur := j.current
			cur.built.Store(tc.built)
			cur.sending, cur.sent = tc.sending, tc.sent
			for range tc.ticks {
				auth.Advance(true)
			}
			j.tickCost = tc.tickCost
			j.refresh(auth)
			if replaced := j.current != cur; replaced != tc.replaced {
				t.Fatalf("replaced %v, want %v", replaced, tc.replaced)
			}
			if tc.replaced {
				p, err := j.ensure(auth)
				if err != nil {
					t.Fatal(err)
				}
				if p.tick != auth.Sim().Tick() {
					t.Fatalf("the new point is at tick %d, the sim at %d", p.tick, auth.Sim().Tick())
				}
			}
		})
	}
}

// TestJoinPointInUse: a point handed to joiners stays in use until every
// one of them is released (WorldReady or gone).
func TestJoinPointInUse(t *testing.T) {
	auth := lockstep.NewAuthority(locksteptest.New(2, 100))
	st := &stats{}
	st.s.LastBuild = time.Millisecond
	j := &joinPoints{stats: st, log: slog.New(slog.DiscardHandler), maxAge: time.Hour, tickCost: time.Millisecond}
	p, err := j.ensure(auth)
	if err != nil {
		t.Fatal(err)
	}
	p.built.Store(true)
	j.hand(p)
	j.hand(p)
	for range 100 {
		auth.Advance(true)
	}
	j.release(p)
	if j.refresh(auth); j.current != p {
		t.Fatal("replaced while one joiner was still being sent it")
	}
	j.release(p)
	j.release(nil) // a member that was never handed a point
	if j.refresh(auth); j.current != nil {
		t.Fatal("kept once its joiners were in, though replaying costs more than two builds")
	}
}

func TestTickCostAverage(t *testing.T) {
	j := &joinPoints{}
	j.stepped(8 * time.Millisecond)
	if j.tickCost != 8*time.Millisecond {
		t.Fatalf("first tick: %v", j.tickCost)
	}
	for range 200 {
		j.stepped(time.Millisecond)
	}
	if j.tickCost > 2*time.Millisecond {
		t.Fatalf("after 200 ticks of 1 ms: %v", j.tickCost)
	}
}

// TestJoinPointThinsDropped: a point's thin map blobs are kept while any
// joiner admitted to it is not in yet, and let go when the last of them
// is in or gone.
func TestJoinPointThinsDropped(t *testing.T) {
	j := &joinPoints{}
	p := &joinPoint{thins: map[snapshot.Codec]*thinPoint{snapshot.Zstd: {}}}
	j.hand(p)
	j.hand(p)
	j.release(p)
	if p.thins == nil {
		t.Fatal("thin blobs dropped while a joiner of the point is not in yet")
	}
	j.release(p)
	if p.thins != nil {
		t.Fatal("thin blobs kept after the point's last joiner is in")
	}
}

// TestJoinPointExpire: a join point goes once it has been ready for
// longer than maxAge, counted from its build, never while a background
// build still compresses it or while it is sent to a joiner not in yet.
func TestJoinPointExpire(t *testing.T) {
	long := -time.Hour // long before maxAge (a minute) ago
	for _, tc := range []struct {
		name      string
		cutAgo    time.Duration
		builtAgo  time.Duration // 0: not built
		preparing bool          // a background build runs
		sending   int
		dropped   bool
	}{
		{"built long ago", long, long, false, 0, true},
		{"cut long ago, built just now", long, -time.Second, false, 0, false},
		{"cut long ago, still building in the background", long, 0, true, 0, false},
		{"cut long ago, being sent to a joiner", long, long, false, 1, false},
		{"cut long ago, never built and no build running", long, 0, false, 0, true},
		{"cut just now", -time.Second, 0, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			auth := lockstep.NewAuthority(locksteptest.New(2, 100))
			j := &joinPoints{stats: &stats{}, log: slog.New(slog.DiscardHandler), maxAge: time.Minute}
			if err := j.cut(auth); err != nil {
				t.Fatal(err)
			}
			cur := j.current
			cur.cutAt = time.Now().Add(tc.cutAgo)
			if tc.builtAgo != 0 {
				cur.built.Store(true)
				cur.builtAt.Store(time.Now().Add(tc.builtAgo).UnixNano())
			}
			j.preparing.Store(tc.preparing)
			cur.sending = tc.sending
			j.expire(auth)
			if dropped := j.current == nil; dropped != tc.dropped {
				t.Fatalf("dropped %v, want %v", dropped, tc.dropped)
			}
		})
	}
}
