package host

import (
	"log/slog"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// TestJoinPointRefresh: a joiner gets a new join point, rather than one
// whose catch-up would take longer than twice the last build, and keeps
// the current one otherwise (young, still building, or cheap to replay).
func TestJoinPointRefresh(t *testing.T) {
	for _, tc := range []struct {
		name     string
		age      time.Duration
		ticks    int
		tickCost time.Duration
		build    time.Duration
		built    bool
		replaced bool
	}{
		{"replay longer than two builds", 5 * time.Second, 300, 10 * time.Millisecond, time.Second, true, true},
		{"replay shorter than two builds", 5 * time.Second, 300, 5 * time.Millisecond, 2 * time.Second, true, false},
		{"younger than a second", 500 * time.Millisecond, 300, 10 * time.Millisecond, time.Second, true, false},
		{"still building", 5 * time.Second, 300, 10 * time.Millisecond, time.Second, false, false},
		{"no build measured yet", 5 * time.Second, 300, 10 * time.Millisecond, 0, true, false},
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
			cur.cutAt = time.Now().Add(-tc.age)
			cur.built.Store(tc.built)
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
