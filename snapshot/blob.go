package snapshot

import (
	"errors"

	"github.com/cespare/xxhash/v2"
)

// Blob is one compressed piece of state.
type Blob struct {
	// Data is the compressed stream.
	Data []byte
	// RawSize is the size of the decompressed state.
	RawSize uint64
	// Hash is the xxhash64 of Data.
	Hash uint64
	// Codec is how Data is compressed.
	Codec Codec
}

func newBlob(c Codec, data []byte, raw uint64) Blob {
	return Blob{Data: data, RawSize: raw, Hash: xxhash.Sum64(data), Codec: c}
}

// ErrHashMismatch reports a blob whose bytes do not match its hash.
var ErrHashMismatch = errors.New("blob hash mismatch")

// ErrTooLarge reports data beyond a size limit.
var ErrTooLarge = errors.New("exceeds size limit")
