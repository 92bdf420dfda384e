// Package replay is the session recording a host writes with
// `host serve --record`, and the reader that summarises it and replays it
// headless to check every state hash the host took.
//
// A recording is one file (Ext, ".lhreplay") per segment: where the
// session starts (a save file, exactly as package saves writes one), then
// every command the host stamped, with its tick, and the state hashes of
// every checkpoint the host took, in the order the host produced them.
// A segment stands alone: any one of them replays without the others.
// The host starts a new segment when one grows past its size bound and
// keeps a bounded number of them (see host.RecordConfig).
//
// # File layout (format version 1)
//
// All fixed-size integers are big-endian; varints are Go's
// (encoding/binary: unsigned LEB128, signed zig-zag).
//
//	offset  size  field
//	0       8     magic "LOCKRPLY"
//	8       2     format version, uint16 (1)
//	10      2     flags, uint16, 0 (anything else is refused)
//	12      ...   frames, until the end of the file
//
// A frame is
//
//	1   kind, one of the Kind values below
//	4   length N of the data, uint32, at most the kind's limit
//	8   xxhash64 of the data
//	N   data
//
// The first frame is the header (KindHeader: Header as msgpack), the
// second the start (KindStart: the bytes of a save file, its snapshot at
// or before Header.StartTick and the session at StartTick). Then, in the
// order the host made them:
//
//   - KindCommands: uvarint From, uvarint To, one byte codec (the join
//     point codecs of docs/protocol.md section 8.1: 0 gzip, 1 zstd), then
//     the compressed layout of wire.AppendReplay (speed byte, count,
//     columns) of the commands the host stamped since the previous
//     commands frame, all with a tick in From..To; the session had
//     stepped up to tick To when the frame was cut.
//   - KindCheckpoint: uvarint tick, the world hash (uint64), uvarint map
//     count (at most lockstep.MaxMaps), then per map a varint ID and its
//     hash (uint64): the host's lockstep.Checkpoint, taken right after
//     the step that reached the tick and before the commands stamped it.
//   - KindEnd: uvarint the tick the session stood at when the segment
//     ended, and a byte: 0 the session stopped, 1 the host began a new
//     segment. A file without it was cut short (the host crashed, or is
//     still writing it); everything before the cut still replays.
//
// # Reading
//
// A reader checks each frame's length against its kind's limit and
// against what is left of the file before it allocates anything, and
// each frame's hash before it decodes it. A frame cut short by the end
// of the file ends the recording there (Info.Complete false) rather than
// failing it: a crash loses at most the frame being written.
//
// Open reads a file; NewReader reads the same bytes from memory (the
// browser's viewer, /play?replay=NAME, fetches a segment and reads it
// with this code compiled to WebAssembly). A Player replays a segment at
// the pace its caller sets, checking each checkpoint as it reaches its
// tick; Verify is a Player run as fast as it goes.
package replay
