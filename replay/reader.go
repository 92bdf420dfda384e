package replay

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// Errors of Open and Next; test for them with errors.Is.
var (
	// ErrNotReplay: the file does not start as a recording does.
	ErrNotReplay = errors.New("not a lockhost recording")
	// ErrVersion: a recording of another format version.
	ErrVersion = errors.New("unsupported recording version")
	// ErrDamaged: a frame that fails its hash or its decoding, or breaks
	// a limit.
	ErrDamaged = errors.New("recording damaged")
)

// Reader reads a segment frame by frame.
type Reader struct {
	path   string // names the segment in errors
	src    io.ReaderAt
	closer io.Closer // the file Open opened, nil for NewReader
	br     *bufio.Reader
	size   int64 // the file's size
	off    int64 // where the next frame starts
	header Header
	start  struct {
		off  int64 // where the save's bytes start
		size int64
		hash uint64
	}
	buf []byte
	// cut is why the file ended before an end frame, once Next has
	// returned io.EOF without one; ended is set by an end frame.
	cut   string
	ended bool
}

// Open opens a segment and reads its header and where its start save
// lies; Next then reads the frames after it.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := NewReader(path, f, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a segment of size bytes held by src (a recording the
// browser fetched, say) as Open reads a file; name stands for the path
// in errors. It reads only what Open does: every length is checked
// against its limit and against size before anything is allocated.
func NewReader(name string, src io.ReaderAt, size int64) (*Reader, error) {
	r := &Reader{path: name, src: src, size: size}
	if err := r.open(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

func (r *Reader) open() error {
	var prefix [prefixLen]byte
	sr := io.NewSectionReader(r.src, 0, r.size)
	if _, err := io.ReadFull(sr, prefix[:]); err != nil || string(prefix[:8]) != Magic {
		return ErrNotReplay
	}
	if v := binary.BigEndian.Uint16(prefix[8:]); v != FormatVersion {
		return fmt.Errorf("%w: version %d, this build reads %d", ErrVersion, v, FormatVersion)
	}
	if flags := binary.BigEndian.Uint16(prefix[10:]); flags != 0 {
		return fmt.Errorf("%w: flags %#x", ErrDamaged, flags)
	}
	r.off = prefixLen
	r.br = bufio.NewReaderSize(sr, 64<<10)
	k, data, err := r.frame()
	if err != nil || k != KindHeader {
		return fmt.Errorf("%w: header: %v", ErrDamaged, frameErr(k, err))
	}
	if err := codec.Decode(data, &r.header); err != nil {
		return fmt.Errorf("%w: header: %v", ErrDamaged, err)
	}
	// The start frame: its place only; ExtractStart reads it.
	k, n, sum, err := r.frameHeader()
	if err != nil || k != KindStart {
		return fmt.Errorf("%w: start: %v", ErrDamaged, frameErr(k, err))
	}
	r.start.off, r.start.size, r.start.hash = r.off, int64(n), sum
	if _, err := r.br.Discard(int(n)); err != nil {
		return fmt.Errorf("%w: start: %v", ErrDamaged, err)
	}
	r.off += int64(n)
	return nil
}

// frameErr describes a frame that is not the one expected.
func frameErr(k Kind, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("a %s frame in its place", k)
}

// frameHeader reads the next frame's header and checks its length
// against its kind's limit and the rest of the file. At the end of the
// file it returns io.EOF; a header cut short, io.ErrUnexpectedEOF.
func (r *Reader) frameHeader() (Kind, uint32, uint64, error) {
	var hdr [frameHeaderLen]byte
	n, err := io.ReadFull(r.br, hdr[:])
	if err == io.EOF {
		return 0, 0, 0, io.EOF
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("frame header at byte %d: %d of %d bytes: %w", r.off, n, frameHeaderLen, io.ErrUnexpectedEOF)
	}
	k, length, sum := Kind(hdr[0]), binary.BigEndian.Uint32(hdr[1:]), binary.BigEndian.Uint64(hdr[5:])
	r.off += frameHeaderLen
	limit := maxFrame(k)
	if limit == 0 {
		return k, 0, 0, fmt.Errorf("%w: unknown frame kind %d at byte %d", ErrDamaged, uint8(k), r.off-frameHeaderLen)
	}
	if uint64(length) > limit {
		return k, 0, 0, fmt.Errorf("%w: a %s frame of %d bytes, over %d", ErrDamaged, k, length, limit)
	}
	if left := r.size - r.off; int64(length) > left {
		return k, 0, 0, fmt.Errorf("a %s frame of %d bytes with %d left in the file: %w", k, length, left, io.ErrUnexpectedEOF)
	}
	return k, length, sum, nil
}

// frame reads the next frame whole and checks its hash.
func (r *Reader) frame() (Kind, []byte, error) {
	k, n, sum, err := r.frameHeader()
	if err != nil {
		return k, nil, err
	}
	if cap(r.buf) < int(n) {
		r.buf = make([]byte, n)
	}
	data := r.buf[:n]
	if _, err := io.ReadFull(r.br, data); err != nil {
		return k, nil, fmt.Errorf("%s frame: %w", k, io.ErrUnexpectedEOF)
	}
	at := r.off
	r.off += int64(n)
	if xxhash.Sum64(data) != sum {
		return k, nil, fmt.Errorf("%w: the %s frame at byte %d fails its hash", ErrDamaged, k, at-frameHeaderLen)
	}
	return k, data, nil
}

// Header is the segment's header.
func (r *Reader) Header() Header { return r.header }

// StartSize is the size of the start save in bytes.
func (r *Reader) StartSize() int64 { return r.start.size }

// ExtractStart copies the start save to dst (a new file), checking its
// hash, for package saves to read.
func (r *Reader) ExtractStart(dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	sum := xxhash.New()
	n, err := io.Copy(io.MultiWriter(out, sum), io.NewSectionReader(r.src, r.start.off, r.start.size))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil || n != r.start.size {
		return fmt.Errorf("%s: start save: %d of %d bytes: %v", r.path, n, r.start.size, err)
	}
	if sum.Sum64() != r.start.hash {
		return fmt.Errorf("%s: %w: the start save fails its hash", r.path, ErrDamaged)
	}
	return nil
}

// Start checks the start save's hash, reading it through once, and
// returns its bytes as a section of the segment, for saves.ReadFrom.
func (r *Reader) Start() (*io.SectionReader, error) {
	sec := io.NewSectionReader(r.src, r.start.off, r.start.size)
	sum := xxhash.New()
	if n, err := io.Copy(sum, sec); err != nil || n != r.start.size {
		return nil, fmt.Errorf("%s: start save: %d of %d bytes: %v", r.path, n, r.start.size, err)
	}
	if sum.Sum64() != r.start.hash {
		return nil, fmt.Errorf("%s: %w: the start save fails its hash", r.path, ErrDamaged)
	}
	return io.NewSectionReader(r.src, r.start.off, r.start.size), nil
}

// Frame is one frame after the start: exactly one of its fields is set,
// as its Kind says.
type Frame struct {
	Kind       Kind
	Commands   *Commands
	Checkpoint *lockstep.Checkpoint
	// EndTick and EndWhy are the end frame's.
	EndTick uint64
	EndWhy  byte
}

// Next reads the next frame. At the end of the recording it returns
// io.EOF; Complete then says whether the segment ended with its end frame
// or was cut short (Cut says where). A damaged frame is an error
// wrapping ErrDamaged.
func (r *Reader) Next() (Frame, error) {
	if r.ended {
		return Frame{}, io.EOF
	}
	at := r.off
	k, data, err := r.frame()
	switch {
	case err == io.EOF:
		r.cut = fmt.Sprintf("the file ends at byte %d without an end frame", at)
		return Frame{}, io.EOF
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.cut = fmt.Sprintf("the file ends inside a frame at byte %d (%v)", at, err)
		return Frame{}, io.EOF
	case err != nil:
		return Frame{}, fmt.Errorf("%s: %w", r.path, err)
	}
	fr := Frame{Kind: k}
	switch k {
	case KindCommands:
		c, err := decodeCommands(data)
		if err != nil {
			return fr, fmt.Errorf("%s: %w: commands frame at byte %d: %v", r.path, ErrDamaged, at, err)
		}
		fr.Commands = &c
	case KindCheckpoint:
		cp, err := decodeCheckpoint(data)
		if err != nil {
			return fr, fmt.Errorf("%s: %w: checkpoint frame at byte %d: %v", r.path, ErrDamaged, at, err)
		}
		fr.Checkpoint = &cp
	case KindEnd:
		fr.EndTick, fr.EndWhy, err = decodeEnd(data)
		if err != nil {
			return fr, fmt.Errorf("%s: %w: %v", r.path, ErrDamaged, err)
		}
		r.ended = true
	default:
		return fr, fmt.Errorf("%s: %w: a second %s frame at byte %d", r.path, ErrDamaged, k, at)
	}
	return fr, nil
}

// Complete reports whether the segment ended with its end frame (once
// Next has returned io.EOF).
func (r *Reader) Complete() bool { return r.ended }

// Cut says where a segment without an end frame ends.
func (r *Reader) Cut() string { return r.cut }

// Size is the file's size in bytes.
func (r *Reader) Size() int64 { return r.size }

// Close closes the file Open opened (NewReader's source is the
// caller's to close).
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}
