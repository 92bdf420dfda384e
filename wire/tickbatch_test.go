package wire

import (
	"bytes"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// acceptAll is a simulation that takes any command, so a test can queue
// commands of any size.
type acceptAll struct{ *locksteptest.Counters }

func (acceptAll) Apply(lockstep.Command) error { return nil }

// TestTickFramesFitTheFrameLimit holds section 4 id 22 of the spec: however
// many commands are pending, every Server_Tick the authority's results
// encode to is valid and fits a client's DefaultMaxFrame; a tick's
// commands split over several packets keep their order, and only the last
// one grants the next tick.
func TestTickFramesFitTheFrameLimit(t *testing.T) {
	big := bytes.Repeat([]byte{7}, MaxCommandPayload)
	tests := []struct {
		name    string
		n       int
		payload []byte
	}{
		{"many small commands", MaxTickCommands + 900, []byte{1}},
		{"large commands", 40, big},
	}
	for _, tc := range tests {
		a := lockstep.NewAuthority(acceptAll{locksteptest.New(1, 4)})
		for range tc.n {
			a.Submit(lockstep.Command{MapID: 0, Kind: 1, Payload: tc.payload})
		}
		var got []lockstep.Command
		packets := 0
		for {
			res := a.Advance(true)
			packets++
			frame, err := Marshal(nil, &ServerTick{Tick: res.Tick, Commands: res.Accepted, Granted: res.Granted, Speed: 1})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if len(frame)-4 > DefaultMaxFrame {
				t.Fatalf("%s: tick frame of %d bytes (%d commands) over the %d-byte frame limit", tc.name, len(frame)-4, len(res.Accepted), DefaultMaxFrame)
			}
			if _, err := Decode(IDServerTick, frame[5:]); err != nil {
				t.Fatalf("%s: %d commands: %v", tc.name, len(res.Accepted), err)
			}
			got = append(got, res.Accepted...)
			if res.Stepped {
				if a.Pending() != 0 || res.Granted != 1 {
					t.Fatalf("%s: stepped to grant %d with %d commands pending", tc.name, res.Granted, a.Pending())
				}
				break
			}
			if res.Granted != 0 {
				t.Fatalf("%s: a partial packet granted %d", tc.name, res.Granted)
			}
		}
		if len(got) != tc.n || packets < 2 {
			t.Fatalf("%s: %d of %d commands in %d packets", tc.name, len(got), tc.n, packets)
		}
		for i, c := range got {
			if c.Tick != 0 || c.Seq != uint32(i) {
				t.Fatalf("%s: command %d stamped (%d, %d)", tc.name, i, c.Tick, c.Seq)
			}
		}
	}
}
