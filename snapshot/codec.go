package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Codec names how a blob is compressed. Its number is carried by every
// blob in a payload header (BlobInfo.Codec, absent for Gzip) and listed by
// a joiner in the codecs it reads. A new codec is a new constant here, its
// entry in codecs and its place in Readable, and its line in the wire
// spec's section 8.1 (TestSpecNamesEveryCodec holds the two together);
// nothing else: joiners announce what Readable lists, the host offers it
// to joiners that list it (Choose), and its name and level are what the
// host's configuration and tools parse (ParseCompression).
type Codec uint8

// The codecs. Gzip is the zero value: every joiner reads it, and a header
// from before codecs were named means it.
const (
	// Gzip is RFC 1952 gzip (klauspost/compress/gzip).
	Gzip Codec = 0
	// Zstd is a Zstandard frame (klauspost/compress/zstd), several times
	// faster to inflate than gzip for about the same size.
	Zstd Codec = 1
)

// Default level of each codec, chosen by measurement (scripts/bench-join
// -levels, one core, on the colony worlds the benchmarks use).
const (
	// DefaultLevel is gzip's: on a 61 MiB colony world level 4
	// compresses to 16.2% in 427 ms, level 6 to 15.3% in 630 ms, level 3
	// to 18.2% in 431 ms, level 9 to 13.1% in 30 s; inflating takes
	// about the same at every level (290 ms). Level 4 is within 6% of
	// level 6's size for two thirds of its CPU.
	DefaultLevel = 4
	// DefaultZstdLevel is zstd's, in zstd's own numbering (klauspost/
	// compress maps 1-2, 3-5, 6-9 and 10+ to its four speeds). Measured
	// on the 64 MiB colony world against gzip level 4 (scripts/bench-join
	// -levels, one core, fastest of three on a busy machine): level 1 is
	// 1.13x gzip's size, level 3 1.02x, level 6 0.96x for 0.6x gzip's
	// build time, level 10 0.86x for 4.6x its build time; every zstd
	// level inflates several times faster than gzip. Level 6 is the
	// fastest that sends no more bytes than gzip did.
	DefaultZstdLevel = 6
)

// codecImpl is what a codec supplies: compressing a whole buffer, and a
// reader that inflates a stream (release returns it to its pool).
type codecImpl struct {
	name         string
	defaultLevel int
	levels       [2]int // the lowest and highest level its library takes
	compress     func(raw []byte, level int) ([]byte, error)
	// reader inflates src, which may ask for no more memory than
	// limit (the blob's output bound) needs.
	reader func(src io.Reader, limit int64) (r io.Reader, release func(), err error)
	// tooLarge reports an error of the reader that means the stream
	// asked for more than limit.
	tooLarge func(error) bool
	// whole, when set, inflates a blob held in memory straight into one
	// buffer of its declared raw size, when the stream names that same
	// size and it is at most capLimit; ok false means it did not try (the
	// caller streams the blob through reader instead).
	// dst's storage is used when it holds raw bytes.
	whole func(src []byte, raw uint64, capLimit int64, dst []byte) (out []byte, ok bool, err error)
}

var codecs = map[Codec]codecImpl{
	Gzip: {name: "gzip", defaultLevel: DefaultLevel, levels: [2]int{gzip.StatelessCompression, gzip.BestCompression},
		compress: gzipCompress, reader: gzipReader,
		tooLarge: func(error) bool { return false }},
	Zstd: {name: "zstd", defaultLevel: DefaultZstdLevel, levels: [2]int{1, 22}, compress: zstdCompress, reader: zstdReader, whole: zstdWhole,
		tooLarge: func(err error) bool {
			return errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded)
		}},
}

// String is the codec's name: "gzip", "zstd".
func (c Codec) String() string {
	if impl, ok := codecs[c]; ok {
		return impl.name
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// Known reports whether this build reads and writes c.
func (c Codec) Known() bool {
	_, ok := codecs[c]
	return ok
}

// ParseCodec returns the codec named name ("gzip", "zstd").
func ParseCodec(name string) (Codec, error) {
	for c, impl := range codecs {
		if impl.name == name {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown compression %q (want %s)", name, CodecNames())
}

// CodecNames lists the codecs this build writes, the fastest to inflate
// first, for help and error texts: "zstd or gzip".
func CodecNames() string {
	names := make([]string, 0, len(codecs))
	for _, c := range Readable() {
		names = append(names, c.String())
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ParseCompression reads a codec and an optional level, as String writes
// them: "zstd", "gzip:6". A missing or 0 level is the codec's default;
// another must be one the codec's library takes.
func ParseCompression(s string) (Compression, error) {
	name, level, hasLevel := strings.Cut(s, ":")
	codec, err := ParseCodec(name)
	if err != nil {
		return Compression{}, err
	}
	c := Compression{Codec: codec}
	if hasLevel {
		if c.Level, err = strconv.Atoi(level); err != nil {
			return Compression{}, fmt.Errorf("compression %q: the level after %q must be a whole number", s, name+":")
		}
		if r := codecs[codec].levels; c.Level != 0 && (c.Level < r[0] || c.Level > r[1]) {
			return Compression{}, fmt.Errorf("compression %q: %s levels run from %d to %d", s, name, r[0], r[1])
		}
	}
	return c, nil
}

// Readable lists every codec this build inflates, the fastest first: what
// a joiner announces to the host.
func Readable() []Codec { return []Codec{Zstd, Gzip} }

// Choose is the codec the host uses for a joiner that reads offered:
// want if the joiner lists it, else Gzip, which every joiner reads.
func Choose(want Codec, offered []Codec) Codec {
	for _, c := range offered {
		if c == want && want.Known() {
			return want
		}
	}
	return Gzip
}

// Compression is a codec and its level; the zero value is gzip at
// DefaultLevel.
type Compression struct {
	Codec Codec
	// Level in the codec's own numbering; 0 means its default level.
	Level int
}

// level is the level to use: Level, or the codec's default.
func (c Compression) level() int {
	if c.Level != 0 {
		return c.Level
	}
	return codecs[c.Codec].defaultLevel
}

// String names the codec and its level, for logs.
func (c Compression) String() string { return fmt.Sprintf("%s:%d", c.Codec, c.level()) }

// Compress compresses raw into a blob named with c's codec.
func Compress(raw []byte, c Compression) (Blob, error) {
	impl, ok := codecs[c.Codec]
	if !ok {
		return Blob{}, fmt.Errorf("compress: unknown %s", c.Codec)
	}
	data, err := impl.compress(raw, c.level())
	if err != nil {
		return Blob{}, fmt.Errorf("compress %s: %w", c, err)
	}
	if cap(data) > len(data)+len(data)/2 {
		// A blob that compressed much better than the estimate lives as
		// long as its join point: do not keep the slack. (Copying every
		// blob would make as much garbage again as the point's size.)
		data = bytes.Clone(data)
	}
	return newBlob(c.Codec, data, uint64(len(raw))), nil
}

var gzipWriters sync.Map // level -> *sync.Pool of *gzip.Writer

func gzipCompress(raw []byte, level int) ([]byte, error) {
	p, _ := gzipWriters.LoadOrStore(level, &sync.Pool{})
	pool := p.(*sync.Pool)
	dst := bytes.NewBuffer(make([]byte, 0, len(raw)/4+64))
	zw, _ := pool.Get().(*gzip.Writer)
	if zw == nil {
		var err error
		if zw, err = gzip.NewWriterLevel(dst, level); err != nil {
			return nil, err
		}
	} else {
		zw.Reset(dst)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	pool.Put(zw)
	return dst.Bytes(), nil
}

var gzipReaders sync.Pool // *gzip.Reader

func gzipReader(src io.Reader, _ int64) (io.Reader, func(), error) {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(src)
	} else {
		err = zr.Reset(src)
	}
	if err != nil {
		return nil, nil, err
	}
	zr.Multistream(false)
	return zr, func() { gzipReaders.Put(zr) }, nil
}

var zstdEncoders sync.Map // level -> *sync.Pool of *zstd.Encoder

func zstdCompress(raw []byte, level int) ([]byte, error) {
	p, _ := zstdEncoders.LoadOrStore(level, &sync.Pool{})
	pool := p.(*sync.Pool)
	z, _ := pool.Get().(*zstdEncoder)
	if z == nil {
		z = &zstdEncoder{}
		var err error
		// One goroutine per encoder: Build already compresses maps in
		// parallel. No frame checksum: every blob carries an xxhash64.
		// A 1 MiB window and the library's lower-memory tables: at level
		// 6 an encoder allocated 24 MiB to compress a 3.2 MiB map, 10 MiB
		// with these, for the same size (0.1% smaller) in the same time,
		// and a host builds on every core at once. A reader of a stream
		// then needs a 1 MiB window, not one as large as the blob.
		z.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
			zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false),
			zstd.WithWindowSize(zstdWindow), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
	}
	// Into the encoder's scratch buffer, then copied out at its exact
	// size: a join point keeps its blobs for as long as it lives, and a
	// buffer sized by a guess of the ratio kept 20% slack, or made as
	// much garbage again when cut to size.
	z.buf = z.enc.EncodeAll(raw, z.buf[:0])
	out := bytes.Clone(z.buf)
	pool.Put(z)
	return out, nil
}

// zstdEncoder is a pooled encoder and the scratch buffer it compresses
// into.
type zstdEncoder struct {
	enc *zstd.Encoder
	buf []byte
}

// zstdWindow is the window of the frames Compress writes.
const zstdWindow = 1 << 20

var zstdDecoders sync.Pool // *zstd.Decoder

// zstdReader inflates src on the caller's goroutine, refusing a frame
// whose window is larger than the blob may be (limit), so a hostile
// frame cannot make the decoder allocate more than the blob's own bound.
// The frames Compress writes have a window of zstdWindow, or of their
// content size when that is smaller (single-segment).
func zstdReader(src io.Reader, limit int64) (io.Reader, func(), error) {
	// zstd's smallest windows are 1 KiB, and a frame of at most 1 KiB
	// may state 2 KiB (the library writes 2 KiB for exactly 1 KiB).
	window := zstd.WithDecoderMaxWindow(uint64(max(limit, 2*zstd.MinWindowSize)))
	zr, _ := zstdDecoders.Get().(*zstd.Decoder)
	var err error
	if zr == nil {
		// Concurrency 1 decodes synchronously on the caller's goroutine;
		// the joiner already inflates several blobs at once.
		zr, err = zstd.NewReader(src, zstd.WithDecoderConcurrency(1), window)
	} else {
		err = zr.ResetWithOptions(src, window)
	}
	if err != nil {
		return nil, nil, err
	}
	return zr, func() { _ = zr.Reset(nil); zstdDecoders.Put(zr) }, nil
}

// zstdWholeDecoders keeps DecodeAll decoders (bounded by their buffer's
// capacity) for reuse: a channel rather than a sync.Pool, which the
// garbage collector empties, since a join inflates a world's maps while
// collections run every few hundred milliseconds, and a new decoder
// costs a third as much again as the map it inflates. An idle decoder
// holds a few small buffers; at most one per core is kept.
var zstdWholeDecoders = make(chan *zstd.Decoder, runtime.GOMAXPROCS(0))

// zstdWhole inflates a frame that states its content size, when that size
// is the blob's declared raw size and at most capLimit, with DecodeAll into
// a buffer of exactly that size (dst's storage when it holds that much):
// DecodeAll keeps its history in the output, so the blob is allocated at
// most once, where a streaming decoder would also hold a window as large
// as the blob. The decoder refuses to write past the buffer's capacity, so
// a frame lying about its size, or a second frame, is an error, never a
// larger allocation.
func zstdWhole(src []byte, raw uint64, capLimit int64, dst []byte) ([]byte, bool, error) {
	var h zstd.Header
	if err := h.Decode(src); err != nil || !h.HasFCS || h.FrameContentSize != raw || raw > uint64(capLimit) {
		return nil, false, nil
	}
	var zr *zstd.Decoder
	select {
	case zr = <-zstdWholeDecoders:
	default:
		var err error
		zr, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxWindow(zstd.MaxWindowSize))
		if err != nil {
			return nil, true, err
		}
	}
	defer func() {
		select {
		case zstdWholeDecoders <- zr:
		default: // enough kept
		}
	}()
	if uint64(cap(dst)) < h.FrameContentSize {
		dst = make([]byte, 0, h.FrameContentSize)
	}
	// The capacity bounds what DecodeAll writes (WithDecodeAllCapLimit):
	// a reused buffer larger than the blob is cut to the blob's size.
	out, err := zr.DecodeAll(src, dst[:0:h.FrameContentSize])
	if err != nil {
		return nil, true, err
	}
	if len(out) > 0 && &out[0] == &dst[:1][0] {
		out = dst[:len(out)] // the buffer's whole room, for the caller's next blob
	}
	return out, true, nil
}

// Inflate inflates data, one gzip member or zstd frame of codec c (section
// 8.1 of the protocol; only the first member is read), refusing more than
// limit bytes of output. It is for compressed data that
// is not a world blob (a held-world rejoin's replay), whose inflated size
// is not declared ahead.
func Inflate(c Codec, data []byte, limit int64) ([]byte, error) {
	impl, ok := codecs[c]
	if !ok {
		return nil, fmt.Errorf("inflate: unknown %s", c)
	}
	r, release, err := impl.reader(bytes.NewReader(data), limit)
	if err != nil {
		return nil, fmt.Errorf("inflate %s: %w", c, err)
	}
	defer release()
	out, err := io.ReadAll(io.LimitReader(r, limit+1))
	switch {
	case err != nil && impl.tooLarge(err):
		return nil, fmt.Errorf("inflate %s: more than %d bytes: %w", c, limit, ErrTooLarge)
	case err != nil:
		return nil, fmt.Errorf("inflate %s: %w", c, err)
	case int64(len(out)) > limit:
		return nil, fmt.Errorf("inflate %s: more than %d bytes: %w", c, limit, ErrTooLarge)
	}
	return out, nil
}
