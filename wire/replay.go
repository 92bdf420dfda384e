package wire

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
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
	return appendPayloads(dst, cmds), nil
}

// ReplaySize is the length of the replay layout AppendReplay makes of
// cmds, counted without laying it out or allocating: a host checks a
// replay against its limits with it before building one. It is an error
// for the commands AppendReplay refuses.
func ReplaySize(cmds []lockstep.Command) (int, error) {
	if len(cmds) > MaxReplayCommands {
		return 0, fmt.Errorf("replay: %d commands, over %d", len(cmds), MaxReplayCommands)
	}
	n := 1 + uvarintLen(uint64(len(cmds)))
	for i, c := range cmds {
		d, want := c.Tick, uint64(0)
		if i > 0 {
			p := cmds[i-1]
			if c.Tick < p.Tick {
				return 0, errReplayOrder
			}
			d = c.Tick - p.Tick
			if d == 0 {
				want = uint64(p.Seq) + 1
			}
		}
		if uint64(c.Seq) < want {
			return 0, errReplayOrder
		}
		if len(c.Payload) > MaxCommandPayload {
			return 0, fmt.Errorf("replay: payload of %d bytes", len(c.Payload))
		}
		n += uvarintLen(d) + uvarintLen(uint64(c.Seq)-want) + varintLen(int64(c.MapID)) + uvarintLen(uint64(c.Kind)) +
			varintLen(int64(c.Player)) + uvarintLen(uint64(len(c.Payload))) + len(c.Payload)
	}
	return n, nil
}

// uvarintLen is the bytes of v as a uvarint.
func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// varintLen is the bytes of v as a zig-zag varint.
func varintLen(v int64) int { return uvarintLen(uint64(v<<1) ^ uint64(v>>63)) }

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

// payloadOrder is the order of cmds' payloads in the replay: by kind,
// then by length, ascending, each group in command order. The lengths are
// those of the commands' payloads.
func payloadOrder(cmds []lockstep.Command, lens []int) []int {
	order := make([]int, len(cmds))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(cmds[a].Kind, cmds[b].Kind); c != 0 {
			return c
		}
		return cmp.Compare(lens[a], lens[b])
	})
	return order
}

// payloadGroups calls f for each group of payloadOrder: the commands'
// indices, which share a kind and a length.
func payloadGroups(cmds []lockstep.Command, lens []int, f func(group []int)) {
	order := payloadOrder(cmds, lens)
	for len(order) > 0 {
		k, l := cmds[order[0]].Kind, lens[order[0]]
		n := 1
		for n < len(order) && cmds[order[n]].Kind == k && lens[order[n]] == l {
			n++
		}
		f(order[:n])
		order = order[n:]
	}
}

// appendPayloads appends cmds' payloads, group by group (payloadGroups),
// each group transposed: the first bytes of its payloads, then their
// second bytes, and so on.
func appendPayloads(dst []byte, cmds []lockstep.Command) []byte {
	lens := make([]int, len(cmds))
	for i, c := range cmds {
		lens[i] = len(c.Payload)
	}
	payloadGroups(cmds, lens, func(group []int) {
		for j := range lens[group[0]] {
			for _, i := range group {
				dst = append(dst, cmds[i].Payload[j])
			}
		}
	})
	return dst
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
// anything is allocated for it.
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
// payload from the groups that follow (appendPayloads), which must fill
// the rest of the replay exactly.
func readPayloads(r *replayReader, cmds []lockstep.Command) error {
	lens := make([]int, len(cmds))
	total := 0
	for i := range cmds {
		lens[i] = int(r.uvarint("payload length", MaxCommandPayload))
		total += lens[i]
		if r.err == nil && total > len(r.b) {
			return fmt.Errorf("replay: payloads of %d bytes or more in %d", total, len(r.b))
		}
	}
	if r.err != nil {
		return r.err
	}
	if total != len(r.b) {
		return fmt.Errorf("replay: %d bytes after %d of payloads", len(r.b)-total, total)
	}
	buf, src := make([]byte, total), r.b
	payloadGroups(cmds, lens, func(group []int) {
		for _, i := range group {
			cmds[i].Payload, buf = buf[:lens[i]:lens[i]], buf[lens[i]:]
		}
		for j := range lens[group[0]] {
			for _, i := range group {
				cmds[i].Payload[j] = src[0]
				src = src[1:]
			}
		}
	})
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
