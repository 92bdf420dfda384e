package host

import (
	"sync/atomic"

	"github.com/lockhost/lockhost/snapshot"
)

// transfer is one payload on its way to one client: a join's world, whose
// client acknowledges what it received, or a repair's, which it does not.
// It is built whole by newJoinTransfer or newRepairTransfer and handed to
// the connection's writer in one call (conn.startTransfer); after that
// its fields do not change, and three goroutines touch its two counters,
// each from one side only:
//
//   - the writer stores written after each chunk and reads acked to stay
//     within the window;
//   - the reader stores acked with each acknowledgement (ack), which also
//     wakes the writer;
//   - the session goroutine reads both when the join is resumed on a new
//     connection (joinProgress.fold), to learn what the joiner may hold.
//
// The uplink also pauses a join's transfer while the join waits for its
// slot back (paused, which wakes the writer when cleared).
type transfer struct {
	pl     *snapshot.Payload
	acks   bool   // the client acknowledges it: a join's world
	window uint64 // when not 0, how far the writer may run ahead of acked

	acked   atomic.Uint64 // bytes the client acknowledged
	written atomic.Uint64 // bytes the writer wrote
	paused  atomic.Bool   // the join yielded its upload slot: write nothing more
	wake    chan struct{} // a new acknowledgement, or the pause's end (capacity 1)
}

// newJoinTransfer is the transfer of a join's world payload, acknowledged
// by the client; window, if not 0, bounds the bytes in flight.
func newJoinTransfer(pl *snapshot.Payload, window uint64) *transfer {
	return &transfer{pl: pl, acks: true, window: window, wake: make(chan struct{}, 1)}
}

// newRepairTransfer is the transfer of a repair's payload, sent without
// waiting for acknowledgements.
func newRepairTransfer(pl *snapshot.Payload) *transfer {
	return &transfer{pl: pl}
}

// ack records that the client acknowledged the first n bytes, letting
// the writer run on. Only the reader calls it.
func (t *transfer) ack(n uint64) {
	t.acked.Store(n)
	signal(t.wake)
}

// hold pauses the transfer, or lets it go on where it stopped. Only the
// uplink calls it.
func (t *transfer) hold(pause bool) {
	t.paused.Store(pause)
	if !pause {
		signal(t.wake)
	}
}

// ahead reports whether the writer must wait before writing from offset:
// for acknowledgements, or for the end of a pause.
func (t *transfer) ahead(offset uint64) bool {
	return t.paused.Load() || t.acks && t.window > 0 && offset >= t.acked.Load()+t.window
}

// wrote records that the writer wrote up to offset.
func (t *transfer) wrote(offset uint64) { t.written.Store(offset) }
