package snapshot

import (
	"bytes"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// TranscodeWindow is the largest zstd window Transcode inflates with: 8
// MiB, the window of zstd's levels up to 19, eight times the frames
// Compress writes. A frame that asks for more is refused
// (ErrTooLarge) rather than given the memory.
const TranscodeWindow = 8 << 20

// Transcode returns p with every blob recompressed with c, maps in
// parallel on up to workers goroutines (0 means GOMAXPROCS): the same
// join point for joiners that do not read p's codec, made without the
// state p was built from. Blobs already of c's codec are shared, not
// copied.
//
// maxRaw, when not 0, bounds the raw bytes p's blobs declare in all; it
// is checked before anything is inflated. Each blob is streamed from its
// decompressor into the compressor, never held raw, and refused as soon
// as it inflates past its declared raw size: a transcode holds the
// compressed copy and the codecs' windows, whatever the blobs declare.
func Transcode(p *Point, c Compression, workers int, maxRaw uint64) (*Point, error) {
	if maxRaw > 0 {
		if raw := p.RawSize(); raw > maxRaw {
			return nil, fmt.Errorf("the blobs declare %d raw bytes in all, over the limit of %d: %w", raw, maxRaw, ErrTooLarge)
		}
	}
	out := &Point{Tick: p.Tick, WorldHash: p.WorldHash, Maps: make([]MapPoint, len(p.Maps))}
	var err error
	if out.World, err = recompress(p.World, c); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	err = eachMap(p.Maps, workers, func(i int, m MapPoint) error {
		var err error
		m.Blob, err = recompress(m.Blob, c)
		out.Maps[i] = m
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Compressed = 1 + len(p.Maps)
	return out, nil
}

// recompress is b with c's codec: b itself when it already is. b is
// inflated as a stream into c's compressor, at most its declared raw
// size.
func recompress(b Blob, c Compression) (Blob, error) {
	if b.Codec == c.Codec {
		return b, nil
	}
	if xxhash.Sum64(b.Data) != b.Hash {
		return Blob{}, ErrHashMismatch
	}
	limit, err := blobLimit(b.RawSize, 0)
	if err != nil {
		return Blob{}, err
	}
	in, ok := codecs[b.Codec]
	if !ok {
		return Blob{}, fmt.Errorf("decompress: unknown %s", b.Codec)
	}
	zr, release, err := in.reader(bytes.NewReader(b.Data), min(limit, TranscodeWindow))
	if err != nil {
		return Blob{}, fmt.Errorf("decompress %s: %w", b.Codec, err)
	}
	defer release()
	var dst bytes.Buffer
	zw, err := streamWriter(&dst, c, b.RawSize)
	if err != nil {
		return Blob{}, err
	}
	n, err := io.Copy(zw, io.LimitReader(zr, limit+1))
	switch {
	case err != nil && in.tooLarge(err):
		return Blob{}, fmt.Errorf("decompress %s: %v: %w", b.Codec, err, ErrTooLarge)
	case err != nil:
		return Blob{}, fmt.Errorf("transcode %s to %s: %w", b.Codec, c, err)
	case n > limit:
		return Blob{}, fmt.Errorf("decompressed data %w of %d bytes", ErrTooLarge, limit)
	case uint64(n) != b.RawSize:
		return Blob{}, fmt.Errorf("decompress: got %d bytes, header says %d", n, b.RawSize)
	}
	if err := zw.Close(); err != nil {
		return Blob{}, fmt.Errorf("compress %s: %w", c, err)
	}
	return newBlob(c.Codec, bytes.Clone(dst.Bytes()), b.RawSize), nil
}

// streamWriter is a compressor of c writing to dst raw bytes, with the
// settings Compress uses. A zstd frame states its content size, as
// Compress's do, so that a joiner inflates it as one buffer of that size
// and never needs a window larger than the blob.
func streamWriter(dst io.Writer, c Compression, raw uint64) (io.WriteCloser, error) {
	switch c.Codec {
	case Gzip:
		return gzip.NewWriterLevel(dst, c.level())
	case Zstd:
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(c.level())),
			zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false),
			zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
		enc.ResetContentSize(dst, int64(raw))
		return enc, nil
	}
	return nil, fmt.Errorf("compress: unknown %s", c.Codec)
}
