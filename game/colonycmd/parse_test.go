package colonycmd

import (
	"testing"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		line    string
		kind    uint16
		mapID   int32
		wantErr bool
		none    bool
	}{
		{line: "speed 2", kind: lockstep.KindSetSpeed, mapID: lockstep.WorldScope},
		{line: "speed 0", kind: lockstep.KindSetSpeed, mapID: lockstep.WorldScope},
		{line: "speed 4", wantErr: true},
		{line: "speed fast", wantErr: true},
		{line: "spawn Steel 1 10 12", kind: colony.CmdSpawnThing, mapID: 1},
		{line: "spawn Steel 1 10 12 25", kind: colony.CmdSpawnThing, mapID: 1},
		{line: "spawn Steel 1 10", wantErr: true},
		{line: "move 0 3 40 41", kind: colony.CmdMovePawn, mapID: 0},
		{line: "move 0 x 40 41", wantErr: true},
		{line: "fly 1 2", wantErr: true},
		{line: "help", none: true},
		{line: "pawns 0", none: true},
		{line: "   ", none: true},
	} {
		c, err := Parse(tc.line)
		switch {
		case tc.wantErr:
			if err == nil {
				t.Errorf("%q: no error", tc.line)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.line, err)
		case tc.none:
			if c != nil {
				t.Errorf("%q: a command %+v, want none", tc.line, c)
			}
		case c == nil || c.Kind != tc.kind || c.MapID != tc.mapID:
			t.Errorf("%q: %+v, want kind %d map %d", tc.line, c, tc.kind, tc.mapID)
		}
	}
	// A parsed spawn is the same command the colony builder makes.
	c, _ := Parse("spawn Steel 1 10 12 25")
	want := colony.SpawnThing(1, "Steel", 10, 12, 25)
	if string(c.Payload) != string(want.Payload) {
		t.Fatal("parsed spawn differs from colony.SpawnThing")
	}
}
