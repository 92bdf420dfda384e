// Package saves persists a session to disk so that no crash loses a
// colony: every file is written to a temporary file in the same folder,
// synced, renamed over the old one and the folder synced, so a reader
// sees either the old file or the new one, never a mix (package
// internal/atomicfile).
//
// # Save file layout (format version 1)
//
// All integers are big-endian. Offsets are from the start of the file.
//
//	offset      size   field
//	0           8      magic "LOCKSAVE"
//	8           2      format version, uint16 (1)
//	10          2      flags, uint16, 0 (anything else is refused)
//	12          8      total file length in bytes, uint64, checksum included
//	20          4      meta length M, uint32, at most MaxMeta (16 MiB)
//	24          M      meta: Meta as msgpack (package internal/codec)
//	24+M        B      body: a snapshot payload exactly as snapshot.NewPayload
//	                   lays it out (see package snapshot): [header length u32]
//	                   [xxhash64 of header u64][Header msgpack: faction, snapshot
//	                   tick, Granted = Meta.Tick, world/map blob sizes, raw
//	                   sizes and hashes, state hashes, per-map commands since
//	                   the snapshot][world blob][map blobs in header order]
//	24+M+B      8      xxhash64 of every preceding byte (0 .. 24+M+B), uint64
//
// so B = total - 32 - M. The body's header and every blob carry their own
// hashes, which lets Read name the damaged part; the trailing checksum
// covers the prefix and the meta as well.
//
// Read checks, in order, and names the damaged part in its error: the
// magic ("header"); the version (a newer one is ErrVersion, unless the
// file's checksum shows the field itself was damaged); the flags; the
// total length against the file size (shorter: ErrTruncated, "the file
// ends at byte N of M"); the meta length against MaxMeta and the file
// size; the meta ("meta"); the body's header ("command list and snapshot
// header"); each blob's hash without inflating it ("world data", "map
// <id> data"); the checksum ("checksum": the meta or the checksum itself
// is damaged, everything else having passed its own check); and finally
// that the meta's tick, the body's grant and its commands' ticks agree.
// Lengths are checked against the file size before anything is allocated.
//
// Write streams the body's chunks through the checksum into the atomic
// write
// and never builds the file in memory. Load inflates and loads the
// snapshot through snapshot's loading path (each blob streamed from the
// file by snapshot.InflateFrom, never held compressed), verifies it
// against the body's state hashes and replays the commands up to
// Meta.Tick.
//
// # Autosaves
//
// Autosaves of dir/NAME.lhsave are dir/NAME.auto-<tick>.lhsave, the tick
// zero-padded to 20 digits so names sort as ticks do (AutosavePath).
// Autosaves lists them newest first, PruneAutosaves keeps the newest few,
// NewestValid picks the newest of a save and its autosaves that reads
// back valid (and says which newer ones it passed over), and MakeRoom
// deletes the oldest autosave after a write failed for a full disk,
// never the newest valid one.
//
// # Session tokens
//
// Beside dir/NAME.lhsave, dir/NAME.tokens keeps the host's session tokens
// (TokensPath, WriteTokens, ReadTokens): JSON, written atomically with
// mode 0600, holding each token's SHA-256 hash with the player ID, name
// and role it rejoins as, and the highest player ID handed out. One file
// serves the save and its autosaves.
package saves
