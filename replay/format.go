package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// File format constants.
const (
	// Magic opens every recording.
	Magic = "LOCKRPLY"
	// FormatVersion is the layout this package writes and reads.
	FormatVersion = 1
	// Ext is the file name extension of recordings.
	Ext = ".lhreplay"

	prefixLen      = 8 + 2 + 2
	frameHeaderLen = 1 + 4 + 8
)

// Kind is a frame's kind.
type Kind uint8

// Frame kinds.
const (
	KindHeader     Kind = 1
	KindStart      Kind = 2
	KindCommands   Kind = 3
	KindCheckpoint Kind = 4
	KindEnd        Kind = 5
)

// Limits on a frame's data, by kind: a reader refuses a longer frame
// before reading it.
const (
	// MaxHeader bounds the header frame.
	MaxHeader = 64 << 10
	// MaxStart bounds the start frame, a save file: the largest the host
	// writes (its worlds are bounded well below it).
	MaxStart = math.MaxUint32
	// MaxCommandsFrame bounds a compressed commands frame.
	MaxCommandsFrame = 16 << 20
	// MaxCommandsRaw bounds a commands frame's inflated layout.
	MaxCommandsRaw = 64 << 20
	// MaxCheckpointFrame bounds a checkpoint frame: a tick, the world
	// hash and lockstep.MaxMaps maps with their hashes.
	MaxCheckpointFrame = 10 + 8 + 10 + lockstep.MaxMaps*(5+8)
	// maxEndFrame bounds the end frame.
	maxEndFrame = 10 + 1
)

// maxFrame is the limit on a frame of kind k, 0 for an unknown kind.
func maxFrame(k Kind) uint64 {
	switch k {
	case KindHeader:
		return MaxHeader
	case KindStart:
		return MaxStart
	case KindCommands:
		return MaxCommandsFrame
	case KindCheckpoint:
		return MaxCheckpointFrame
	case KindEnd:
		return maxEndFrame
	}
	return 0
}

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindHeader:
		return "header"
	case KindStart:
		return "start"
	case KindCommands:
		return "commands"
	case KindCheckpoint:
		return "checkpoint"
	case KindEnd:
		return "end"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Header describes a segment.
type Header struct {
	// Game is the session's name (--game-name).
	Game string `codec:"g"`
	// Version is the host's version string.
	Version string `codec:"v"`
	// Protocol is the protocol version the host spoke.
	Protocol uint32 `codec:"p"`
	// TickRate is the session's ticks per second at normal speed.
	TickRate int `codec:"r"`
	// Segment numbers the segments of one recording from 1.
	Segment int `codec:"n"`
	// Started is when the segment began, in Unix milliseconds.
	Started int64 `codec:"s"`
	// StartTick is the tick the start save brings the session to.
	StartTick uint64 `codec:"t"`
	// Relay says a relay host recorded the segment: its start is the
	// arbiter's world and its checkpoints the arbiter's (or the players'
	// majority's), so only that game can replay it.
	Relay bool `codec:"y,omitempty"`
}

// StartedAt is Started as a time.
func (h Header) StartedAt() time.Time { return time.UnixMilli(h.Started) }

// Ending of a segment, the end frame's last byte.
const (
	// EndStopped: the session stopped.
	EndStopped = 0
	// EndRotated: the host began a new segment.
	EndRotated = 1
)

// commandsCodec is the codec commands frames are written with.
var commandsCodec = snapshot.Compression{Codec: snapshot.Zstd}

// appendCommands appends a commands frame's data.
func appendCommands(dst []byte, from, to uint64, cmds []lockstep.Command, speed uint8) ([]byte, error) {
	raw, err := wire.AppendReplay(nil, cmds, speed)
	if err != nil {
		return dst, err
	}
	blob, err := snapshot.Compress(raw, commandsCodec)
	if err != nil {
		return dst, err
	}
	dst = binary.AppendUvarint(dst, from)
	dst = binary.AppendUvarint(dst, to)
	dst = append(dst, byte(blob.Codec))
	return append(dst, blob.Data...), nil
}

// Commands is a decoded commands frame.
type Commands struct {
	From, To uint64
	Speed    uint8
	Commands []lockstep.Command
}

// errShort is a frame's data ending inside a field.
var errShort = errors.New("data ends inside a field")

// decodeCommands decodes a commands frame's data.
func decodeCommands(data []byte) (Commands, error) {
	var c Commands
	var n int
	if c.From, n = binary.Uvarint(data); n <= 0 {
		return c, fmt.Errorf("from tick: %w", errShort)
	}
	data = data[n:]
	if c.To, n = binary.Uvarint(data); n <= 0 {
		return c, fmt.Errorf("to tick: %w", errShort)
	}
	data = data[n:]
	if c.To < c.From {
		return c, fmt.Errorf("ticks %d..%d run backwards", c.From, c.To)
	}
	if len(data) < 1 {
		return c, fmt.Errorf("codec: %w", errShort)
	}
	codec := snapshot.Codec(data[0])
	if !codec.Known() {
		return c, fmt.Errorf("unknown %s", codec)
	}
	raw, err := snapshot.Inflate(codec, data[1:], MaxCommandsRaw)
	if err != nil {
		return c, err
	}
	c.Commands, c.Speed, err = wire.DecodeReplay(raw)
	if err != nil {
		return c, err
	}
	for _, cmd := range c.Commands {
		if cmd.Tick < c.From || cmd.Tick > c.To {
			return c, fmt.Errorf("a command stamped tick %d, outside the frame's ticks %d..%d", cmd.Tick, c.From, c.To)
		}
	}
	return c, nil
}

// appendCheckpoint appends a checkpoint frame's data.
func appendCheckpoint(dst []byte, cp lockstep.Checkpoint) []byte {
	dst = binary.AppendUvarint(dst, cp.Tick)
	dst = binary.BigEndian.AppendUint64(dst, cp.World)
	dst = binary.AppendUvarint(dst, uint64(len(cp.Maps)))
	for _, m := range cp.Maps {
		dst = binary.AppendVarint(dst, int64(m.ID))
		dst = binary.BigEndian.AppendUint64(dst, m.Hash)
	}
	return dst
}

// decodeCheckpoint decodes a checkpoint frame's data (without part
// hashes, which a recording does not keep).
func decodeCheckpoint(data []byte) (lockstep.Checkpoint, error) {
	var cp lockstep.Checkpoint
	var n int
	if cp.Tick, n = binary.Uvarint(data); n <= 0 {
		return cp, fmt.Errorf("tick: %w", errShort)
	}
	data = data[n:]
	if len(data) < 8 {
		return cp, fmt.Errorf("world hash: %w", errShort)
	}
	cp.World, data = binary.BigEndian.Uint64(data), data[8:]
	count, n := binary.Uvarint(data)
	if n <= 0 {
		return cp, fmt.Errorf("map count: %w", errShort)
	}
	data = data[n:]
	// Each map takes at least 9 bytes: bound the count by what is left
	// before allocating for it.
	if count > lockstep.MaxMaps || count > uint64(len(data)/9) {
		return cp, fmt.Errorf("%d maps in %d bytes (at most %d maps)", count, len(data), lockstep.MaxMaps)
	}
	cp.Maps = make([]lockstep.MapCheckpoint, count)
	for i := range cp.Maps {
		id, n := binary.Varint(data)
		if n <= 0 || id < math.MinInt32 || id > math.MaxInt32 {
			return cp, fmt.Errorf("map %d's ID: %w", i, errShort)
		}
		data = data[n:]
		if len(data) < 8 {
			return cp, fmt.Errorf("map %d's hash: %w", i, errShort)
		}
		cp.Maps[i] = lockstep.MapCheckpoint{ID: int32(id), Hash: binary.BigEndian.Uint64(data)}
		data = data[8:]
		if i > 0 && cp.Maps[i].ID <= cp.Maps[i-1].ID {
			return cp, fmt.Errorf("map IDs out of order (%d after %d)", cp.Maps[i].ID, cp.Maps[i-1].ID)
		}
	}
	if len(data) != 0 {
		return cp, fmt.Errorf("%d bytes after the last map", len(data))
	}
	return cp, nil
}

// appendEnd appends an end frame's data.
func appendEnd(dst []byte, tick uint64, why byte) []byte {
	return append(binary.AppendUvarint(dst, tick), why)
}

// decodeEnd decodes an end frame's data.
func decodeEnd(data []byte) (tick uint64, why byte, err error) {
	tick, n := binary.Uvarint(data)
	if n <= 0 || len(data) != n+1 {
		return 0, 0, fmt.Errorf("end frame of %d bytes", len(data))
	}
	why = data[n]
	if why != EndStopped && why != EndRotated {
		return 0, 0, fmt.Errorf("end frame: unknown ending %d", why)
	}
	return tick, why, nil
}
