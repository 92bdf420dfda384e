package relay

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// ErrChunk marks an upload chunk that breaks the rules of Client_Upload
// itself (order, total, limit): a protocol error, which ends the
// connection. Other errors of Add are about the payload's content: the
// upload is refused and the connection stays.
var ErrChunk = errors.New("bad upload chunk")

// Upload is one upload being received: the payload of the answer to req,
// taken chunk by chunk and checked as it comes (docs/protocol.md, section
// 14.4). It keeps the blobs, which are the point it yields, and nothing
// else of the payload.
type Upload struct {
	req    wire.ServerUploadRequest
	maxRaw uint64 // the most raw bytes the header may declare; 0: no bound
	rcv    *snapshot.Receiver
	got    uint64
	total  uint64
	world  snapshot.Blob
	maps   []snapshot.Blob
}

// NewUpload starts receiving the answer to req, refusing a payload over
// req.Limit bytes.
func NewUpload(req wire.ServerUploadRequest) *Upload {
	u := &Upload{req: req}
	u.rcv = snapshot.NewReceiver(req.Limit, u.blob)
	// The header is checked as soon as it is complete, before any blob
	// is kept.
	u.rcv.OnHeader(func(h *snapshot.Header) error { return checkHeader(h, u.req, u.maxRaw) })
	return u
}

// LimitRaw refuses an upload whose blobs declare more than n raw bytes
// in all (0: no bound), and returns u. The host inflates nothing it
// takes, but a joiner that reads only gzip gets the blobs transcoded,
// which inflates them one by one, each bounded by its declared size.
func (u *Upload) LimitRaw(n uint64) *Upload {
	u.maxRaw = n
	return u
}

// Request is the request the upload answers.
func (u *Upload) Request() wire.ServerUploadRequest { return u.req }

// Received is how many bytes of the payload arrived.
func (u *Upload) Received() uint64 { return u.got }

// blob checks one blob as its last byte arrives: its codec, its hash.
func (u *Upload) blob(i int, b snapshot.Blob) error {
	if !b.Codec.Known() {
		return fmt.Errorf("%s has codec %d, not one of gzip (0) or zstd (1)", blobName(i), uint8(b.Codec))
	}
	if xxhash.Sum64(b.Data) != b.Hash {
		return fmt.Errorf("%s's bytes do not have the hash its header entry gives", blobName(i))
	}
	if i == 0 {
		u.world = b
	} else {
		u.maps = append(u.maps, b)
	}
	return nil
}

func blobName(i int) string {
	if i == 0 {
		return "the world blob"
	}
	return fmt.Sprintf("map blob %d", i-1)
}

// Add takes the next chunk. It reports done once the whole payload
// arrived; Point then returns it. An error wrapping ErrChunk is a
// protocol error; any other refuses the upload's content.
func (u *Upload) Add(c *wire.ClientUpload) (done bool, err error) {
	if c.Request != u.req.Request {
		return false, fmt.Errorf("%w: a chunk of upload %d inside upload %d", ErrChunk, c.Request, u.req.Request)
	}
	if u.got == 0 && u.total == 0 {
		if c.Total > u.req.Limit {
			return false, fmt.Errorf("%w: a payload of %d bytes, over the request's limit of %d", ErrChunk, c.Total, u.req.Limit)
		}
		u.total = c.Total
	}
	switch {
	case c.Total != u.total:
		return false, fmt.Errorf("%w: a chunk says the total is %d, the first said %d", ErrChunk, c.Total, u.total)
	case c.Offset != u.got:
		return false, fmt.Errorf("%w: a chunk at offset %d, expected %d", ErrChunk, c.Offset, u.got)
	}
	done, err = u.rcv.Add(c.Offset, c.Total, c.Data)
	u.got += uint64(len(c.Data))
	if err != nil {
		return false, err
	}
	return done, nil
}

// Point is the complete upload as a join point, its blobs as uploaded.
// It is valid once Add reported done.
func (u *Upload) Point() *snapshot.Point {
	h := u.rcv.Header()
	p := &snapshot.Point{Tick: h.Tick, World: u.world, WorldHash: h.WorldHash, Maps: make([]snapshot.MapPoint, len(h.Maps))}
	for i, m := range h.Maps {
		p.Maps[i] = snapshot.MapPoint{ID: m.ID, Blob: u.maps[i], StateHash: m.StateHash}
	}
	return p
}

// checkHeader holds an upload's header to the rules of section 14.4 that
// the header alone can break; package snapshot checked the rest (its
// hash, its size, each map ID once).
// maxRaw, when not 0, bounds the raw bytes the blobs declare in all.
func checkHeader(h *snapshot.Header, req wire.ServerUploadRequest, maxRaw uint64) error {
	switch {
	case maxRaw > 0 && h.RawSize() > maxRaw:
		return fmt.Errorf("the blobs declare %d raw bytes in all, over the host's world limit of %d", h.RawSize(), maxRaw)
	case h.Faction != 0:
		return fmt.Errorf("the header's faction is %d, not 0", h.Faction)
	case req.Kind != wire.UploadWorld && h.Tick != req.Tick:
		return fmt.Errorf("the header's tick is %d, the request's %d", h.Tick, req.Tick)
	case h.Granted != h.Tick:
		return fmt.Errorf("the header's grant %d is not its tick %d", h.Granted, h.Tick)
	case len(h.Commands) > 0:
		return errors.New("the header carries commands; an upload carries none")
	case len(h.Held) > 0:
		return errors.New("the header leaves blobs out; an upload holds them all")
	}
	if req.Kind == wire.UploadMaps {
		ids := make([]int32, len(h.Maps))
		for i, m := range h.Maps {
			ids[i] = m.ID
		}
		if !slices.Equal(ids, req.Maps) {
			return fmt.Errorf("the header lists maps %v, the request asked for %v", ids, req.Maps)
		}
	}
	return nil
}
