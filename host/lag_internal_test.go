package host

import (
	"testing"
	"time"
)

// TestLagRule holds the rule of whose lag counts (lagRule.lagOf) on a
// fake clock: a spectator, a joiner catching up after its WorldReady, a
// player not heard from lately and one whose connection is closing hold
// time for nobody; anyone else does once past MaxLag.
func TestLagRule(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(10 * time.Minute)
	const tick = 1000
	rule := lagRule{maxLag: 120, quiet: 3 * time.Second, catchUp: 2 * time.Minute}
	type mem struct {
		spectator, caughtUp, closing bool
		acked                        uint64
		heard, readyAt               time.Duration // before now
	}
	for _, tc := range []struct {
		name       string
		m          mem
		want       lagWhy
		behind     uint64
		caughtUpAt bool // m.caughtUp after
	}{
		{"a spectator", mem{spectator: true, acked: 500}, lagNotPlaying, 500, false},
		{"a player that keeps up", mem{caughtUp: true, acked: 990}, lagCounts, 10, true},
		{"a player that fell behind", mem{caughtUp: true, acked: 876}, lagCounts, 124, true},
		{"a player ahead of the host", mem{caughtUp: true, acked: 1001}, lagCounts, 0, true},
		{"a joiner just ready, 124 ticks behind", mem{acked: 876, readyAt: time.Second}, lagCatchingUp, 124, false},
		{"a joiner just ready within MaxLag has caught up", mem{acked: 880, readyAt: time.Second}, lagCounts, 120, true},
		{"a joiner still behind after CatchUp", mem{acked: 876, readyAt: 2 * time.Minute}, lagCounts, 124, true},
		{"a player heard from 2 s ago", mem{caughtUp: true, acked: 876, heard: 2 * time.Second}, lagCounts, 124, true},
		{"a player silent for 4 s", mem{caughtUp: true, acked: 876, heard: 4 * time.Second}, lagQuiet, 124, true},
		{"a joiner silent while it catches up", mem{acked: 876, heard: 4 * time.Second, readyAt: time.Second}, lagQuiet, 124, false},
		{"a player whose connection closed", mem{caughtUp: true, acked: 876, closing: true}, lagClosing, 124, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &member{playing: !tc.m.spectator, spectator: tc.m.spectator, caughtUp: tc.m.caughtUp,
				readyAt: now.Add(-tc.m.readyAt), conn: &conn{closing: make(chan struct{})}}
			m.acked.Store(tc.m.acked)
			m.heard.Store(now.Add(-tc.m.heard).UnixNano())
			if tc.m.closing {
				close(m.conn.closing)
			}
			behind, why := rule.lagOf(m, tick, now)
			if behind != tc.behind || why != tc.want || m.caughtUp != tc.caughtUpAt {
				t.Errorf("lagOf: %d behind, %s, caught up %v; want %d, %s, %v", behind, why, m.caughtUp, tc.behind, tc.want, tc.caughtUpAt)
			}
		})
	}
}

// TestLagRuleCaughtUpOnce: a joiner counts from the first time it is
// within MaxLag of the host; falling behind later does not make it a
// joiner catching up again.
func TestLagRuleCaughtUpOnce(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rule := lagRule{maxLag: 120, quiet: 3 * time.Second, catchUp: 2 * time.Minute}
	m := &member{playing: true, readyAt: now, conn: &conn{closing: make(chan struct{})}}
	m.heard.Store(now.UnixNano())
	m.acked.Store(100)
	for _, step := range []struct {
		tick uint64
		want lagWhy
	}{
		{400, lagCatchingUp}, // 300 behind, just ready
		{300, lagCatchingUp}, // (a tick the host never goes back to; the rule does not care)
		{200, lagCounts},     // 100 behind: caught up
		{400, lagCounts},     // 300 behind again: a laggard now, not a joiner
	} {
		if _, why := rule.lagOf(m, step.tick, now); why != step.want {
			t.Fatalf("at host tick %d: %s, want %s", step.tick, why, step.want)
		}
	}
}

// TestQuietAfter: a silent player stops counting before the time its
// maxLag ticks take (so, by default, before the host would hold time
// for it), but never sooner than one and a half keepalives, when a live
// client that advances nothing is still heard by its echoes.
func TestQuietAfter(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepalive time.Duration
		maxLag    uint64
		tickRate  int
		want      time.Duration
	}{
		{"the defaults: 120 ticks at 60/s take 2 s", time.Second, 120, 60, 1500 * time.Millisecond},
		{"a large max lag: three keepalives at most", time.Second, 600, 60, 3 * time.Second},
		{"a small max lag: one and a half keepalives at least", time.Second, 20, 100, 1500 * time.Millisecond},
		{"between the bounds", time.Second, 150, 60, 1875 * time.Millisecond},
		{"a faster keepalive", 200 * time.Millisecond, 120, 60, 600 * time.Millisecond},
		{"no tick rate: three keepalives", time.Second, 120, 0, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := quietAfter(tc.keepalive, tc.maxLag, tc.tickRate); got != tc.want {
				t.Errorf("quietAfter(%v, %d, %d) = %v, want %v", tc.keepalive, tc.maxLag, tc.tickRate, got, tc.want)
			}
			if held := time.Duration(tc.maxLag) * time.Second / time.Duration(max(tc.tickRate, 1)); tc.tickRate > 0 &&
				held*3/4 >= tc.keepalive*3/2 && quietAfter(tc.keepalive, tc.maxLag, tc.tickRate) >= held {
				t.Errorf("a silent player counts for the whole %v its max lag takes", held)
			}
		})
	}
}
