package host

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/lockhost/lockhost/wire"
)

// maxResumeStalls is how many resumes in a row a join may make without
// progress (no new blob held whole, download not finished in between);
// the next one is refused.
const maxResumeStalls = 2

// Resume refusals, mapped to their disconnect reasons by
// admissionReason.
var (
	errBadResume     = errors.New("the resume names a blob this join was never sent")
	errResumeStalled = errors.New("this join made no progress over its last retries")
)

// heldKey is one blob a joiner may say it holds: its index in a payload
// header this join was sent, and its hash.
type heldKey struct {
	index uint32
	hash  uint64
}

// joinProgress follows one join over its connections until WorldReady:
// the blobs its joiner holds (acknowledged whole, or left out of a
// resumed payload because it held them), so a retry with the session
// token resumes instead of starting over. Only the session goroutine
// touches it, except last: the reader of each connection publishes there
// the transfer it started, and the session reads what that transfer
// wrote and had acknowledged when the join is resumed (fold).
type joinProgress struct {
	seq uint64 // names the join in the history; never 0

	last     atomic.Pointer[transfer] // the latest connection's world transfer
	pairs    map[heldKey]bool         // what a resume may name: written whole, or held
	sizes    map[uint64]uint64        // hash -> size of every blob held
	held     uint64                   // bytes of distinct blobs held
	finished bool                     // the last connection acknowledged its whole download
	retries  int                      // connections after the first
	stalls   int                      // resumes in a row without progress
	lastHeld uint64                   // held at the last resume
}

func newJoinProgress(seq uint64) *joinProgress {
	return &joinProgress{seq: seq, pairs: map[heldKey]bool{}, sizes: map[uint64]uint64{}}
}

// resume checks a retry's claim and counts it: every blob named must be
// one this join was sent (by index and hash), and a join that made no
// progress over maxResumeStalls resumes in a row is refused. It returns
// the hashes the joiner holds, for the payload to leave out.
func (jp *joinProgress) resume(claim []wire.HeldBlob) (map[uint64]bool, error) {
	jp.fold()
	held := make(map[uint64]bool, len(claim))
	for _, b := range claim {
		if !jp.pairs[heldKey{b.Index, b.Hash}] {
			return nil, fmt.Errorf("%w: blob %d with hash %016x", errBadResume, b.Index, b.Hash)
		}
		held[b.Hash] = true
	}
	if jp.held > jp.lastHeld || jp.finished {
		jp.stalls = 0
	} else if jp.stalls++; jp.stalls > maxResumeStalls {
		return nil, errResumeStalled
	}
	jp.lastHeld, jp.finished = jp.held, false
	jp.retries++
	return held, nil
}

// fold takes in what the last connection's transfer did, once: the blobs
// its payload left out are held at their index; every blob it wrote whole
// may be named by a resume (its acknowledgement may have been lost with
// the connection); every blob acknowledged whole is held, which is the
// join's progress.
func (jp *joinProgress) fold() {
	t := jp.last.Swap(nil)
	if t == nil {
		return
	}
	pl := t.pl
	for _, i := range pl.HeldBlobs() {
		jp.pairs[heldKey{uint32(i), pl.BlobHash(i)}] = true
	}
	for _, i := range pl.CompletedIn(0, t.written.Load()) {
		jp.pairs[heldKey{uint32(i), pl.BlobHash(i)}] = true
	}
	acked := t.acked.Load()
	for _, i := range pl.CompletedIn(0, acked) {
		h := pl.BlobHash(i)
		jp.pairs[heldKey{uint32(i), h}] = true
		if _, ok := jp.sizes[h]; !ok {
			jp.sizes[h] = pl.BlobSize(i)
			jp.held += pl.BlobSize(i)
		}
	}
	if acked == pl.Total() {
		jp.finished = true
	}
}

// startJoin is the progress of an admitted join: the one its token was
// following when this is a retry before WorldReady (the claim checked
// against it), else a new one, whatever the claim. held are the blob
// hashes the payload may leave out.
func (r *rejoins) startJoin(rj *rejoin, claim []wire.HeldBlob) (jp *joinProgress, held map[uint64]bool, err error) {
	if rj != nil && rj.progress != nil {
		held, err := rj.progress.resume(claim)
		if err != nil {
			return nil, nil, err
		}
		return rj.progress, held, nil
	}
	// A new join. A claim from a joiner whose WorldReady arrived just
	// before its connection dropped is moot: the player rejoins playing.
	r.seq++
	return newJoinProgress(r.seq), nil, nil
}

// joinDone ends the join of player id at WorldReady: its token rejoins
// from then on as a player that left, not as a download to resume.
func (r *rejoins) joinDone(id int32) {
	for _, rj := range r.tokens {
		if rj.id == id {
			rj.progress = nil
		}
	}
}
