package snapshot

import (
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/internal/codec"
)

// prefixSize is the header length and hash in front of the header.
const prefixSize = 4 + 8

// Receiver takes a payload chunk by chunk. It parses the header as soon as
// it is complete and passes each blob on the moment its last byte arrives;
// it holds only the header and the blob being received, so memory does
// not grow with the payload beyond what the callback keeps.
type Receiver struct {
	limit  uint64
	total  uint64
	got    uint64
	begun  bool
	onBlob func(index int, b Blob) error
	onHeld func(index int, info BlobInfo) error
	onHdr  func(h *Header) error
	held   []bool // per blob: left out of the payload (Header.Held)

	prefix  []byte // the prefix, then the header, while they arrive
	hdrLen  uint64
	header  *Header
	infos   []BlobInfo // world, then maps in header order
	cur     int        // index into infos of the blob being received
	curData []byte
}

// NewReceiver returns a receiver that refuses payloads over limit bytes and
// calls onBlob with index 0 for the world blob and 1+i for map i of the
// header. An error from onBlob stops the transfer.
func NewReceiver(limit uint64, onBlob func(index int, b Blob) error) *Receiver {
	return &Receiver{limit: limit, onBlob: onBlob}
}

// OnHeld sets what is called, in blob order, for each blob the header
// lists as held by the joiner (not in the payload). Without it, a payload
// that leaves blobs out is refused.
func (r *Receiver) OnHeld(fn func(index int, info BlobInfo) error) { r.onHeld = fn }

// OnHeader sets what is called once, with the header, as soon as it has
// arrived and been checked, before any blob is handed on: the place to
// prepare what the blobs go into. An error stops the transfer.
func (r *Receiver) OnHeader(fn func(h *Header) error) { r.onHdr = fn }

// Header is the payload's header once it has arrived, else nil.
func (r *Receiver) Header() *Header { return r.header }

// Received is how many bytes arrived so far.
func (r *Receiver) Received() uint64 { return r.got }

// Total is the declared payload size (0 before the first chunk).
func (r *Receiver) Total() uint64 { return r.total }

// Add takes the next chunk. It reports done once the whole payload arrived
// and every blob was handed on.
func (r *Receiver) Add(offset, total uint64, data []byte) (done bool, err error) {
	if !r.begun {
		if total > r.limit {
			return false, fmt.Errorf("payload of %d bytes over limit %d: %w", total, r.limit, ErrTooLarge)
		}
		if total < prefixSize {
			return false, fmt.Errorf("%w: payload of %d bytes", ErrMalformed, total)
		}
		r.total, r.begun = total, true
	}
	if total != r.total {
		return false, fmt.Errorf("chunk says total %d, first said %d: %w", total, r.total, ErrMalformed)
	}
	if offset != r.got {
		return false, fmt.Errorf("chunk at %d, expected %d: %w", offset, r.got, ErrOutOfOrder)
	}
	if uint64(len(data)) > r.total-offset {
		return false, fmt.Errorf("chunk runs past total %d: %w", r.total, ErrMalformed)
	}
	for len(data) > 0 {
		n, err := r.take(data)
		if err != nil {
			return false, err
		}
		data = data[n:]
		r.got += uint64(n)
	}
	if r.got == r.total {
		if r.header == nil || r.cur < len(r.infos) {
			return false, fmt.Errorf("%w: payload ended inside the header", ErrMalformed)
		}
		return true, nil
	}
	return false, nil
}

// take consumes a prefix of data for the part being received.
func (r *Receiver) take(data []byte) (int, error) {
	if r.header == nil {
		return r.takeHeader(data)
	}
	if r.cur >= len(r.infos) {
		return 0, fmt.Errorf("%w: bytes after the last blob", ErrMalformed)
	}
	info := r.infos[r.cur]
	if r.curData == nil {
		r.curData = make([]byte, 0, info.Size)
	}
	n := min(uint64(len(data)), info.Size-uint64(len(r.curData)))
	r.curData = append(r.curData, data[:n]...)
	if err := r.finishBlobs(); err != nil {
		return 0, err
	}
	return int(n), nil
}

// finishBlobs hands on the current blob, and any empty ones after it, once
// complete.
func (r *Receiver) finishBlobs() error {
	for r.cur < len(r.infos) && r.held[r.cur] {
		if err := r.onHeld(r.cur, r.infos[r.cur]); err != nil {
			return err
		}
		r.cur++
	}
	for r.cur < len(r.infos) && uint64(len(r.curData)) == r.infos[r.cur].Size {
		info := r.infos[r.cur]
		data := r.curData
		if data == nil {
			data = []byte{}
		}
		r.curData = nil
		if err := r.onBlob(r.cur, info.Blob(data)); err != nil {
			return err
		}
		r.cur++
		for r.cur < len(r.infos) && r.held[r.cur] {
			if err := r.onHeld(r.cur, r.infos[r.cur]); err != nil {
				return err
			}
			r.cur++
		}
	}
	return nil
}

func (r *Receiver) takeHeader(data []byte) (int, error) {
	need := uint64(prefixSize)
	if len(r.prefix) >= prefixSize {
		need += r.hdrLen
	}
	n := min(uint64(len(data)), need-uint64(len(r.prefix)))
	r.prefix = append(r.prefix, data[:n]...)
	if len(r.prefix) == prefixSize && r.hdrLen == 0 {
		r.hdrLen = uint64(binary.BigEndian.Uint32(r.prefix))
		if r.hdrLen == 0 || r.hdrLen > MaxHeader || r.hdrLen > r.total-prefixSize {
			return 0, fmt.Errorf("%w: header of %d bytes in a payload of %d", ErrMalformed, r.hdrLen, r.total)
		}
		return int(n), nil
	}
	if uint64(len(r.prefix)) < prefixSize+r.hdrLen {
		return int(n), nil
	}
	hb := r.prefix[prefixSize:]
	if xxhash.Sum64(hb) != binary.BigEndian.Uint64(r.prefix[4:]) {
		return 0, fmt.Errorf("%w: header hash mismatch", ErrMalformed)
	}
	h := &Header{}
	if err := codec.Decode(hb, h); err != nil {
		return 0, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	if err := h.check(); err != nil {
		return 0, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	infos := make([]BlobInfo, 0, 1+len(h.Maps))
	infos = append(infos, h.World)
	for _, m := range h.Maps {
		infos = append(infos, m.Blob)
	}
	held, err := r.heldBlobs(h.Held, len(infos))
	if err != nil {
		return 0, err
	}
	// The sizes of the blobs sent must add up to exactly what is left.
	left := r.total - prefixSize - r.hdrLen
	var sum uint64
	for i, bi := range infos {
		if held[i] {
			continue
		}
		if bi.Size > left-sum {
			return 0, fmt.Errorf("%w: blob sizes exceed the %d bytes after the header", ErrMalformed, left)
		}
		sum += bi.Size
	}
	if sum != left {
		return 0, fmt.Errorf("%w: blobs take %d of the %d bytes after the header", ErrMalformed, sum, left)
	}
	r.header, r.infos, r.held, r.prefix = h, infos, held, nil
	if r.onHdr != nil {
		if err := r.onHdr(h); err != nil {
			return 0, err
		}
	}
	if err := r.finishBlobs(); err != nil { // empty blobs are complete already
		return 0, err
	}
	return int(n), nil
}

// heldBlobs checks a header's held list (ascending, each a blob of the
// n) and returns it as a flag per blob.
func (r *Receiver) heldBlobs(list []uint32, n int) ([]bool, error) {
	held := make([]bool, n)
	if len(list) == 0 {
		return held, nil
	}
	if r.onHeld == nil {
		return nil, fmt.Errorf("%w: the payload leaves out %d blobs, but none are held here", ErrMalformed, len(list))
	}
	for k, i := range list {
		if uint64(i) >= uint64(n) || k > 0 && i <= list[k-1] {
			return nil, fmt.Errorf("%w: held blob %d (of %d) out of order or range", ErrMalformed, i, n)
		}
		held[i] = true
	}
	return held, nil
}
