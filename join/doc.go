// Package join is the joining side of a lockstep session: it runs the
// client half of the handshake, downloads and verifies the join point,
// fast-forwards the simulation to the host's tick, reports WorldReady, and
// then follows the host's ticks and commands. It reports its state hashes
// at the host's checkpoints and takes a repair in at exactly the point the
// host cut it (resync.go).
//
// A session goes through the phases the host's side of it goes through,
// each in a file of its own with one dispatch table (packet ID to
// handler; phase.go): handshake.go, download.go, catchup.go and play.go.
// A Reconnector (reconnect.go) keeps a player in the session over
// dropped connections. FetchContent (content.go) speaks the start of the
// handshake only, to fetch the host's shared content over the session
// connection (docs/protocol.md section 17.4) before a join: its
// ContentConn is a modsync.Source, so modsync.Fetcher checks every size
// and hash.
//
// One goroutine reads frames; the goroutine that called Join (and later
// Run) owns the simulation.
package join
