// Package snapshot turns a simulation's state into what a joining client
// downloads, and back: gzip-compressed world and map blobs with integrity
// hashes, the join point that groups them with the commands queued since,
// the payload layout those travel in, and its chunking and reassembly under
// a size limit.
//
// # Payload layout
//
// A join point travels as one payload, split into chunks of at most
// wire.MaxChunkData bytes:
//
//	+-------------------+--------------------+-------------------------------+
//	| hdrLen: uint32 BE | Header (msgpack)   | world blob, map blobs in      |
//	| <= MaxHeader      |                    | header order, back to back    |
//	+-------------------+--------------------+-------------------------------+
//
// The Header names the faction, the snapshot tick, each blob's compressed
// size, raw size and xxhash64 (of the compressed bytes), the host's state
// hash of each map and of the world at that tick, and the per-map commands
// queued since the snapshot. Blob bytes are never inside msgpack, so no
// large byte field is ever decoded by the msgpack library.
//
// A receiver checks the declared total against its limit before accepting
// the first chunk, accepts only the next expected offset, checks every blob
// hash before decompressing it, and decompresses through a limit of the
// declared raw size.
package snapshot
