// Package desync is the on-disk desync report a lockstep host writes each
// time a client's state hash differs from the host's, and reads back for
// "host desyncs list" and "host desyncs show".
//
// A report (Report) records who diverged and when, which hashes differ —
// the world hash, each map's hash and, where the game hashes parts of a
// map (lockstep.MapDigester), each part's — what the host did about it,
// and the commands of the window that led up to the checkpoint, so the
// divergence can be replayed and explained offline. Its Reference says
// whose hashes the client's were compared with: the host's own, a relay
// session's arbiter's, or, in a relay session without an arbiter, those
// a strict majority of the players reported ("majority 2 of 3 players").
// Where the host worked it out (package desync/explain), its Explanation
// says at which tick the player's state first differed, what kind of
// divergence it was and which fields differ, in the game's own terms.
//
// # Files
//
// Reports live in one folder, by convention DirName ("desyncs") inside
// the host's data folder. Each is one indented JSON file (format version
// Version, 1) named
//
//	desync-<UTC time as 20060102T150405.000000000Z>-t<tick>-p<player ID>.json
//
// so that names sort by time. Write writes a file atomically (a temporary
// file, synced and renamed; see internal/atomicfile) and then prunes the
// folder to the newest Keep reports, deleting only files whose names
// follow the pattern above. Read refuses files over MaxReportSize before
// reading them, unknown fields, trailing data and other versions. List
// reads a whole folder, oldest first, listing an unreadable file with its
// error instead of failing.
//
// # JSON
//
// Every field has a snake_case name. Commands are stored as
// CommandRecord, a snake_case mirror of lockstep.Command (the payload in
// base64); Records and CommandRecord.Command convert between the two.
// Hashes are JSON numbers: they are uint64 and decode exactly in Go, but
// tools in other languages may need to read them as big integers.
package desync
