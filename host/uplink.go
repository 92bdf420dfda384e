package host

import (
	"slices"
	"sync"
	"time"
)

// pacedChunk is the largest world chunk the writer sends at once when the
// upload is paced: a player's tick queued behind one chunk waits for it
// alone, about 13 ms on a 10 Mbit/s uplink.
const pacedChunk = 16 << 10

// burstTime is how much of the rate the bucket holds: the bytes a paced
// transfer may send back to back after a pause.
const burstTime = 20 * time.Millisecond

// uplink shares the host's upload among world transfers, as one budget
// for all of them, not one per joiner: a token bucket of
// Config.Join.MaxUploadRate bytes per second that every transfer's chunks
// draw from (ticks, commands and every other small packet never do), and
// Config.Join.MaxUploadSlots joins' worlds on their way at once, the next
// joiners waiting in the order they came. Any goroutine may call it.
type uplink struct {
	rate  float64 // bytes per second; 0: no cap
	burst float64 // the bucket's size in bytes
	slots int     // joins sent at once; 0: no limit
	now   func() time.Time

	mu      sync.Mutex
	tokens  float64   // bytes that may go now; below 0, the debt of chunks already granted
	last    time.Time // when tokens was brought up to date
	granted uint64    // bytes granted in all
	active  []*upload // joins whose worlds are on their way, in the order they started
	waiting []*upload // joins waiting for a slot, first come first
}

// upload is one join's world in the uplink: waiting for a slot, then on
// its way.
type upload struct {
	name    string
	t       *transfer     // set when it starts
	started time.Time     // when it got its slot
	ready   chan struct{} // closed when it gets its slot
	moved   chan struct{} // a signal (capacity 1) that its place in line changed
}

// newUplink is the uplink of rate bytes per second (-1 or 0: no cap) and
// slots joins at once (-1 or 0: no limit).
func newUplink(rate float64, slots int) *uplink {
	u := &uplink{rate: max(rate, 0), slots: max(slots, 0), now: time.Now}
	u.burst = max(pacedChunk, u.rate*burstTime.Seconds())
	u.tokens = u.burst
	return u
}

// paced reports whether transfers draw from a bucket.
func (u *uplink) paced() bool { return u.rate > 0 }

// take grants n bytes of world data and returns the time they may be
// sent: now while the bucket holds them, else when the bucket's debt,
// this chunk included, has been paid. Transfers that take one chunk at a
// time and wait for its time share the rate between them, and the bytes
// granted up to any time T never exceed the burst plus the rate times the
// time since the first grant.
func (u *uplink) take(n int) time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	if !u.paced() {
		u.granted += uint64(n)
		return now
	}
	if !u.last.IsZero() && now.After(u.last) {
		u.tokens = min(u.burst, u.tokens+u.rate*now.Sub(u.last).Seconds())
	}
	if u.last.IsZero() || now.After(u.last) {
		u.last = now
	}
	u.tokens -= float64(n)
	u.granted += uint64(n)
	if u.tokens >= 0 {
		return now
	}
	return u.last.Add(time.Duration(-u.tokens / u.rate * float64(time.Second)))
}

// chunk is the most world data the writer sends at once.
func (u *uplink) chunk(max int) int {
	if u == nil || !u.paced() {
		return max
	}
	return min(max, pacedChunk)
}

// enter puts a join in line for a slot and returns it; its ready channel
// is closed at once when a slot is free.
func (u *uplink) enter(name string) *upload {
	up := &upload{name: name, ready: make(chan struct{}), moved: make(chan struct{}, 1)}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.waiting = append(u.waiting, up)
	u.admit()
	return up
}

// place is how many joins wait ahead of up, and whether up still waits.
func (u *uplink) place(up *upload) (ahead int, waiting bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := slices.Index(u.waiting, up)
	return max(i, 0), i >= 0
}

// start records the transfer of a join that has its slot.
func (u *uplink) start(up *upload, t *transfer) {
	u.mu.Lock()
	defer u.mu.Unlock()
	up.t = t
}

// leave takes a join out of the uplink, waiting or on its way, and gives
// its slot to the next in line.
func (u *uplink) leave(up *upload) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.active = slices.DeleteFunc(u.active, func(x *upload) bool { return x == up })
	if i := slices.Index(u.waiting, up); i >= 0 {
		u.waiting = slices.Delete(u.waiting, i, i+1)
		for _, w := range u.waiting[i:] {
			signal(w.moved)
		}
	}
	u.admit()
}

// admit gives free slots to the joins waiting first. u.mu is held.
func (u *uplink) admit() {
	n := 0
	for n < len(u.waiting) && (u.slots == 0 || len(u.active) < u.slots) {
		up := u.waiting[n]
		up.started = u.now()
		u.active = append(u.active, up)
		close(up.ready)
		n++
	}
	if n == 0 {
		return
	}
	u.waiting = slices.Delete(u.waiting, 0, n)
	for _, w := range u.waiting {
		signal(w.moved)
	}
}

// signal sends on a capacity-1 channel without blocking.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// share is the rate each join's transfer can count on: the cap divided
// among the joins on their way, or 0 without a cap.
func (u *uplink) share() float64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.paced() {
		return 0
	}
	return u.rate / float64(max(len(u.active), 1))
}

// UploadsView is the world transfers of an Overview: the upload cap and
// slots, the joins whose worlds are on their way and those waiting.
type UploadsView struct {
	// Rate is the cap on all world transfers together, in bytes per
	// second (0: none); Slots how many joins' worlds go at once (0: no
	// limit).
	Rate  float64
	Slots int
	// Sending lists the joins whose worlds are on their way, oldest
	// first; Waiting the names of those waiting for a slot, first in line
	// first.
	Sending []TransferView
	Waiting []string
}

// TransferView is one join's world on its way.
type TransferView struct {
	Name string
	// Acked is the bytes the joiner acknowledged, of Total.
	Acked, Total uint64
	// Started is when it got its slot.
	Started time.Time
	// ETA is the time left at the rate acknowledged so far (0: not known
	// yet).
	ETA time.Duration
}

// view is the uplink as of now.
func (u *uplink) view(now time.Time) UploadsView {
	u.mu.Lock()
	defer u.mu.Unlock()
	v := UploadsView{Rate: u.rate, Slots: u.slots, Sending: []TransferView{}, Waiting: []string{}}
	for _, up := range u.active {
		tv := TransferView{Name: up.name, Started: up.started}
		if up.t != nil {
			tv.Acked, tv.Total = up.t.acked.Load(), up.t.pl.Total()
			tv.ETA = eta(tv.Acked, tv.Total, now.Sub(up.started))
		}
		v.Sending = append(v.Sending, tv)
	}
	for _, up := range u.waiting {
		v.Waiting = append(v.Waiting, up.name)
	}
	return v
}

// eta is the time left to send total bytes after done took elapsed, at
// the same rate; 0 when nothing is done yet.
func eta(done, total uint64, elapsed time.Duration) time.Duration {
	if done == 0 || done >= total || elapsed <= 0 {
		return 0
	}
	rate := float64(done) / elapsed.Seconds()
	return time.Duration(float64(total-done) / rate * float64(time.Second))
}
