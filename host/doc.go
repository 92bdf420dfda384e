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
// The host operator's actions (admin.go) are methods of Server: Players,
// Kick, Ban, Unban, Bans, Say, SaveNow, SetSpeed, Pause, Resume and
// Shutdown. Those that touch the session run on its goroutine; bans
// (bans.go) are kept in Config.BanFile and checked at admission, rejoins
// included.
package host
