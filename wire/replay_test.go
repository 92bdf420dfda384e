package wire

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// replayCmds is a replay's worth of commands of two kinds, an empty
// payload among them.
func replayCmds() []lockstep.Command {
	return []lockstep.Command{
		{Tick: 700, Seq: 1, MapID: 1, Kind: 3, Player: 2, Payload: []byte{1, 2}},
		{Tick: 700, Seq: 2, MapID: -1, Kind: 0xFF00, Player: 0, Payload: []byte{2}},
		{Tick: 710, Seq: 0, MapID: 4, Kind: 3, Player: 2, Payload: []byte{3}},
		{Tick: 710, Seq: 1, MapID: 4, Kind: 1, Player: 7, Payload: nil},
		{Tick: 1 << 40, Seq: 5, MapID: 1 << 30, Kind: 3, Player: -3, Payload: []byte{4, 5, 6}},
		{Tick: 1 << 40, Seq: 6, MapID: 1, Kind: 3, Player: 2, Payload: []byte{7, 8}},
	}
}

// sameCommands reports whether a and b hold the same commands.
func sameCommands(a, b []lockstep.Command) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Tick != y.Tick || x.Seq != y.Seq || x.MapID != y.MapID || x.Kind != y.Kind || x.Player != y.Player ||
			!bytes.Equal(x.Payload, y.Payload) {
			return false
		}
	}
	return true
}

// TestReplayRoundTrip: the layout reads back as the commands and speed it
// was made of, the payloads in between grouped by kind and length, each
// group transposed.
func TestReplayRoundTrip(t *testing.T) {
	cmds := replayCmds()
	raw, err := AppendReplay(nil, cmds, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Kind 1's empty payload; kind 3's of 1 byte, of 2 (transposed), of 3;
	// kind 0xFF00's.
	if tail := []byte{3, 1, 7, 2, 8, 4, 5, 6, 2}; !bytes.HasSuffix(raw, tail) {
		t.Errorf("payloads end %x, want %x", raw[len(raw)-len(tail):], tail)
	}
	got, speed, err := DecodeReplay(raw)
	if err != nil || speed != 2 || !sameCommands(got, cmds) {
		t.Fatalf("read back %+v at speed %d (%v), want %+v", got, speed, err, cmds)
	}
	ticks := ReplayTicks(got, 1<<41, speed)
	if len(ticks) != 4 || ticks[3].Granted != 1<<41 || len(ticks[3].Commands) != 0 {
		t.Fatalf("%d ticks, the last %+v", len(ticks), ticks[len(ticks)-1])
	}
}

// TestReplayEncodeRefuses: commands out of order, or too many, are not
// laid out.
func TestReplayEncodeRefuses(t *testing.T) {
	cmds := replayCmds()
	cmds[2], cmds[3] = cmds[3], cmds[2] // seq 1 before seq 0 of tick 710
	if _, err := AppendReplay(nil, cmds, 1); err == nil {
		t.Error("seqs out of order laid out")
	}
	cmds = replayCmds()
	cmds[0], cmds[4] = cmds[4], cmds[0]
	if _, err := AppendReplay(nil, cmds, 1); err == nil {
		t.Error("ticks out of order laid out")
	}
	if _, err := AppendReplay(nil, make([]lockstep.Command, MaxReplayCommands+1), 1); err == nil {
		t.Error("more than MaxReplayCommands laid out")
	}
}

// uv is a uvarint's bytes.
func uv(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// cat joins byte slices.
func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestReplayDecodeRefuses: every rule of the layout is held.
func TestReplayDecodeRefuses(t *testing.T) {
	one := func(tick, seq []byte, length []byte, rest ...byte) []byte {
		return cat([]byte{1, 1}, tick, seq, []byte{0, 3, 0}, length, rest)
	}
	for _, c := range []struct {
		name string
		raw  []byte
	}{
		{"empty", nil},
		{"no count", []byte{1}},
		{"count over the limit", cat([]byte{1}, uv(MaxReplayCommands+1), make([]byte, 6*(MaxReplayCommands+1)))},
		{"count over the bytes", cat([]byte{1, 2}, make([]byte, 11))},
		{"tick past MaxTick", one(uv(lockstep.MaxTick+1), []byte{0}, []byte{0})},
		{"second tick past MaxTick", cat([]byte{1, 2}, uv(lockstep.MaxTick), uv(1), make([]byte, 10))},
		{"seq past uint32", one(uv(5), uv(1<<32), []byte{0})},
		{"kind past uint16", cat([]byte{1, 1, 5, 0, 0}, uv(1<<16), []byte{0, 0})},
		{"map past int32", cat([]byte{1, 1, 5, 0}, binary.AppendVarint(nil, 1<<31), []byte{3, 0, 0})},
		{"payload over 64 KiB", one(uv(5), []byte{0}, uv(MaxCommandPayload+1), make([]byte, MaxCommandPayload+1)...)},
		{"payloads short", one(uv(5), []byte{0}, []byte{2}, 9)},
		{"bytes after the payloads", one(uv(5), []byte{0}, []byte{1}, 9, 9)},
		{"broken varint", cat([]byte{1, 1}, bytes.Repeat([]byte{0x80}, 7))},
	} {
		cmds, _, err := DecodeReplay(c.raw)
		if err == nil {
			t.Errorf("%s: read as %+v", c.name, cmds)
			continue
		}
		t.Logf("%s: %v", c.name, err)
	}
	if cmds, _, err := DecodeReplay(one(uv(5), []byte{0}, []byte{1}, 9)); err != nil || len(cmds) != 1 {
		t.Fatalf("the valid base case refused: %v", err)
	}
}

// FuzzReplayDecode: whatever the bytes, DecodeReplay returns an error or
// commands that lay out again to the same bytes, and never panics.
func FuzzReplayDecode(f *testing.F) {
	raw, err := AppendReplay(nil, replayCmds(), 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 2, 0xbc, 5, 0x0a, 1, 0, 2, 2, 3, 3, 4, 4, 2, 1, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		cmds, speed, err := DecodeReplay(b)
		if err != nil {
			return
		}
		again, err := AppendReplay(nil, cmds, speed)
		if err != nil {
			t.Fatalf("read %d commands that do not lay out again: %v", len(cmds), err)
		}
		back, _, err := DecodeReplay(again)
		if err != nil || !sameCommands(back, cmds) {
			t.Fatalf("laid out again, they read back differently: %v", err)
		}
	})
}

// TestReplaySize: the size counted without a layout is the layout's, on
// fields of every width, and it refuses what AppendReplay refuses.
func TestReplaySize(t *testing.T) {
	cmds := replayCmds()
	cmds = append(cmds, lockstep.Command{Tick: 1<<47 + 3, Seq: 1 << 31, MapID: -1 << 31, Kind: 0xFFFF, Player: 1<<31 - 1,
		Payload: make([]byte, MaxCommandPayload)})
	for n := range len(cmds) + 1 {
		raw, err := AppendReplay(nil, cmds[:n], 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ReplaySize(cmds[:n]); err != nil || got != len(raw) {
			t.Errorf("%d commands: size %d (%v), the layout takes %d", n, got, err, len(raw))
		}
	}
	cmds[2], cmds[3] = cmds[3], cmds[2]
	if _, err := ReplaySize(cmds); err == nil {
		t.Error("seqs out of order counted")
	}
	if _, err := ReplaySize(make([]lockstep.Command, MaxReplayCommands+1)); err == nil {
		t.Error("more than MaxReplayCommands counted")
	}
}
