package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Limits of the protocol. Receivers may configure smaller ones.
const (
	// DefaultMaxFrame is the largest frame (id + body) a reader accepts by
	// default.
	DefaultMaxFrame = 1 << 20
	// MaxChunkData is the largest data field of one Server_WorldData chunk.
	MaxChunkData = 256 << 10
	// MaxDatabases is the most def databases a client may declare.
	MaxDatabases = 512
	// MaxDeclarationBytes is the largest Client_Defs body a relay host
	// takes while it awaits its arbiter's declaration (docs/protocol.md,
	// section 14.9): the declared databases are then every joiner's
	// Server_ModList, sent before a client has proved anything.
	MaxDeclarationBytes = 16 << 10
	// MaxCommandPayload is the largest command payload.
	MaxCommandPayload = 64 << 10
	// frameHeader is the size of the length prefix.
	frameHeader = 4
)

// ErrFrameTooLarge reports a frame whose declared length exceeds the limit.
var ErrFrameTooLarge = errors.New("frame exceeds size limit")

// ErrEmptyFrame reports a frame whose declared length is zero (no packet ID).
var ErrEmptyFrame = errors.New("empty frame")

// AppendFrame appends a frame holding id and body to dst.
func AppendFrame(dst []byte, id ID, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)+1))
	dst = append(dst, byte(id))
	return append(dst, body...)
}

// FrameReader reads frames from a stream, reusing one buffer. It is not safe
// for concurrent use.
type FrameReader struct {
	r   io.Reader
	max int
	hdr [frameHeader]byte
	buf []byte
}

// NewFrameReader returns a reader that refuses frames longer than max bytes
// (id + body); max <= 0 means DefaultMaxFrame.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &FrameReader{r: r, max: max}
}

// Next reads one frame. The returned body is only valid until the next call.
// A stream that ends cleanly between frames returns io.EOF; one that ends
// inside a frame returns io.ErrUnexpectedEOF.
func (fr *FrameReader) Next() (ID, []byte, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(fr.hdr[:])
	if n == 0 {
		return 0, nil, ErrEmptyFrame
	}
	if uint64(n) > uint64(fr.max) {
		return 0, nil, fmt.Errorf("%w: %d > %d bytes", ErrFrameTooLarge, n, fr.max)
	}
	// The buffer grows as bytes arrive, not as the header claims: a peer
	// that declares a large frame and sends nothing costs one step.
	b := fr.buf[:0]
	for len(b) < int(n) {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(int(n)-len(b), max(growStep, len(b))))
		}
		m, err := fr.r.Read(b[len(b):min(int(n), cap(b))])
		b = b[:len(b)+m]
		if err != nil && len(b) < int(n) {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			fr.buf = b[:0]
			return 0, nil, err
		}
	}
	fr.buf = b[:0]
	return ID(b[0]), b[1:], nil
}

// growStep is the first allocation for a frame body; the buffer then
// doubles as the body arrives.
const growStep = 4 << 10

// SetMax changes the largest frame the reader accepts, for example when
// a peer earns a larger limit by being admitted.
func (fr *FrameReader) SetMax(max int) {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	fr.max = max
}

// ProtocolVersion is the version of this protocol, sent in Client_Protocol.
// It changes whenever a packet's layout or meaning changes.
const ProtocolVersion uint32 = 4

// MinProtocolVersion is the oldest version a host still admits. Protocol
// 3 differs from 4 only in lacking Client_Protocol's codec list and the
// codec of each blob in the world payload header, so a host serves a
// protocol 3 client gzip, as it always did.
const MinProtocolVersion uint32 = 3

// DefaultPort is the TCP port a host listens on by default.
const DefaultPort = 30502
