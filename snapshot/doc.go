// Package snapshot turns a simulation's state into what a joining client
// downloads, and back: compressed world and map blobs with integrity
// hashes, each naming its codec (codec.go: gzip or zstd; a new codec is a
// change to that file alone, plus the host's choice of it for a joiner),
// the join point that groups them with the commands queued since, the
// payload layout those travel in, and its chunking and reassembly under a
// size limit.
//
// # Payload layout
//
// A join point travels as one payload, split into chunks of at most
// wire.MaxChunkData bytes:
//
//	+-------------------+--------------------+------------------+---------------------------+
//	| hdrLen: uint32 BE | hdrHash: uint64 BE | Header (msgpack) | world blob, map blobs in  |
//	| <= MaxHeader      | xxhash64 of Header |                  | header order, back to back|
//	+-------------------+--------------------+------------------+---------------------------+
//
// The Header names the faction, the snapshot tick, the grant at
// admission, each blob's codec, compressed size, raw size and xxhash64 (of
// the compressed bytes), the host's state hash of each map and of the world at
// that tick, and the per-map commands queued since the snapshot. Every
// byte of the transfer is therefore covered by a hash: the header by the
// prefix, each blob by the header. Blob bytes are never inside msgpack, so
// no large byte field is ever decoded by the msgpack library.
//
// A Receiver checks the declared total against its limit before accepting
// the first chunk, accepts only the next expected offset, checks the
// header's hash and that the blob sizes add up to the total as soon as the
// header is complete, and hands out each blob the moment its last byte
// arrives, so decompression overlaps the download. Decompress checks every
// blob's hash first and inflates through a limit of the declared raw size.
//
// # Loading
//
// # Building
//
// Every payload is built by Build with BuildOptions: a join point (every
// map, reusing the previous point's unchanged blobs), a repair (the maps
// to repair, Maps), a save and a new world written by the tools. Maps are
// encoded and compressed in parallel, each worker holding one map's raw
// bytes at a time. Transcode makes a point's copy in another codec from
// its blobs, for joiners that do not read the first.
//
// Every loader of state goes through this package, so the limits are
// applied in one place: a join's download, a desync repair, a save and
// the tools. Limits holds the per-blob and whole-world raw-size bounds;
// CheckBlob refuses a blob's declared size before it is inflated. One
// inflate core serves Decompress (a blob in memory, hash checked first)
// and InflateFrom (a blob streamed from a file, hashed as it is read, so
// it is never held whole). An Assembly hands the inflated blobs to the
// game's lockstep.Loader all at once or to its lockstep.MapLoader map by
// map, and checks the result against the header's tick and hashes;
// Header.LoadBlobs drives it blob by blob, and the join download drives it
// from several goroutines.
package snapshot
