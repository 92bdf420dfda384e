// Package wire is the lockhost network protocol: frame layout, packet IDs,
// packet bodies, disconnect reasons and the chunking of large payloads.
// It holds no connection state; the host and join packages drive the flow.
//
// # Transport
//
// TCP on the game port (default DefaultPort); with the host's --tls, TLS
// 1.3 only (ALPN "lockhost/2"), the handshake done under the handshake
// deadline before the first frame. The host's certificate is pinned by
// joiners (package tlsid). The UDP status query on the same port number
// says whether TLS is required.
//
// # Frames
//
// Every message on the TCP stream is one frame:
//
//	+----------------+--------+----------------------+
//	| length: uint32 | id: u8 | body: length-1 bytes |
//	| big-endian     |        | msgpack              |
//	+----------------+--------+----------------------+
//
// length counts the id byte and the body, so it is at least 1. A reader
// checks length against its limit (DefaultMaxFrame, 1 MiB) before it
// allocates or reads the body; a longer frame ends the connection with
// reason BadPacket. Bodies are msgpack (hashicorp/go-msgpack/v2, structs as
// maps with short keys) and must decode completely: trailing bytes are an
// error. A chat line (Client_Chat, Server_Chat) is at most MaxChatBytes
// (256 bytes). The largest byte field is Server_Disconnect's detail, at most
// MaxDetailBytes (512 KiB); a Server_WorldData chunk carries at most
// MaxChunkData (256 KiB) and a Client_Command payload at most
// MaxClientCommandPayload (256 KiB).
//
// # Packet IDs
//
// Each packet's body is a msgpack map; the table gives its keys as
// key:field. A field ending in [] is a list (of the items in braces that
// follow, when they are maps); bytes fields are msgpack bin. Limits are
// checked when a body is decoded; a packet over one ends the connection
// with reason BadPacket.
//
// Client to host (0..15):
//
//	0  Client_Protocol    {v:protocol}
//	1  Client_Defs        {d:databases[]{t:type, c:count, h:hash}}   at most MaxDatabases
//	2  Client_Username    {n:name, p:passwordProof, w:puzzleNonce, s:spectate, k:token, r:resume[]{i:index, h:hash}}
//	                      resume (with a token, before WorldReady): blobs held, <= MaxResumeBlobs;
//	                      puzzleNonce: uint64, solves the password puzzle (0 when there is none)
//	3  Client_WorldReady  {t:tick, h:worldHash}
//	4  Client_Command     {m:mapID, k:kind, d:payload}               payload <= MaxClientCommandPayload
//	5  Client_Clock       {n:nonce, c:clientTime}                    echo of a Server_Clock
//	6  Client_Ack         {r:received}                               world payload bytes received
//	7  Client_TickAck     {t:tick}                                   simulated up to tick (lag policy)
//	8  Client_Keepalive   {q:seq, h:hostTime}                        echo of a Server_Keepalive
//	9  Client_Hashes      {t:tick, w:world, m:maps[]{m:mapID, h:hash, p:parts[]}}
//	                      state hashes at a checkpoint; maps <= MaxHashMaps, parts <= lockstep.MaxMapParts
//	10 Client_Resynced    {t:tick, w:world}                          a repair went in: world hash at its tick
//	11 Client_Leave       {w:why}                                    leaving on purpose; why <= MaxLeaveWhyBytes
//	12 Client_Chat        {t:text}                                   a chat line; text <= MaxChatBytes
//
// Host to client (16..):
//
//	16 Server_ModList     {v:gameVersion, m:mods[], c:passwordChallenge, d:puzzleBits}
//	                      puzzleBits: uint8, 0 (no puzzle) to MaxPuzzleBits (32); not 0 only with a challenge
//	17 Server_DefsOK      {g:gameName, p:playerID}
//	18 Server_WorldData   {o:offset, t:total, d:data}                one chunk of the world payload
//	19 Server_PlayerList  {a:action, p:players[]{i:id, n:name, f:faction, s:status, x:spectator, l:latencyMs}}
//	20 Server_Disconnect  {r:reason, m:message, s:defStatuses, d:detail}
//	                      defStatuses: bytes, one status per declared database (reason Defs);
//	                      detail: more about the reason (the host's manifest of differing defs)
//	21 Server_Notice      {k:kind, t:text}
//	22 Server_Tick        {t:tick, c:commands[]{t:tick, q:seq, m:mapID, k:kind, p:player, d:payload}, g:granted, s:speed}
//	23 Server_Clock       {n:nonce, h:hostTime, d:delta, a:attempt}  one clock-sync round
//	24 Server_Keepalive   {q:seq, h:hostTime}                        every second to admitted clients
//	25 Server_Session     {k:token, g:graceMs, p:playerID, e:hashEvery}
//	                      on admission: the rejoin token and the checkpoint interval
//	26 Server_Resync      {t:tick, a:applied, m:maps[], f:full}      a repair: the state cut at (tick, applied)
//	                      follows as Server_WorldData chunks
//	27 Server_Desync      {s:state, p:playerID, n:name, t:tick, m:maps[], w:world, r:repairMs}
//	                      to all: detected, repaired or dropped
//	28 Server_Chat        {n:name, p:playerID, t:text}               a chat line to all; the host's own: name "", id 0
//
// Enumerations: Server_PlayerList action 0 List, 1 Add, 2 Remove, 3 Status,
// 4 Latencies; player status 0 joining, 1 downloading, 2 playing,
// 3 spectating, 4 desynced; notice kind 0 info, 1 joined, 2 left,
// 3 faction online, 4 faction offline; Server_Desync state 0 detected,
// 1 repaired, 2 dropped; disconnect reasons as listed by Reason.
//
// # Flow
//
//	client                                   host
//	Client_Protocol        ------------->    mismatch: Disconnect(Protocol)
//	                       <-------------    Server_ModList (+ password challenge, puzzle)
//	Client_Defs            ------------->    any non-OK: Disconnect(Defs, statuses, detail)
//	                       <-------------    Server_Clock   } repeated until a round lands
//	Client_Clock           ------------->                   } in the window, or ClockSync
//	                       <-------------    Server_DefsOK
//	Client_Username        ------------->    empty: ignored; then in order: Username*,
//	                                         ServerFull/SpectatorsFull, BadPassword
//	                       <-------------    Server_PlayerList (List) to the joiner;
//	                                         Add to the others; Server_Notice to all
//	                       <-------------    Server_WorldData chunks ... interleaved with Server_Tick
//	Client_Ack             ------------->    per chunk; the download deadline follows them
//	(load, catch up)
//	Client_WorldReady      ------------->    player is Playing (or Spectating); Status to all
//	                       <-------------    Server_Clock rounds again; Latencies to all
//	Client_Command         ------------->    stamped, broadcast in Server_Tick
//	                                         (a spectator's is refused with a notice)
//	Client_Hashes          ------------->    every hashEvery ticks; compared with the host's
//	                       <-------------    on a difference: Server_Desync to all, then
//	                                         Server_Resync + Server_WorldData to the player
//	Client_Resynced        ------------->    world hash matches: Server_Desync(repaired) to all
//
// Deadlines: connect to DefsOK (clock sync included), DefsOK to username,
// no download progress acknowledged, end of download to WorldReady. A
// client that misses one is dropped with reason Timeout. New connections
// are rate-limited per IP address (RateLimited). A connection not yet
// admitted may be closed with reason RateLimited to make room for a
// newcomer when too many are joining at once: the host closes the one
// that has done least for longest.
//
// Clock sync: the host sends a random nonce, its clock and its estimate
// of the client's clock offset (delta); the client echoes the nonce with
// its clock. A wrong nonce ends the connection. A round is good when
// |(clientTime - delta) - midpoint(round trip)| is within the window
// (default 50 ms): the estimate holds, whatever the latency; otherwise
// delta becomes clientTime - midpoint and the host tries again, up to the
// retry limit (default 32). The last round trip is the player's latency.
//
// The password, if any, is answered with HMAC-SHA256(password, domain ||
// challenge) (package password); it never crosses the wire.
//
// Password puzzle: when password checks come faster than the host's
// budget for all addresses together, Server_ModList sets puzzleBits to
// n > 0, and the client must find a nonce, a uint64, such that
//
//	SHA-256("lockhost password puzzle v1" || 0x00 || challenge || nonce as 8 bytes big-endian)
//
// starts with n zero bits (the challenge is Server_ModList's 32 random
// bytes, fresh for each connection), and send it as Client_Username's
// puzzleNonce. The host verifies it with one hash before it checks the
// password; a missing or wrong solution is refused with reason
// RateLimited and the password is not checked. The cost is 2^n hashes on
// average for the client, one for the host. The host issues n from a
// leaky count L of the password checks it made (all addresses together),
// which drains at the host's check rate R (default 5 per second): no
// puzzle (a free pass) while L plus the free passes still unanswered is
// below the free burst B (default 20); otherwise n = max(8, 8 + (L - B) /
// 4), rounded down, up to the host's maximum M (default 24). An answer
// counts only if its puzzle (0 for a free pass) is at least the
// difficulty for the load L - 8 at the time of the check; otherwise it is
// refused, RateLimited, unchecked (puzzles set cheaply before a burst of
// guesses buy few checks).
// A check is made only while L + 1 <= B + 4 * (M - 7) (default 88); past
// that an attempt is refused, RateLimited, unchecked. So in any T seconds
// the host checks at most B + 4 * (M - 7) + R * T passwords (88 + 5T by
// default), and in the long run no more than R a second, however many
// addresses guess; and every check past the free burst costs the guessers
// a puzzle whose work doubles with every 4 more checks in the count. A
// real client with the right password solves one puzzle, of the
// difficulty the guessing has reached (the guessers' hash rate divided by
// R, rounded to a power of two). A per-address limit on attempts comes
// first (RateLimited, unchecked, no puzzle state spent).
//
// Rejoin: on admission the host gives the player a random 128-bit token.
// A Client_Username carrying it, within the grace period after the player
// left (default 5 min) or while its old connection still lingers (which is
// then closed, reason Replaced), gets the same player ID, name and faction;
// an unknown or expired token is refused with reason BadToken.
//
// Resume: a joiner whose connection drops after admission but before
// WorldReady retries with the token and lists in Client_Username's resume
// the blobs it holds: each received whole and checked against its hash,
// by its index in the last world payload header it got (0 the world, 1+i
// map i) and that hash. The host checks that this join was sent each one
// (written whole, or left out of an earlier resumed payload) at that
// index; otherwise it refuses with reason BadPacket. A join that resumes
// more than twice in a row without acknowledging a new blob whole (or its
// whole download) in between is refused with reason RateLimited. The
// host then sends the world payload of its current join point, leaving
// out every blob whose hash the joiner holds: the header's held list
// names them. A join point's map that did not change keeps its blob, so a
// newer join point still spares what the joiner holds. Admission, limits
// and deadlines are those of a first join. The host writes a join's
// payload at most a window (default 2 MiB) ahead of the joiner's
// acknowledgements.
//
// Liveness: once admitted, a client gets a Server_Keepalive every second
// and echoes it at once; the host keeps a smoothed round trip per player
// (shown in the player list) and drops a client it has heard nothing from
// for the timeout (default 30 s) with reason Timeout. A client that hears
// nothing from the host for as long gives up the same way.
//
// Leaving: a client that leaves on purpose sends Client_Leave and waits
// (briefly) for the host to close the connection; the others are told it
// left. A connection that ends without one is a drop: the others are told
// the connection was lost.
//
// Chat: after admission a client may send Client_Chat at any time. The
// host removes control characters, refuses an empty line or one over the
// chat rate (a notice to the sender only; the connection stays) and
// relays the rest to everyone, the sender included, as Server_Chat with
// the sender's name and player ID.
//
// Desync detection: every hashEvery ticks (default 60) each playing
// client that simulates sends Client_Hashes for the tick it just stepped
// to, before applying that tick's commands: the world hash and each map's
// hash, with part hashes when the game can split a map. The host takes its
// own checkpoint at the same point and keeps the last window (default
// 1800 ticks). A report must be for a multiple of hashEvery, above the
// client's previous report, not ahead of the host, with no map twice and
// no unknown map; otherwise BadPacket. A report older than the window is
// refused with a notice and not compared.
//
// Repair: when a report differs, the host writes a desync report, marks
// the player Desynced (Status to all), sends Server_Desync(detected) and a
// notice to everyone, and cuts its state now, at (tick, applied): the
// tick, after the first applied commands stamped with it. It sends
// Server_Resync on the ordered stream (so before any later Server_Tick),
// then the cut as a world payload in Server_WorldData chunks (offsets from
// 0, no Client_Ack): the differing maps and the world-level state, or the
// whole world when only the world hash differs or every map does. The
// client simulates to exactly (tick, applied), waits there for the
// payload, swaps the maps in (or reloads the world), checks each against
// the header's hashes, answers Client_Resynced with its world hash there,
// and catches up on the ticks it kept receiving. A matching world hash
// ends the repair (Status and Server_Desync(repaired) to all); a different
// one is a new desync with the whole world sent. While repaired, the
// player does not count for the lag policy: nobody else waits. More than
// the desync limit within the window (default 3 in 10 min), or a repair
// not done within its timeout (2 min), ends the connection with reason
// Desync.
//
// A packet that is not allowed in the current phase ends the connection
// with reason BadPacket.
//
// # World payload
//
// The world is sent as one logical payload split into Server_WorldData
// chunks of at most MaxChunkData bytes, in order. The first chunk's total
// declares the whole size; the receiver checks it against its limit before
// accepting anything and rejects chunks whose offset is not the next
// expected one or that run past total. The reassembled payload is:
//
//	+-------------------+--------------------+-----------------------+----------------------+
//	| hdrLen: uint32 BE | hdrHash: uint64 BE | WorldHeader (msgpack) | blobs, back to back  |
//	| <= 64 MiB         | xxhash64 of header |                       |                      |
//	+-------------------+--------------------+-----------------------+----------------------+
//
// WorldHeader names the faction, the snapshot tick, each blob's size and
// xxhash64, the host's state hashes at the snapshot tick, and the per-map
// commands queued since the snapshot, and (key k, on a resume) the held
// list: the indexes, ascending, of blobs left out because the joiner holds
// them. hdrHash is checked before the header is decoded (package
// snapshot, MaxHeader, holds the details). The blobs are the
// gzip-compressed world state followed by each map's gzip-compressed
// state, in header order, less the held ones.
package wire
