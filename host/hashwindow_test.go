package host

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// TestRememberKeepsTheHashWindow feeds remember ticks with and without
// commands and checks after each that the live window is exactly what
// dropping the commands before now-HashWindow from everything remembered
// gives, and that the skipped part never exceeds half the slice.
func TestRememberKeepsTheHashWindow(t *testing.T) {
	const window = 16
	s := &desyncTracker{window: window}
	rng := rand.New(rand.NewPCG(1, 2))
	var all []lockstep.Command
	seq := uint32(0)
	for now := uint64(1); now <= 2000; now++ {
		n := rng.IntN(4)
		if rng.IntN(10) == 0 {
			n = 40 // a burst
		}
		var cmds []lockstep.Command
		for range n {
			seq++
			cmds = append(cmds, lockstep.Command{Tick: now, Seq: seq, Payload: []byte{byte(seq)}})
		}
		if len(cmds) == 0 {
			continue // publish remembers only ticks with commands
		}
		all = append(all, cmds...)
		s.remember(cmds, now)
		want := all
		if want[0].Tick+window < now {
			want = all[firstAt(all, now-window):]
		}
		got := s.liveRecent()
		same := func(a, b lockstep.Command) bool { return a.Tick == b.Tick && a.Seq == b.Seq }
		if !slices.EqualFunc(got, want, same) {
			t.Fatalf("tick %d: window has %d commands from tick %d, want %d from tick %d",
				now, len(got), got[0].Tick, len(want), want[0].Tick)
		}
		if s.recentHead > len(s.recent)/2 {
			t.Fatalf("tick %d: head %d past half of %d", now, s.recentHead, len(s.recent))
		}
		for i, c := range s.recent[:s.recentHead] {
			if c.Tick != 0 || c.Seq != 0 || c.Payload != nil {
				t.Fatalf("tick %d: skipped command %d still held: %+v", now, i, c)
			}
		}
	}
}
