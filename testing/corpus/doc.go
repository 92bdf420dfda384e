// Package corpus records the seed corpora of the repository's fuzz targets
// from real traffic, so that fuzzing starts from what a session really
// carries rather than from hand-made inputs alone.
//
// Record runs a session over loopback TCP: a host of the default content
// and a small mod of the recorder's own, read from folders and shared as
// "host serve --share-content" does (a small world of two 64x64 maps,
// built as "host serve" builds it), with a wrapped listener that copies
// every byte the host reads and writes; one client that joins, sends
// random valid commands and a line of chat; one whose map is corrupted on
// its side two checkpoint intervals after it joined, so the host detects
// the desync, explains it with the client's answer and repairs it, and
// which then leaves; one refused for differing defs; one that lacks the
// mod and fetches the host's manifest and the mod's files over the
// session connection (every packet of the wire registry but relay mode's
// crosses it); UDP status queries before and after; the save and desync
// report the host writes; a known hosts file tlsid writes after pinning
// two TLS hosts; and the def XML files and manifests of the host's
// content (and of the real mods beside the repository, when they are
// there).
//
// Analyze splits the recording into frames, world payloads, commands and
// inflated blobs, and Targets says how each fuzz target's seeds are cut
// from it: for wire.FuzzFrameReader the opening bytes of each direction of
// each connection and the live session after the download (whole frames,
// at most 64 KiB); for wire.FuzzDecode the two smallest and the largest
// body of each packet ID seen; for snapshot the join and repair payloads
// and their chunking; for colony the world and map blobs and the commands
// sent; and the files and datagrams for the others. Every recorded seed
// must be a valid input where the target expects one.
//
// Seed files use Go's "go test fuzz v1" format and live where go test
// reads them, in each package's testdata/fuzz/<Target> folder. Recorded
// files are named RecordedPrefix and a hash of their contents; rewriting a
// folder removes only stale recorded files, never the failing inputs Go
// saves there while fuzzing.
//
// TestRecordedCorpus records a session on every run and fails when the
// committed seeds no longer cover it (a packet ID or command kind without
// a seed, a target without recorded seeds, a recorded seed that is no
// longer valid, a seed file of the wrong argument types). Its -update flag,
// which scripts/record-corpus passes, rewrites the recorded seeds first.
package corpus
