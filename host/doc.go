// Package host runs a lockstep co-op session: it owns the simulation and
// its tick on one goroutine, admits clients through the handshake in
// package wire, ships each joiner a compressed join point, and stamps and
// broadcasts commands. It compares every player's state hashes with its
// own at checkpoints and repairs a player whose state diverged by sending
// only the maps that differ (desync.go), without pausing anyone else.
//
// Goroutines: one session goroutine owns the simulation, the roster and the
// join point; each connection has one reader (which runs the handshake
// linearly under a deadline, then reads commands) and one writer with a
// bounded queue. Readers submit work to the session over channels; the
// session never blocks on a client: a client whose queue is full is
// disconnected as too slow. Work that grows with the world (compressing
// join points and repairs, hashing checkpoints) runs off the session
// goroutine on a clone when the simulation can clone itself.
//
// # Who owns what
//
// The session goroutine (session.run) owns the simulation, the roster, the
// members and the session's parts, each in a file of its own: the join
// points (joinpoints.go), the rejoin tokens (rejoins.go; kept beside the
// save by tokenfile.go, whose own goroutine writes them), the rejoin
// window of the commands stamped last (cmdwindow.go), from which a player
// that still holds its world is sent what it missed instead of a world
// (heldrejoin.go; the replays of those commands are laid out and
// compressed on goroutines of their own and kept for the next rejoin
// from the same position, replays.go), liveness
// (liveness.go), the lag policy (lag.go), the players' conduct budgets
// (conduct.go, chat rates included), desync tracking (desynctrack.go),
// autosaves (autosave.go) and what it publishes (the Overview and the
// recent history, overview.go; the charts' samples, samples.go, a
// bounded ring the session goroutine alone adds to and Server.Samples
// copies under its lock). Nothing else reads or writes them, except
// where a part's comment names another goroutine. The status page's map
// pictures are drawn from the simulation itself, on the session
// goroutine between two ticks (Server.PaintMap, pictures.go, a call like
// the admin methods'): the picture is a new image the caller then owns,
// and no other goroutine reads the live world. Chat (chat.go) and
// leaves (leave.go) are handled there too: a reader passes a chat line to
// the session as a function over its calls channel, and the admin
// methods (Server.Say, Kick, Pause...) do the same from the operator's
// goroutine.
//
// One client is three values, each with one owner:
//
//   - peer (peer.go) is the client as its reader goroutine sees it: the
//     handshake, the join's timeline, its command budget. Only the reader
//     touches it.
//   - conn (conn.go) is the client's sending side. Any goroutine may queue
//     a frame or close it; the writer goroutine alone writes to the socket.
//     Its queued byte count is an atomic because senders add and the
//     writer subtracts; its close runs once, and what it records is read
//     only after it. Its path (the way the connection came, for the
//     status page) is set by the reader before the conn is shared and
//     never changes.
//   - member (session.go) is the client as the session sees it, made at
//     admission and handed to the reader in the join reply. The session
//     goroutine owns all of it except three atomics, which only the reader
//     writes: acked (the last tick the client reported), heard (when it
//     last sent anything) and rtt (its smoothed round trip). They change
//     with nearly every packet and the session reads them on its tick, so
//     they are published values rather than messages. Everything else a
//     reader tells the session (a join, WorldReady, a command, a hash
//     report, the first round trip, a chat line, a leave) goes over the
//     session's channels.
//
// A payload on its way to a client (the world of a join, a repair) is one
// more value, transfer (transfer.go), built whole in one place and handed
// to the writer in one call (conn.startTransfer). The writer alone stores
// how far it wrote; the reader alone stores how far the client
// acknowledged (transfer.ack, which also wakes a writer waiting on the
// download window); neither reads the other's goroutine's state beyond
// those two counters. A join that drops before WorldReady and comes back
// with its token is followed by joinProgress (resume.go), which the
// session goroutine owns: the reader publishes there the transfer it
// started, and the session reads that transfer's counters when the join
// resumes, to check what the joiner says it holds. The join point a
// joiner is sent counts it as in use from admission to WorldReady or its
// leave, on the session goroutine (joinPoints.hand, release); its thin
// map blobs (sections.go) go when its last joiner is in or gone.
//
// The world transfers' shared upload, uplink (uplink.go), is one value
// behind its own lock: writers take their chunks' time from it, readers
// enter and leave its line of upload slots, and the session goroutine
// reviews the slots on its tick, taking one back from a join that runs
// far below its share while others wait. That pauses the join's transfer
// (its writer waits) and tells the join's reader through a callback run
// under the uplink's lock (peer.slotTurn), which only queues a notice and
// sets the reader's deadline; the reader sets its own deadlines under the
// same lock (uplink.hold), so the two are applied in order.
//
// Shared content (content.go, docs/protocol.md section 17) draws on the
// same uplink. A joiner's reader answers its content requests before
// Client_Defs itself: it holds an upload slot for each answer, takes
// each chunk's time from the uplink's cap and queues the chunk only when
// at most two wait in its connection's queue (conn.sendWithin). The
// shared content (Content.Share, a modsync.Handler) is made before the
// host starts and only read after; its HTTP side (ContentHandler, run on
// the HTTP server's goroutines) takes a slot per response, 503 when none
// is free, and paces its bytes through the same uplink.
//
// Work the session starts elsewhere reports back through atomics read on
// its tick (a join point being prepared, an autosave being written, a
// repair's world hash once known), a channel (checkpoints being hashed),
// or a call on its calls channel (a held-world rejoin's replay, whose
// join request the session keeps, unanswered, until it comes; a desync's
// explanation, explain.go). An explanation's goroutine owns the copies
// of the state it was handed (the session keeps copies at its last
// checkpoints and never changes one) and the report it writes; the
// player's answer comes into a bounded buffer (explainWait) that the
// explanation publishes on the player's conn and the reader alone fills,
// under the buffer's lock, never through the session goroutine.
//
// Where the two kinds of host differ, the session asks its mode
// (mode.go): simulating, for a host that runs the game, or the relay
// session, for a relay host; no other file of the session asks which one
// it serves. Relay mode lives in the relay files: relay.go (the mode, the
// arbiters, upload requests), relaypeer.go (an arbiter's reader: its
// proof and uploads), relaymajority.go (checkpoints decided without an
// arbiter) and relaydefs.go (def databases the arbiter declares); package
// host/relay is its stand-in for the game.
//
// Relay mode (docs/protocol.md, section 14): the
// session drives a relay.World in place of a game, and its join points
// are relay.Cuts that the arbiter's uploads fill. The session goroutine
// owns the relay state (the arbiters, which is active, the World) except
// the open upload requests, which the arbiters' readers look up behind
// the relay state's lock as uploads come. An arbiter's reader takes the
// chunks (relay.Upload, its own), checks the payload, and fills the cut
// itself (joiners' readers wait on it, at most Relay.UploadWait) or
// passes a new session's world to the session as a call.
//
// The def databases joiners must match (hostDefs, defs.go) are one
// immutable value behind an atomic pointer: the readers load it for the
// mod list, the def check and status replies; only the session goroutine
// replaces it, when a relay session takes its arbiter's declaration
// (relaydefs.go). A reader that ran its def check before the declaration
// hands its Client_Defs to the session with the join, which checks it.
//
// The connection gate is package gate (host/gate), which the accept loop
// and the readers share, each part behind its own lock: connections not
// admitted yet are in its pending table, which evicts the connection
// that has done least for longest when full and penalizes addresses that
// stall; its guess limiter sets the puzzles and bounds the checks of
// passwords and relay arbiter proofs, one budget, across all addresses;
// it limits new connections per address and logs refusals a line per
// address and interval.
//
// The host operator's actions (admin.go) are methods of Server: Players,
// Kick, Ban, Unban, Bans, Say, SaveNow, SetSpeed, Pause, Resume and
// Shutdown, and a relay host's ClearDeclaredDefs (relaydefs.go). Those that touch the session run on its goroutine; bans
// (bans.go) are kept in Config.Admission.BanFile and checked at admission, rejoins
// included.
package host
