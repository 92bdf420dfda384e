package join

import (
	"fmt"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Resume carries one join over its attempts until WorldReady. Pass the
// same Resume in Config.Resume to every attempt: it keeps the session
// token the host gave and the world blobs downloaded so far (compressed,
// each checked against its hash), so an attempt after a dropped
// connection rejoins with the token, names the blobs it holds, and the
// host sends only the rest. What the last attempt already inflated and
// loaded is kept too while the host sends the same join point. After
// WorldReady it holds nothing. Safe for concurrent use.
type Resume struct {
	mu    sync.Mutex
	token []byte
	grace time.Duration
	blobs map[uint64]keptBlob // by hash
	dec   *decoder            // the last attempt's, while it may go on
	point pointKey            // what dec is assembling
	done  bool                // WorldReady was reached
}

// keptBlob is a downloaded blob and its index in the last header that
// listed it.
type keptBlob struct {
	index int
	blob  snapshot.Blob
}

// pointKey names a join point as a header describes it.
type pointKey struct {
	tick, worldHash, worldBlob uint64
}

// Token is the session token of the last attempt that was admitted (nil
// if none was) and how long after a drop it stays good.
func (r *Resume) Token() ([]byte, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.token, r.grace
}

// Held is how many blobs of the world, and how many compressed bytes, the
// attempts so far downloaded and kept.
func (r *Resume) Held() (blobs int, bytes uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.blobs {
		bytes += uint64(len(k.blob.Data))
	}
	return len(r.blobs), bytes
}

// Forget drops the session token, so the next attempt joins afresh
// (with the host's BadToken, for example after the host restarted). The
// blobs kept stay until a header no longer lists them.
func (r *Resume) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.token, r.grace = nil, 0
}

func (r *Resume) setToken(token []byte, grace time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.token, r.grace = token, grace
}

// claim is what a retry sends: the token and the blobs held. Before any
// admission, or once the join is done, there is nothing to resume.
func (r *Resume) claim() ([]byte, []wire.HeldBlob) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.token == nil || r.done {
		return nil, nil
	}
	held := make([]wire.HeldBlob, 0, len(r.blobs))
	for h, k := range r.blobs {
		held = append(held, wire.HeldBlob{Index: uint32(k.index), Hash: h})
	}
	return r.token, held
}

// decoderFor returns the decoder for a download of h: the last attempt's
// when it was assembling the same join point and has the world, else a
// new one from mk. Kept blobs h does not list are dropped.
func (r *Resume) decoderFor(h *snapshot.Header, mk func() *decoder) *decoder {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := pointKey{h.Tick, h.WorldHash, h.World.Hash}
	if r.dec == nil || r.point != key || !r.dec.reusable() {
		r.dec = mk()
	}
	r.point = key
	listed := make(map[uint64]bool, 1+len(h.Maps))
	listed[h.World.Hash] = true
	for _, m := range h.Maps {
		listed[m.Blob.Hash] = true
	}
	for hash := range r.blobs {
		if !listed[hash] {
			delete(r.blobs, hash)
		}
	}
	return r.dec
}

// keep remembers blob i of the current header once its bytes match its
// hash.
func (r *Resume) keep(i int, b snapshot.Blob) {
	if xxhash.Sum64(b.Data) != b.Hash {
		return // the decoder reports it
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.blobs == nil {
		r.blobs = map[uint64]keptBlob{}
	}
	r.blobs[b.Hash] = keptBlob{index: i, blob: b}
}

// held hands blob i, which the host left out because this joiner holds
// it, to d: from the kept bytes, unless d has it already.
func (r *Resume) held(d *decoder, i int, info snapshot.BlobInfo) error {
	r.mu.Lock()
	k, ok := r.blobs[info.Hash]
	if ok {
		k.index = i
		r.blobs[info.Hash] = k
	}
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("the host left out blob %d (hash %016x), which this joiner does not hold", i, info.Hash)
	}
	if d.has(i) {
		return nil
	}
	return d.blob(i, k.blob)
}

// finished notes that the decoder's simulation was taken: a later
// attempt starts a new one from the kept blobs.
func (r *Resume) finished() {
	r.mu.Lock()
	r.dec = nil
	r.mu.Unlock()
}

// ready ends the join: nothing is held any more.
func (r *Resume) ready() {
	r.mu.Lock()
	r.blobs, r.dec, r.done = nil, nil, true
	r.mu.Unlock()
}
