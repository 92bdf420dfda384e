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
//	2  Client_Username    {name, passwordProof}
//	3  Client_WorldReady  {tick, worldHash}
//	4  Client_Command     {mapID, kind, payload}               payload <= MaxCommandPayload
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
//
// # Flow
//
//	client                                   host
//	Client_Protocol        ------------->    mismatch: Disconnect(Protocol)
//	                       <-------------    Server_ModList
//	Client_Defs            ------------->    any non-OK: Disconnect(Defs, statuses)
//	                       <-------------    Server_DefsOK
//	Client_Username        ------------->    empty: ignored; bad: Disconnect(Username*)
//	                       <-------------    Server_Notice (joined, to all), Server_PlayerList (to all)
//	                       <-------------    Server_WorldData chunks ... interleaved with Server_Tick
//	                       <-------------    Server_PlayerList (List)
//	(load, catch up)
//	Client_WorldReady      ------------->    player is Playing
//	Client_Command         ------------->    stamped, broadcast in Server_Tick
//
// A packet that is not allowed in the current phase ends the connection
// with reason BadPacket. Every phase before Playing runs under a deadline.
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
