// Package relay is what a relay host holds instead of a game: it runs no
// simulation and links no game code (docs/protocol.md, section 14).
//
// World stands in for the simulation the host's session drives: it counts
// ticks and the commands applied at each, accepts every command as opaque
// bytes, and, where a simulating host would freeze its state for a join
// point, returns a Cut that the arbiter's upload fills in. Upload takes an
// upload's chunks and checks the payload against the request it answers,
// without inflating a blob, and yields the snapshot.Point joiners are sent:
// the arbiter's blobs as they came.
//
// Goroutines: the session goroutine owns a World; a Cut is filled by the
// arbiter's reader and waited on by the joiners' readers, behind its own
// lock. An Upload belongs to the reader of the connection it arrives on.
package relay
