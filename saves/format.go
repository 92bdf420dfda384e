package saves

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/internal/atomicfile"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// Meta describes a save.
type Meta struct {
	GameName    string       `codec:"g"`
	GameVersion string       `codec:"v"`
	Mods        []string     `codec:"m"`
	Databases   []DefSummary `codec:"d"` // type, count, hash per def database
	Tick        uint64       `codec:"t"` // the session's tick when saved (>= the snapshot's tick)
	Created     int64        `codec:"c"` // unix seconds
}

// DefSummary is one def database of the saved session.
type DefSummary struct {
	Type  string `codec:"t"`
	Count int32  `codec:"c"`
	Hash  uint64 `codec:"h"`
}

const (
	// Magic opens every save file.
	Magic = "LOCKSAVE"
	// FormatVersion is the layout this package writes and the newest it
	// reads.
	FormatVersion = 1
	// Ext is the file name extension of saves.
	Ext = ".lhsave"
	// MaxMeta bounds the encoded meta.
	MaxMeta = 16 << 20

	// prefixLen is the fixed prefix: magic, version, flags, total length,
	// meta length.
	prefixLen = 8 + 2 + 2 + 8 + 4
	// sumLen is the trailing checksum.
	sumLen = 8
	// payloadPrefix is the snapshot payload's own prefix: header length
	// and header hash.
	payloadPrefix = 4 + 8
	// writeChunk is the most bytes of the body written at once.
	writeChunk = 1 << 20
)

// Offsets of the prefix fields.
const (
	offVersion = 8
	offFlags   = 10
	offTotal   = 12
	offMetaLen = 20
)

// Errors of Read. A truncated file matches both ErrTruncated and
// ErrDamaged.
var (
	ErrDamaged   = errors.New("save file damaged")
	ErrTruncated = errors.New("save file truncated")
	ErrVersion   = errors.New("save file from a newer version")
	// ErrNotSave: the file does not start as a save does. It matches
	// ErrDamaged too.
	ErrNotSave = errors.New("not a lockhost save")
)

// testHookWrite, when set, is called before each body chunk is written
// with the chunk's index; an error aborts the write. Tests only.
var testHookWrite func(n int) error

// Write saves atomically (package internal/atomicfile): meta and the body, which is a join
// point laid out by snapshot.NewPayload (world and map blobs compressed,
// per-map commands since the snapshot, Granted = meta.Tick). It streams
// the body's chunks and never builds the whole file in memory.
func Write(path string, meta Meta, body *snapshot.Payload) error {
	if err := write(path, meta, body); err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	return nil
}

func write(path string, meta Meta, body *snapshot.Payload) error {
	if body == nil {
		return errors.New("no body")
	}
	hdr, err := payloadHeader(body)
	if err != nil {
		return err
	}
	if meta.Tick < hdr.Tick {
		return fmt.Errorf("meta tick %d is before the snapshot's tick %d", meta.Tick, hdr.Tick)
	}
	if hdr.Granted != meta.Tick {
		return fmt.Errorf("body grants tick %d, meta says the session is at tick %d", hdr.Granted, meta.Tick)
	}
	mb, err := codec.Encode(&meta)
	if err != nil {
		return fmt.Errorf("encode meta: %w", err)
	}
	if len(mb) > MaxMeta {
		return fmt.Errorf("meta of %d bytes over the %d limit", len(mb), MaxMeta)
	}
	bodyLen := body.Total()
	total := uint64(prefixLen) + uint64(len(mb)) + bodyLen + sumLen
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		sum := xxhash.New()
		out := io.MultiWriter(bw, sum)
		prefix := make([]byte, 0, prefixLen)
		prefix = append(prefix, Magic...)
		prefix = binary.BigEndian.AppendUint16(prefix, FormatVersion)
		prefix = binary.BigEndian.AppendUint16(prefix, 0)
		prefix = binary.BigEndian.AppendUint64(prefix, total)
		prefix = binary.BigEndian.AppendUint32(prefix, uint32(len(mb)))
		if _, err := out.Write(prefix); err != nil {
			return err
		}
		if _, err := out.Write(mb); err != nil {
			return err
		}
		for off, i := uint64(0), 0; off < bodyLen; i++ {
			c := body.Chunk(off, writeChunk)
			if len(c) == 0 {
				return fmt.Errorf("body ended at byte %d of %d", off, bodyLen)
			}
			if testHookWrite != nil {
				if err := testHookWrite(i); err != nil {
					return err
				}
			}
			if _, err := out.Write(c); err != nil {
				return err
			}
			off += uint64(len(c))
		}
		if _, err := bw.Write(binary.BigEndian.AppendUint64(nil, sum.Sum64())); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// payloadHeader decodes the header of a payload from its first segment.
func payloadHeader(body *snapshot.Payload) (*snapshot.Header, error) {
	c := body.Chunk(0, math.MaxInt)
	if len(c) < payloadPrefix {
		return nil, errors.New("body too short for a snapshot payload")
	}
	n := uint64(binary.BigEndian.Uint32(c))
	if n > uint64(len(c)-payloadPrefix) {
		return nil, errors.New("body's header is not in its first segment")
	}
	hb := c[payloadPrefix : payloadPrefix+n]
	if xxhash.Sum64(hb) != binary.BigEndian.Uint64(c[4:]) {
		return nil, errors.New("body's header hash mismatch")
	}
	h := &snapshot.Header{}
	if err := codec.Decode(hb, h); err != nil {
		return nil, fmt.Errorf("body's header: %w", err)
	}
	return h, nil
}

// File is a save that was read and validated. It holds the meta and the
// body's header, not the blobs: Load reads those from Path again, one at
// a time, checking each against its hash.
type File struct {
	Meta Meta
	// Header is the body's snapshot header: tick, grant, blob sizes and
	// hashes, state hashes and the commands since the snapshot.
	Header snapshot.Header
	// Path is the file that was read; Size its length in bytes.
	Path string
	Size int64
	// blobs are where the world and map blobs lie in the file, world
	// first, then maps in header order.
	blobs []blobAt
}

// blobAt is one blob's place in the file.
type blobAt struct {
	off  int64
	info snapshot.BlobInfo
}

// readError is an error of Read: a message and the sentinels it matches.
type readError struct {
	msg   string
	kinds []error
}

func (e *readError) Error() string   { return e.msg }
func (e *readError) Unwrap() []error { return e.kinds }

func damaged(path, format string, args ...any) error {
	return &readError{
		msg:   fmt.Sprintf("%s: %s: %s", path, ErrDamaged, fmt.Sprintf(format, args...)),
		kinds: []error{ErrDamaged},
	}
}

func truncated(path, format string, args ...any) error {
	return &readError{
		msg:   fmt.Sprintf("%s: %s: %s", path, ErrTruncated, fmt.Sprintf(format, args...)),
		kinds: []error{ErrTruncated, ErrDamaged},
	}
}

// Read reads and validates a save completely before returning it: magic,
// format version, declared lengths against the file size, the trailing
// checksum, the meta, the body's structure and every blob's hash. On
// damage the error names the damaged part ("header", "meta", "world
// data", "map <id> data", "command list", "checksum") with byte offsets,
// and wraps ErrDamaged, ErrTruncated (with ErrDamaged) or ErrVersion.
//
// Read streams the body through the hashes: its memory is the meta and
// the body's header (each checked against the file size, the header
// against its hash before it is held) plus a fixed buffer, whatever the
// file's size.
func Read(path string) (*File, error) {
	return open(path, true)
}

// ReadHeader reads and checks what Read does up to and including the
// body's header (prefix, meta, the header's hash and blob sizes) without
// reading the blobs or the checksum: for listings, in time and memory
// independent of the file's size. A file it accepts may still be damaged
// further on.
func ReadHeader(path string) (*File, error) {
	return open(path, false)
}

func open(path string, full bool) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open save: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("open save: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("open save: %s is not a regular file", path)
	}
	return read(path, f, st.Size(), full)
}

// source is a save being read: from its start, and at offsets.
type source interface {
	io.Reader
	io.ReaderAt
}

// ReadFrom is Read for a save of size bytes held by r rather than in a
// file (a recording's start save in the browser, say); name stands for
// the path in errors. LoadFrom loads the File it returns.
func ReadFrom(name string, r io.ReaderAt, size int64) (*File, error) {
	return read(name, io.NewSectionReader(r, 0, size), size, true)
}

// streamBuf is the most bytes Read holds of a blob at once.
const streamBuf = 256 << 10

// read reads and checks the save f of size bytes, as the package doc
// lists; with full it also streams every blob through its hash and the
// checksum, else it stops after the body's header.
func read(path string, f source, size int64, full bool) (*File, error) {
	prefix, total, metaLen, err := readPrefix(path, f, size, full)
	if err != nil {
		return nil, err
	}
	r := &saveReader{path: path, f: f, size: size, full: full, total: total,
		metaLen: metaLen, bodyStart: prefixLen + metaLen, sum: xxhash.New()}
	r.bodyLen = total - r.bodyStart - sumLen
	r.sum.Write(prefix)

	// Every length so far is within the file. The meta is at most MaxMeta.
	meta, err := r.meta()
	if err != nil {
		return nil, err
	}
	h, blobs, err := r.header()
	if err != nil {
		return nil, err
	}
	file := &File{Meta: meta, Header: h, Path: path, Size: size, blobs: blobs}
	if !full {
		return file, file.consistent()
	}
	if err := file.verify(f, r.buf, r.sum, total, r.bodyStart, r.readErr); err != nil {
		return nil, err
	}
	return file, nil
}

// saveReader is one read of a save after its prefix: where the parts
// lie, the file's checksum of the bytes read so far, and the buffer
// that streams them.
type saveReader struct {
	path      string
	f         source
	size      int64
	full      bool
	total     uint64 // the file's length, as its prefix declares
	metaLen   uint64
	bodyStart uint64 // where the meta ends
	bodyLen   uint64
	sum       *xxhash.Digest
	buf       []byte // streamBuf bytes, once the body's header length is known good
}

// shrank is the error for a file that ends before the length it declares.
func (r *saveReader) shrank() error {
	return truncated(r.path, "the file ends before byte %d it declares (it shrank while being read)", r.total)
}

// readErr is the error for a failed read of the file.
func (r *saveReader) readErr(err error) error {
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		return r.shrank()
	}
	return fmt.Errorf("read save %s: %w", r.path, err)
}

// meta reads and decodes the meta. When it does not decode and the meta
// length field is what is wrong, the error says so.
func (r *saveReader) meta() (Meta, error) {
	var meta Meta
	metaBytes := make([]byte, r.metaLen)
	if _, err := io.ReadFull(r.f, metaBytes); err != nil {
		return meta, r.readErr(err)
	}
	r.sum.Write(metaBytes)
	if err := codec.Decode(metaBytes, &meta); err != nil {
		if n, ok := naturalMetaLen(r.f, r.size); ok && uint64(n) != r.metaLen &&
			(!r.full || sumMatchesWith(r.f, r.size, offMetaLen, binary.BigEndian.AppendUint32(nil, uint32(n)))) {
			return meta, damaged(r.path, "header: meta length field at byte %d says %d, the meta is %d bytes", offMetaLen, r.metaLen, n)
		}
		return meta, damaged(r.path, "meta (bytes %d..%d): %v", prefixLen, r.bodyStart, err)
	}
	return meta, nil
}

// header reads the body's header and lays out the blobs after it: its
// length is checked against the body, and its bytes against their hash
// before they are held.
func (r *saveReader) header() (snapshot.Header, []blobAt, error) {
	var h snapshot.Header
	var pp [payloadPrefix]byte
	if _, err := io.ReadFull(r.f, pp[:]); err != nil {
		return h, nil, r.readErr(err)
	}
	r.sum.Write(pp[:])
	hdrLen := uint64(binary.BigEndian.Uint32(pp[:]))
	hdrEnd := r.total - sumLen
	if hdrLen <= r.bodyLen-payloadPrefix {
		hdrEnd = r.bodyStart + payloadPrefix + hdrLen
	}
	hdrDamaged := func(format string, args ...any) error {
		return damaged(r.path, "command list and snapshot header (bytes %d..%d): %s", r.bodyStart, hdrEnd, fmt.Sprintf(format, args...))
	}
	if hdrLen == 0 || hdrLen > snapshot.MaxHeader || hdrLen > r.bodyLen-payloadPrefix {
		return h, nil, hdrDamaged("%v: header of %d bytes in a payload of %d", snapshot.ErrMalformed, hdrLen, r.bodyLen)
	}
	r.buf = make([]byte, streamBuf)
	hdrStart := int64(r.bodyStart + payloadPrefix)
	hdrHash := xxhash.New()
	if err := stream(r.f, int64(hdrLen), r.buf, r.sum, hdrHash); err != nil {
		return h, nil, r.readErr(err)
	}
	if hdrHash.Sum64() != binary.BigEndian.Uint64(pp[4:]) {
		return h, nil, hdrDamaged("%v: header hash mismatch", snapshot.ErrMalformed)
	}
	hb := make([]byte, hdrLen)
	if _, err := r.f.ReadAt(hb, hdrStart); err != nil {
		return h, nil, r.readErr(err)
	}
	if xxhash.Sum64(hb) != binary.BigEndian.Uint64(pp[4:]) {
		return h, nil, r.shrank() // changed between the two reads
	}
	if err := codec.Decode(hb, &h); err != nil {
		return h, nil, hdrDamaged("%v: header: %v", snapshot.ErrMalformed, err)
	}
	hb = nil
	blobs, err := layBlobs(&h, hdrEnd, r.bodyLen-payloadPrefix-hdrLen, hdrDamaged)
	if err != nil {
		return h, nil, err
	}
	return h, blobs, nil
}

// readPrefix reads and checks the fixed prefix: magic, version, flags,
// total length against the file size, and the meta length.
func readPrefix(path string, f source, size int64, full bool) (prefix []byte, total, metaLen uint64, err error) {
	prefix = make([]byte, prefixLen)
	n, err := io.ReadFull(f, prefix)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, 0, 0, fmt.Errorf("read save %s: %w", path, err)
	}
	if m := min(n, len(Magic)); string(prefix[:m]) != Magic[:m] {
		// Say nothing of what the file holds instead: it may be anything.
		return nil, 0, 0, &readError{
			msg:   fmt.Sprintf("%s: %s: header: %s (it does not start with %q)", path, ErrDamaged, ErrNotSave, Magic),
			kinds: []error{ErrNotSave, ErrDamaged},
		}
	}
	// A newer format may lay out the rest differently: judge the version
	// as soon as it is there.
	version := binary.BigEndian.Uint16(prefix[offVersion:])
	if n < offVersion+2 {
		version = FormatVersion
	}
	if version > FormatVersion {
		// A version field damaged in a current file still matches its
		// checksum once put back; a genuinely newer file does not.
		if full && sumMatchesWith(f, size, offVersion, binary.BigEndian.AppendUint16(nil, FormatVersion)) {
			return nil, 0, 0, damaged(path, "header: format version field at byte %d reads %d, the file is version %d", offVersion, version, FormatVersion)
		}
		return nil, 0, 0, &readError{
			msg: fmt.Sprintf("%s: %s: it was written by a newer lockhost (save format version %d; this build reads up to version %d)",
				path, ErrVersion, version, FormatVersion),
			kinds: []error{ErrVersion},
		}
	}
	if n < prefixLen {
		return nil, 0, 0, truncated(path, "the file ends at byte %d, inside its %d-byte header", n, prefixLen)
	}
	if version == 0 {
		return nil, 0, 0, damaged(path, "header: format version 0 at byte %d", offVersion)
	}
	flags := binary.BigEndian.Uint16(prefix[offFlags:])
	total = binary.BigEndian.Uint64(prefix[offTotal:])
	metaLen = uint64(binary.BigEndian.Uint32(prefix[offMetaLen:]))
	if flags != 0 {
		return nil, 0, 0, damaged(path, "header: unknown flags %#04x at byte %d", flags, offFlags)
	}
	if total != uint64(size) {
		if full && sumMatchesWith(f, size, offTotal, binary.BigEndian.AppendUint64(nil, uint64(size))) {
			return nil, 0, 0, damaged(path, "header: length field at byte %d says %d bytes, the file has %d", offTotal, total, size)
		}
		if total > uint64(size) {
			return nil, 0, 0, truncated(path, "the file ends at byte %d of %d", size, total)
		}
		return nil, 0, 0, damaged(path, "header: the file has %d bytes after its declared end at byte %d", uint64(size)-total, total)
	}
	if metaLen > MaxMeta {
		return nil, 0, 0, damaged(path, "header: meta length %d at byte %d is over the %d limit", metaLen, offMetaLen, MaxMeta)
	}
	if prefixLen+metaLen+payloadPrefix+sumLen > total {
		return nil, 0, 0, damaged(path, "header: meta length %d at byte %d does not fit in a file of %d bytes", metaLen, offMetaLen, total)
	}
	return prefix, total, metaLen, nil
}

// layBlobs places the world and map blobs h describes in the left bytes
// after the body's header, which ends at hdrEnd; their sizes must add up
// to exactly left. bad reports a damaged header.
func layBlobs(h *snapshot.Header, hdrEnd, left uint64, bad func(format string, args ...any) error) ([]blobAt, error) {
	// The blob sizes must add up to exactly what is left of the body.
	infos := make([]snapshot.BlobInfo, 0, 1+len(h.Maps))
	infos = append(infos, h.World)
	for _, m := range h.Maps {
		infos = append(infos, m.Blob)
	}
	var used uint64
	blobs := make([]blobAt, len(infos))
	for i, bi := range infos {
		if bi.Size > left-used {
			return nil, bad("%v: blob sizes exceed the %d bytes after the header", snapshot.ErrMalformed, left)
		}
		blobs[i] = blobAt{off: int64(hdrEnd + used), info: bi}
		used += bi.Size
	}
	if used != left {
		return nil, bad("%v: blobs take %d of the %d bytes after the header", snapshot.ErrMalformed, used, left)
	}
	return blobs, nil
}

// verify streams every blob of file from f (positioned at the first)
// through its own hash and the checksum sum, then checks the stored
// checksum and that meta, grant and commands agree.
func (file *File) verify(f source, buf []byte, sum hash.Hash64, total, metaEnd uint64, readErr func(error) error) error {
	path := file.Path
	// Each blob, streamed through its own hash and the checksum.
	for i, b := range file.blobs {
		bh := xxhash.New()
		if err := stream(f, int64(b.info.Size), buf, sum, bh); err != nil {
			return readErr(err)
		}
		if bh.Sum64() != b.info.Hash {
			return damaged(path, "%s (bytes %d..%d) does not match its hash", file.blobName(i), b.off, b.off+int64(b.info.Size))
		}
	}
	var stored [sumLen]byte
	if _, err := io.ReadFull(f, stored[:]); err != nil {
		return readErr(err)
	}
	if got, want := sum.Sum64(), binary.BigEndian.Uint64(stored[:]); got != want {
		// Everything else has its own check: what is left is the meta,
		// which decoded but may hold a changed value, and the checksum.
		return damaged(path, "checksum mismatch (stored %016x at byte %d, computed %016x): the meta (bytes %d..%d) or the checksum itself is damaged",
			want, total-sumLen, got, prefixLen, metaEnd)
	}
	return file.consistent()
}

// consistent checks that the meta's tick, the body's grant and its
// commands' ticks make sense together.
func (file *File) consistent() error {
	path, meta, h := file.Path, &file.Meta, &file.Header
	if meta.Tick > lockstep.MaxTick {
		return damaged(path, "meta: session tick %d is past the last tick a session reaches, %d", meta.Tick, uint64(lockstep.MaxTick))
	}
	if meta.Tick < h.Tick {
		return damaged(path, "meta: session tick %d is before the snapshot's tick %d", meta.Tick, h.Tick)
	}
	if h.Granted != meta.Tick {
		return damaged(path, "command list: commands run to tick %d, the meta says the session was saved at tick %d", h.Granted, meta.Tick)
	}
	for _, mc := range h.Commands {
		for _, c := range mc.Commands {
			if c.Tick < h.Tick || c.Tick > meta.Tick {
				return damaged(path, "command list: a command for tick %d outside the saved ticks %d..%d", c.Tick, h.Tick, meta.Tick)
			}
		}
	}
	return nil
}

// stream reads n bytes of r through buf into every writer.
func stream(r io.Reader, n int64, buf []byte, to ...io.Writer) error {
	for n > 0 {
		c := buf[:min(int64(len(buf)), n)]
		if _, err := io.ReadFull(r, c); err != nil {
			return err
		}
		for _, w := range to {
			w.Write(c)
		}
		n -= int64(len(c))
	}
	return nil
}

// ReadBody reads every compressed blob of the save into memory, checking
// each against its hash: for tools and tests that want the body whole.
// Load does not need it.
func (file *File) ReadBody() (*snapshot.Parsed, error) {
	f, err := os.Open(file.Path)
	if err != nil {
		return nil, fmt.Errorf("read save body: %w", err)
	}
	defer f.Close()
	p := &snapshot.Parsed{Header: file.Header}
	for i, b := range file.blobs {
		data := make([]byte, b.info.Size)
		if _, err := f.ReadAt(data, b.off); err != nil {
			return nil, fmt.Errorf("read save body %s: %w", file.Path, err)
		}
		if xxhash.Sum64(data) != b.info.Hash {
			return nil, fmt.Errorf("read save body %s: blob %d: %w", file.Path, i, snapshot.ErrHashMismatch)
		}
		blob := b.info.Blob(data)
		if i == 0 {
			p.World = blob
		} else {
			p.Maps = append(p.Maps, blob)
		}
	}
	return p, nil
}

// sumMatchesWith reports whether the file's trailing checksum matches its
// other bytes once the bytes at off are replaced by patch. It tells a
// damaged prefix field from what the field would otherwise mean.
func sumMatchesWith(f io.ReaderAt, size, off int64, patch []byte) bool {
	if size < prefixLen+sumLen {
		return false
	}
	var stored [sumLen]byte
	if _, err := f.ReadAt(stored[:], size-sumLen); err != nil {
		return false
	}
	sum := xxhash.New()
	buf := make([]byte, min(size-sumLen, 1<<20))
	for pos := int64(0); pos < size-sumLen; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-sumLen-pos)], pos)
		if err != nil && !(err == io.EOF && n > 0) {
			return false
		}
		chunk := buf[:n]
		for i, b := range patch {
			if p := off + int64(i); p >= pos && p < pos+int64(n) {
				chunk[p-pos] = b
			}
		}
		sum.Write(chunk)
		pos += int64(n)
	}
	return sum.Sum64() == binary.BigEndian.Uint64(stored[:])
}

// naturalMetaLen is the length of the msgpack meta that starts after the
// prefix, found by decoding it, for telling a damaged meta length field
// from a damaged meta.
func naturalMetaLen(f io.ReaderAt, size int64) (n int, ok bool) {
	avail := min(size-prefixLen-sumLen, MaxMeta)
	if avail <= 0 {
		return 0, false
	}
	b := make([]byte, avail)
	if _, err := f.ReadAt(b, prefixLen); err != nil {
		return 0, false
	}
	var m Meta
	n, err := codec.DecodePrefix(b, &m)
	if err != nil {
		return 0, false
	}
	return n, true
}
