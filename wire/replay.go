package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/lockhost/lockhost/lockstep"
)

// A held-world rejoin's replay (Server_Session's Replay, docs/protocol.md
// section 6.6), before compression, is the commands the player missed
// laid out column by column: a speed byte, the count, then each field of
// every command as its own column of varints (ticks as differences, seqs
// as the distance from the next one expected, map IDs, kinds, players,
// payload lengths), then the payloads grouped by kind. Like fields sit
// together, so the codec finds their repeats; the layout knows nothing of
// any game's payloads.

// MaxReplayCommands bounds the commands of one replay: about 44 minutes
// at 50 commands a second, more than a rejoin window holds at that pace.
const MaxReplayCommands = 1 << 17

// minReplayCommandBytes is the fewest bytes a command takes in the
// columns: one varint in each of six.
const minReplayCommandBytes = 6

// errReplayOrder is the encoder's refusal of commands out of (tick, seq)
// order.
var errReplayOrder = errors.New("replay: commands out of (tick, seq) order")

// AppendReplay appends the replay layout of cmds and speed to dst. The
// commands must be in the order the host applied them: ticks ascending,
// seqs ascending within a tick. At most MaxReplayCommands commands, each
// payload at most MaxCommandPayload bytes.
func AppendReplay(dst []byte, cmds []lockstep.Command, speed uint8) ([]byte, error) {
	if len(cmds) > MaxReplayCommands {
		return dst, fmt.Errorf("replay: %d commands, over %d", len(cmds), MaxReplayCommands)
	}
	dst = append(dst, speed)
	dst = binary.AppendUvarint(dst, uint64(len(cmds)))
	var err error
	if dst, err = appendPositions(dst, cmds); err != nil {
		return dst, err
	}
	for _, c := range cmds {
		dst = binary.AppendVarint(dst, int64(c.MapID))
	}
	for _, c := range cmds {
		dst = binary.AppendUvarint(dst, uint64(c.Kind))
	}
	for _, c := range cmds {
		dst = binary.AppendVarint(dst, int64(c.Player))
	}
	for _, c := range cmds {
		if len(c.Payload) > MaxCommandPayload {
			return dst, fmt.Errorf("replay: payload of %d bytes", len(c.Payload))
		}
		dst = binary.AppendUvarint(dst, uint64(len(c.Payload)))
	}
	for _, k := range replayKinds(cmds) {
		for _, c := range cmds {
			if c.Kind == k {
				dst = append(dst, c.Payload...)
			}
		}
	}
	return dst, nil
}

// appendPositions appends the tick and seq columns of cmds: each tick as
// its difference to the previous command's (the first as is), each seq
// as its distance from the one expected (0 on a new tick, else the
// previous seq + 1).
func appendPositions(dst []byte, cmds []lockstep.Command) ([]byte, error) {
	for i, c := range cmds {
		d := c.Tick
		if i > 0 {
			if c.Tick < cmds[i-1].Tick {
				return dst, errReplayOrder
			}
			d = c.Tick - cmds[i-1].Tick
		}
		dst = binary.AppendUvarint(dst, d)
	}
	for i, c := range cmds {
		want := uint64(0)
		if i > 0 && cmds[i-1].Tick == c.Tick {
			want = uint64(cmds[i-1].Seq) + 1
		}
		if uint64(c.Seq) < want {
			return dst, errReplayOrder
		}
		dst = binary.AppendUvarint(dst, uint64(c.Seq)-want)
	}
	return dst, nil
}

// replayKinds is the kinds among cmds, ascending: the order of the
// payload groups.
func replayKinds(cmds []lockstep.Command) []uint16 {
	var kinds []uint16
	for _, c := range cmds {
		if i, found := slices.BinarySearch(kinds, c.Kind); !found {
			kinds = slices.Insert(kinds, i, c.Kind)
		}
	}
	return kinds
}

// replayReader reads the replay's columns; the first error sticks.
type replayReader struct {
	b   []byte
	err error
}

// uvarint reads an unsigned varint of at most max.
func (r *replayReader) uvarint(what string, max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	switch {
	case n <= 0:
		r.err = fmt.Errorf("replay: bad or missing %s", what)
		return 0
	case v > max:
		r.err = fmt.Errorf("replay: %s %d, over %d", what, v, max)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varint reads a zig-zag varint within int32.
func (r *replayReader) varint(what string) int32 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	switch {
	case n <= 0:
		r.err = fmt.Errorf("replay: bad or missing %s", what)
		return 0
	case v < math.MinInt32 || v > math.MaxInt32:
		r.err = fmt.Errorf("replay: %s %d, out of int32", what, v)
		return 0
	}
	r.b = r.b[n:]
	return int32(v)
}

// DecodeReplay reads a replay's layout (AppendReplay): the commands in
// the order the host applied them, and the speed. Every count and length
// is checked against its limit, and against the bytes left, before
// anything is allocated for it; the payloads are slices of raw.
func DecodeReplay(raw []byte) ([]lockstep.Command, uint8, error) {
	if len(raw) == 0 {
		return nil, 0, errors.New("replay: empty")
	}
	speed := raw[0]
	r := &replayReader{b: raw[1:]}
	n := r.uvarint("command count", MaxReplayCommands)
	if r.err == nil && n > uint64(len(r.b)/minReplayCommandBytes) {
		return nil, 0, fmt.Errorf("replay: %d commands in %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return nil, 0, r.err
	}
	cmds := make([]lockstep.Command, n)
	readPositions(r, cmds)
	for i := range cmds {
		cmds[i].MapID = r.varint("map ID")
	}
	for i := range cmds {
		cmds[i].Kind = uint16(r.uvarint("kind", math.MaxUint16))
	}
	for i := range cmds {
		cmds[i].Player = r.varint("player")
	}
	if err := readPayloads(r, cmds); err != nil {
		return nil, 0, err
	}
	return cmds, speed, nil
}

// readPositions reads the tick and seq columns into cmds: no tick past
// lockstep.MaxTick, no seq past the uint32 range.
func readPositions(r *replayReader, cmds []lockstep.Command) {
	tick := uint64(0)
	for i := range cmds {
		d := r.uvarint("tick", lockstep.MaxTick-tick)
		tick += d
		cmds[i].Tick = tick
	}
	for i := range cmds {
		want := uint64(0)
		if i > 0 && cmds[i-1].Tick == cmds[i].Tick {
			want = uint64(cmds[i-1].Seq) + 1
		}
		if want > math.MaxUint32 {
			r.err = errors.New("replay: seq past the uint32 range")
			return
		}
		cmds[i].Seq = uint32(want + r.uvarint("seq", math.MaxUint32-want))
	}
}

// readPayloads reads the length column, then hands each command its
// payload from the groups that follow, kind by kind ascending; the groups
// must fill the rest of the replay exactly.
func readPayloads(r *replayReader, cmds []lockstep.Command) error {
	lens := make([]int, len(cmds))
	perKind := map[uint16]int{}
	total := 0
	for i := range cmds {
		lens[i] = int(r.uvarint("payload length", MaxCommandPayload))
		total += lens[i]
		if r.err == nil && total > len(r.b) {
			return fmt.Errorf("replay: payloads of %d bytes or more in %d", total, len(r.b))
		}
		perKind[cmds[i].Kind] += lens[i]
	}
	if r.err != nil {
		return r.err
	}
	if total != len(r.b) {
		return fmt.Errorf("replay: %d bytes after %d of payloads", len(r.b)-total, total)
	}
	at := make(map[uint16]int, len(perKind))
	off := 0
	for _, k := range slices.Sorted(maps.Keys(perKind)) {
		at[k], off = off, off+perKind[k]
	}
	for i := range cmds {
		o := at[cmds[i].Kind]
		cmds[i].Payload = r.b[o : o+lens[i] : o+lens[i]]
		at[cmds[i].Kind] = o + lens[i]
	}
	return nil
}

// ReplayTicks is the replayed commands as the Server_Tick packets a
// client applies: one per tick that has commands, split as the host splits
// a live tick (MaxTickCommands, lockstep.MaxBatchBytes of payload), each
// granting its own tick, then a pure grant of granted.
func ReplayTicks(cmds []lockstep.Command, granted uint64, speed uint8) []*ServerTick {
	var ticks []*ServerTick
	for len(cmds) > 0 {
		t := cmds[0].Tick
		n, size := 0, 0
		for n < len(cmds) && cmds[n].Tick == t && n < MaxTickCommands &&
			(n == 0 || size+len(cmds[n].Payload) <= lockstep.MaxBatchBytes) {
			size += len(cmds[n].Payload)
			n++
		}
		ticks = append(ticks, &ServerTick{Tick: t, Commands: cmds[:n:n], Granted: t, Speed: speed})
		cmds = cmds[n:]
	}
	return append(ticks, &ServerTick{Tick: granted, Granted: granted, Speed: speed})
}
