package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
)

// DefaultLevel is the gzip level used for snapshots. Measured on a 61 MiB
// colony world (one core, klauspost/compress; scripts/bench-join -levels):
// level 4 compresses to 16.2% in 427 ms, level 6 to 15.3% in 630 ms, level
// 3 to 18.2% in 431 ms, level 9 to 13.1% in 30 s; inflating takes about
// the same at every level (290 ms). Level 4 is within 6% of level 6's size
// for two thirds of its CPU.
const DefaultLevel = 4

// Blob is one compressed piece of state.
type Blob struct {
	// Data is the gzip stream.
	Data []byte
	// RawSize is the size of the decompressed state.
	RawSize uint64
	// Hash is the xxhash64 of Data.
	Hash uint64
}

var writerPools sync.Map // level -> *sync.Pool of *gzip.Writer

func getWriter(level int, w io.Writer) (*gzip.Writer, error) {
	p, _ := writerPools.LoadOrStore(level, &sync.Pool{})
	if zw, ok := p.(*sync.Pool).Get().(*gzip.Writer); ok {
		zw.Reset(w)
		return zw, nil
	}
	return gzip.NewWriterLevel(w, level)
}

func putWriter(level int, zw *gzip.Writer) {
	p, _ := writerPools.Load(level)
	p.(*sync.Pool).Put(zw)
}

// Compress gzips raw at the given level (DefaultLevel when 0 is not wanted:
// pass gzip.NoCompression explicitly for none).
func Compress(raw []byte, level int) (Blob, error) {
	var buf bytes.Buffer
	buf.Grow(len(raw)/4 + 64)
	zw, err := getWriter(level, &buf)
	if err != nil {
		return Blob{}, fmt.Errorf("gzip level %d: %w", level, err)
	}
	if _, err := zw.Write(raw); err != nil {
		return Blob{}, fmt.Errorf("compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return Blob{}, fmt.Errorf("compress: %w", err)
	}
	putWriter(level, zw)
	data := buf.Bytes()
	return Blob{Data: data, RawSize: uint64(len(raw)), Hash: xxhash.Sum64(data)}, nil
}

// ErrHashMismatch reports a blob whose bytes do not match its hash.
var ErrHashMismatch = errors.New("blob hash mismatch")

// ErrTooLarge reports data beyond a size limit.
var ErrTooLarge = errors.New("exceeds size limit")
