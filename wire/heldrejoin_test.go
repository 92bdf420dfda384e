package wire

import (
	"bytes"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// heldExample is the worked held-world rejoin of the spec's section 6.6,
// step by step: the packets its hex blocks quote. Steps H3 to H5 are the
// ticks H2's replay gives the client.
func heldExample(t *testing.T) []Packet {
	old, next := bytes.Repeat([]byte{0xc4}, TokenSize), bytes.Repeat([]byte{0xc5}, TokenSize)
	ticks := []Packet{
		&ServerTick{Tick: 700, Commands: []lockstep.Command{{Tick: 700, Seq: 1, MapID: 1, Kind: 3, Player: 2, Payload: []byte{0x01, 0x02}}}, Granted: 700, Speed: 1},
		&ServerTick{Tick: 710, Commands: []lockstep.Command{{Tick: 710, Seq: 0, MapID: 1, Kind: 3, Player: 2, Payload: []byte{0x03}}}, Granted: 710, Speed: 1},
		&ServerTick{Tick: 720, Granted: 720, Speed: 1},
	}
	raw, err := AppendReplay(nil, append(ticks[0].(*ServerTick).Commands, ticks[1].(*ServerTick).Commands...), 1)
	if err != nil {
		t.Fatal(err)
	}
	replay, err := snapshot.Compress(raw, snapshot.Compression{Codec: snapshot.Gzip, Level: snapshot.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	return []Packet{
		&ClientUsername{Name: "ann", Token: old, Held: &HeldWorld{Tick: 700, Applied: 1,
			Checks: []HeldCheck{{Tick: 600, World: 0x1111111111111111}, {Tick: 660, World: 0x5555555555555555}}}},
		&ServerSession{Token: next, GraceMs: 300000, PlayerID: 1, HashEvery: 60, Rejoin: RejoinHeld, Granted: 720, Replay: replay.Data},
		ticks[0], ticks[1], ticks[2],
		&ClientWorldReady{Tick: 720, WorldHash: 0x6666666666666666},
		&ServerSession{Token: next, GraceMs: 300000, PlayerID: 1, HashEvery: 60, Rejoin: RejoinWindow, Why: RejoinWindow.Sentence()},
	}
}

// heldStep matches a step of the spec's worked held-world rejoin and its
// hex block.
var heldStep = regexp.MustCompile("(?m)^Held step H(\\d+), [^\\n]*\\n+```hex\\n([0-9a-f \\n]+)```")

// TestHeldRejoinExample holds the spec's worked held-world rejoin to the
// code: every step's bytes are its packet encoded, and decode to it.
func TestHeldRejoinExample(t *testing.T) {
	steps := heldStep.FindAllStringSubmatch(readSpec(t), -1)
	pkts := heldExample(t)
	if len(steps) != len(pkts) {
		t.Fatalf("the spec has %d held-rejoin steps, the test %d", len(steps), len(pkts))
	}
	for i, m := range steps {
		want, err := hex.DecodeString(strings.Join(strings.Fields(m[2]), ""))
		if err != nil {
			t.Fatalf("step H%s: %v", m[1], err)
		}
		got := MustMarshal(pkts[i])
		if !bytes.Equal(got, want) {
			t.Errorf("step H%s: %s encodes as\n%s\nthe spec says\n%s", m[1], pkts[i].ID(), hexLines(got), hexLines(want))
			continue
		}
		id, body, err := NewFrameReader(bytes.NewReader(want), 0).Next()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode(id, body)
		if err != nil || !bytes.Equal(MustMarshal(dec), got) {
			t.Errorf("step H%s does not decode to its packet: %v", m[1], err)
		}
	}
}

// heldReplay matches the spec's hex block of the worked example's replay,
// inflated.
var heldReplay = regexp.MustCompile("(?m)^The replay of step H2, inflated:\\n+```hex\\n([0-9a-f \\n]+)```")

// TestHeldRejoinReplayInflates: the example's replay, inflated as a
// client does, is the layout the spec quotes, and reads back as the ticks
// of steps H3 to H5.
func TestHeldRejoinReplayInflates(t *testing.T) {
	pkts := heldExample(t)
	ss := pkts[1].(*ServerSession)
	raw, err := snapshot.Inflate(snapshot.Codec(ss.ReplayCodec), ss.Replay, MaxReplayRaw)
	if err != nil {
		t.Fatal(err)
	}
	m := heldReplay.FindStringSubmatch(readSpec(t))
	if m == nil {
		t.Fatal("the spec quotes no inflated replay")
	}
	want, err := hex.DecodeString(strings.Join(strings.Fields(m[1]), ""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, want) {
		t.Fatalf("the replay inflates to\n%s\nthe spec says\n%s", hexLines(raw), hexLines(want))
	}
	cmds, speed, err := DecodeReplay(raw)
	if err != nil {
		t.Fatal(err)
	}
	ticks := ReplayTicks(cmds, ss.Granted, speed)
	if len(ticks) != 3 {
		t.Fatalf("the replay gives %d ticks, want 3", len(ticks))
	}
	for i, tk := range ticks {
		if got, want := MustMarshal(tk), MustMarshal(pkts[2+i]); !bytes.Equal(got, want) {
			t.Errorf("tick %d of the replay is\n%s\nnot step H%d's\n%s", i, hexLines(got), 3+i, hexLines(want))
		}
	}
}

// TestRejoinAheadSentence: a position past the host's is as often the
// client's own wrong tick as a host back from an older save, so the
// sentence a player reads names both and does not blame a restart alone.
func TestRejoinAheadSentence(t *testing.T) {
	s := RejoinAhead.Sentence()
	if !strings.Contains(s, "your client's tick is wrong") || !strings.Contains(s, "older save") || strings.Contains(s, "it restarted") {
		t.Errorf("the ahead sentence %q should name the client's wrong tick and an older save as causes", s)
	}
}
