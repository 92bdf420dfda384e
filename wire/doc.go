// Package wire is the lockhost network protocol: frame layout, packet IDs,
// packet bodies, disconnect reasons and the chunking of large payloads.
// It holds no connection state; the host and join packages drive the flow.
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
// error. No msgpack byte field is larger than MaxChunkData (256 KiB).
//
// # Packet IDs
//
// Client to host (0..15):
//
//	0  Client_Protocol    {protocol}
//	1  Client_Defs        {databases: []{type, count, hash}}   at most MaxDatabases
//	2  Client_Username    {name, passwordProof, spectate, token}
//	3  Client_WorldReady  {tick, worldHash}
//	4  Client_Command     {mapID, kind, payload}               payload <= MaxClientCommandPayload
//	5  Client_Clock       {nonce, clientTime}                  echo of a Server_Clock
//	6  Client_Ack         {received}                           world payload bytes received
//	7  Client_TickAck     {tick}                               simulated up to tick (lag policy)
//	8  Client_Keepalive   {seq, hostTime}                      echo of a Server_Keepalive
//
// Host to client (16..):
//
//	16 Server_ModList     {gameVersion, mods[], passwordChallenge}
//	17 Server_DefsOK      {gameName, playerID}
//	18 Server_WorldData   {offset, total, data}  one chunk of the world payload
//	19 Server_PlayerList  {action, players[]}
//	20 Server_Disconnect  {reason, message, defStatuses[]}
//	21 Server_Notice      {kind, text}
//	22 Server_Tick        {tick, commands[], granted, speed}
//	23 Server_Clock       {nonce, hostTime, delta, attempt}     one clock-sync round
//	24 Server_Keepalive   {seq, hostTime}                       every second to admitted clients
//	25 Server_Session     {token, graceMs, playerID}            on admission: the rejoin token
//
// # Flow
//
//	client                                   host
//	Client_Protocol        ------------->    mismatch: Disconnect(Protocol)
//	                       <-------------    Server_ModList (+ password challenge)
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
//
// Deadlines: connect to DefsOK (clock sync included), DefsOK to username,
// no download progress acknowledged, end of download to WorldReady. A
// client that misses one is dropped with reason Timeout. New connections
// are rate-limited per IP address (RateLimited).
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
// Rejoin: on admission the host gives the player a random 128-bit token.
// A Client_Username carrying it, within the grace period after the player
// left (default 5 min) or while its old connection still lingers (which is
// then closed, reason Replaced), gets the same player ID, name and faction;
// an unknown or expired token is refused with reason BadToken.
//
// Liveness: once admitted, a client gets a Server_Keepalive every second
// and echoes it at once; the host keeps a smoothed round trip per player
// (shown in the player list) and drops a client it has heard nothing from
// for the timeout (default 30 s) with reason Timeout. A client that hears
// nothing from the host for as long gives up the same way.
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
//	+-------------------+----------------------------+----------------------+
//	| hdrLen: uint32 BE | WorldHeader (msgpack)      | blobs, back to back  |
//	+-------------------+----------------------------+----------------------+
//
// WorldHeader names the faction, the snapshot tick, each blob's size and
// xxhash64, the host's state hashes at the snapshot tick, and the per-map
// commands queued since the snapshot. The blobs are the gzip-compressed
// world state followed by each map's gzip-compressed state, in header
// order.
package wire
