// Package wire is the lockhost network protocol: frame layout, packet IDs,
// packet bodies, disconnect reasons and the chunking of large payloads.
// It holds no connection state; the host and join packages drive the flow.
//
// The protocol's specification is docs/protocol.md at the top of the
// repository: one document, enough on its own to write a client in any
// language (every packet with every key, its msgpack type and limit, the
// enumerations, the handshake, the world payload, the hashes, the rules a
// client must keep, the UDP status query, and example frames byte for
// byte). This package's tests hold that document to the code: the packet
// table and every key's type to the registry and the packet types, the
// limits and enumerations to the constants, and each example frame to
// what Marshal writes. A change to a packet changes the document in the
// same commit, and ProtocolVersion with it.
//
// In short: every message is a frame, a uint32 big-endian length (of the
// ID byte and the body), the packet ID (client packets below
// FirstServerID, host packets from it) and a msgpack map with one-letter
// keys (see Marshal, Decode and the registry in registry.go). A reader
// checks the length against its limit before reading the body
// (FrameReader). The world is sent as one payload in Server_WorldData
// chunks of at most MaxChunkData bytes (package snapshot lays it out).
package wire
