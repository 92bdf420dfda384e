package corpus

import (
	"encoding/binary"
	"fmt"

	"github.com/lockhost/lockhost/wire"
)

// Frame is one frame of a recorded stream.
type Frame struct {
	// ID is the frame's packet ID.
	ID wire.ID
	// Body is the packet body; it aliases the stream.
	Body []byte
	// End is the offset in the stream just past the frame.
	End int
}

// Frames splits a recorded stream into its frames. Bytes after the last
// whole frame (a connection cut mid-frame) are ignored.
func Frames(stream []byte) []Frame {
	var out []Frame
	off := 0
	for len(stream)-off >= 4 {
		n := int(binary.BigEndian.Uint32(stream[off:]))
		if n == 0 || n > len(stream)-off-4 {
			break
		}
		start := off + 4
		off = start + n
		out = append(out, Frame{ID: wire.ID(stream[start]), Body: stream[start+1 : off], End: off})
	}
	return out
}

// Transfer is one world payload a host sent in Server_WorldData chunks: a
// join's world, or a repair.
type Transfer struct {
	// Repair is true for a payload sent after a Server_Resync.
	Repair bool
	// Chunks are the sizes of the chunks in order.
	Chunks []int
	// Payload is the reassembled payload.
	Payload []byte
}

// Transfers reassembles the world payloads in the frames a host sent. A
// payload cut short by the end of the stream is left out.
func Transfers(host []Frame) ([]Transfer, error) {
	var out []Transfer
	var cur *Transfer
	var total uint64
	resync := false
	for _, f := range host {
		switch f.ID {
		case wire.IDServerResync:
			resync = true
		case wire.IDServerWorldData:
			p, err := wire.Decode(f.ID, f.Body)
			if err != nil {
				return nil, fmt.Errorf("recorded world data: %w", err)
			}
			wd := p.(*wire.ServerWorldData)
			if wd.Offset == 0 {
				cur = &Transfer{Repair: resync}
				total = wd.Total
				resync = false
			}
			if cur == nil || wd.Offset != uint64(len(cur.Payload)) || wd.Total != total {
				return nil, fmt.Errorf("recorded world data out of order at offset %d", wd.Offset)
			}
			cur.Chunks = append(cur.Chunks, len(wd.Data))
			cur.Payload = append(cur.Payload, wd.Data...)
			if uint64(len(cur.Payload)) == total {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
	return out, nil
}
