package replay

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/saves"
)

// loadCountersFrom loads a start save of a Counters world from its bytes,
// as the browser's viewer does.
func loadCountersFrom(start *io.SectionReader) (lockstep.Sim, error) {
	f, err := saves.ReadFrom("start", start, start.Size())
	if err != nil {
		return nil, err
	}
	return saves.LoadFrom(f, start, locksteptest.Load, nil, 64<<20)
}

// TestPlayerFromBytes replays a recording held in memory a few ticks at a
// time, as the browser's viewer does: it reaches the same end as Verify,
// every checkpoint checked, and a tampered recording stops at the same
// tick Verify names.
func TestPlayerFromBytes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(c *lockstep.Command)
	}{
		{"as recorded", nil},
		{"tampered", func(c *lockstep.Command) {
			if c.Tick == 203 && c.Seq == 0 {
				c.Payload = []byte{c.Payload[0] + 1}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, cps := record(t, recording{maps: 3, ticks: 600, framesEvery: 97, checkEvery: 60, tamper: tc.tamper})
			want, err := Verify(path, loadCounters, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewPlayer("session", bytes.NewReader(b), int64(len(b)), loadCountersFrom)
			if err != nil {
				t.Fatal(err)
			}
			steps, last := 0, p.Sim().Tick()
			p.OnStep(func(s lockstep.Sim) { steps++; last = s.Tick() })
			for calls := 0; !p.Done(); calls++ {
				if calls > 1000 {
					t.Fatal("the player does not end")
				}
				batch := 7 + 90*(calls%2) // ticks a call: checkpoints fall inside batches too
				n, err := p.Step(batch)
				if err != nil {
					t.Fatal(err)
				}
				if n > batch {
					t.Fatalf("Step(%d) ran %d ticks", batch, n)
				}
			}
			got := p.Result()
			if got.OK() != want.OK() || got.FailedTick != want.FailedTick || got.Checked != want.Checked || got.Ticks != want.Ticks {
				t.Fatalf("player: ok %v failed at %d, %d checked, %d ticks; Verify: ok %v failed at %d, %d checked, %d ticks",
					got.OK(), got.FailedTick, got.Checked, got.Ticks, want.OK(), want.FailedTick, want.Checked, want.Ticks)
			}
			if uint64(steps) != got.Ticks || last != p.Sim().Tick() {
				t.Fatalf("OnStep saw %d ticks up to %d; the player ran %d to %d", steps, last, got.Ticks, p.Sim().Tick())
			}
			if tc.tamper == nil && (got.Checked != len(cps) || last != got.LastTick) {
				t.Fatalf("checked %d of %d checkpoints, reached tick %d of %d", got.Checked, len(cps), last, got.LastTick)
			}
			if tc.tamper != nil && (got.OK() || got.FailedTick != 240 || p.Sim().Tick() != 240) {
				t.Fatalf("tampered at tick 203: failed at %d (%q), stopped at %d; want the checkpoint at 240, and to stop there",
					got.FailedTick, got.Failure, p.Sim().Tick())
			}
		})
	}
}
