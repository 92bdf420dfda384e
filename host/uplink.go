package host

import (
	"cmp"
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

// shareWindowTime and minShareWindow size the download window of a join
// under the share policy: the bytes it may have unacknowledged are at
// most shareWindowTime of its share, and at least minShareWindow. A
// share then flows to a joiner whose round trip is up to shareWindowTime,
// while a client that takes chunks but acknowledges a trickle holds only
// that much of the cap each turn.
const (
	shareWindowTime = 500 * time.Millisecond
	minShareWindow  = 256 << 10
)

// shareFloor says how far below its share a join's download may run
// while others wait: a join holding a slot that acknowledges less than
// 1/shareFloor of the cap's share per slot over a share window gives its
// slot up to the next in line.
const shareFloor = 4

// uplink shares the host's upload among world transfers, as one budget
// for all of them, not one per joiner: a token bucket of
// Config.Join.MaxUploadRate bytes per second that every transfer's chunks
// draw from (ticks, commands and every other small packet never do), and
// Config.Join.MaxUploadSlots joins' worlds on their way at once, the next
// joiners waiting in the order they came.
//
// A slot is a share of the cap, not a lease: under a cap, a join whose
// acknowledgements run below a quarter of its share (the cap divided by
// the slots) over a share window (Config.Join.SlotShareWindow) while
// another join waits yields its slot (review). Its download pauses where
// it is and it waits again, behind every join waiting that has not had a
// turn yet and behind those that yielded before it; its turn back
// resumes the download where it stopped. Alone, or with no one waiting,
// a slow join keeps its slot. Its unacknowledged bytes are bounded by a
// fraction of its share (downloadWindow), so a turn costs the others
// little. Any goroutine may call the uplink; the session reviews the
// slots on its tick.
type uplink struct {
	rate   float64       // bytes per second; 0: no cap
	burst  float64       // the bucket's size in bytes
	slots  int           // joins sent at once; 0: no limit
	window time.Duration // the share window; 0: a slot is never taken back
	now    func() time.Time

	mu      sync.Mutex
	tokens  float64   // bytes that may go now; below 0, the debt of chunks already granted
	last    time.Time // when tokens was brought up to date
	granted uint64    // bytes granted in all
	active  []*upload // joins whose worlds are on their way, in the order they started
	waiting []*upload // joins waiting for a slot, first come first
}

// upload is one join's world in the uplink: waiting for a slot, then on
// its way; under the share policy it may wait again (yielded) and go on.
// Its fields are the uplink's, under its lock.
type upload struct {
	name    string
	t       *transfer     // set when it starts
	started time.Time     // when it got its slot
	ready   chan struct{} // closed when it gets its slot
	moved   chan struct{} // a signal (capacity 1) that its place in line changed

	// notify, set when the transfer starts, tells the join's reader that
	// it yielded its slot, moved up in line since, or has its slot back
	// (turn). The uplink calls it under its lock: it must not block or
	// call the uplink.
	notify func(turn)

	yielded   bool          // it waits again after yielding its slot
	yields    int           // how many times it yielded
	waitFrom  time.Time     // when it last yielded
	waited    time.Duration // time it waited after yielding, before waitFrom
	told      int           // the place in line it was last told, while yielded (-1: none yet)
	yieldRate float64       // the rate it ran at when it last yielded, bytes per second
	markAt    time.Time     // start of the share window it is measured over
	markAcked uint64        // bytes acknowledged at markAt
}

// turn is what a join that yielded its slot is told: it waits (ahead
// joins before it, having just yielded after running at rate bytes per
// second, under a share of share), or it has its slot back.
type turn struct {
	waiting     bool
	ahead       int
	yielded     bool
	rate, share float64
	yields      int           // the times it yielded its slot, this one included
	waited      time.Duration // the time it waited after yielding, in all
}

// newUplink is the uplink of rate bytes per second (-1 or 0: no cap) and
// slots joins at once (-1 or 0: no limit), taking a slot back from a
// join that runs far below its share over window (not positive: never).
func newUplink(rate float64, slots int, window time.Duration) *uplink {
	u := &uplink{rate: max(rate, 0), slots: max(slots, 0), window: max(window, 0), now: time.Now}
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

// downloadWindow is how far a join's download may run ahead of its
// acknowledgements, configured (Config.Join.DownloadWindow; not
// positive: no limit): under the share policy (a cap, slots and a share
// window) at most shareWindowTime of a share, and at least
// minShareWindow, so that a slow reader's turn costs the others little.
func (u *uplink) downloadWindow(configured int64) uint64 {
	if configured <= 0 {
		return 0
	}
	w := uint64(configured)
	if u.window <= 0 || !u.paced() || u.slots == 0 {
		return w
	}
	return min(w, max(uint64(u.rate/float64(u.slots)*shareWindowTime.Seconds()), minShareWindow))
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
	// A join that never had its turn goes before those that yielded theirs.
	i := slices.IndexFunc(u.waiting, func(w *upload) bool { return w.yielded })
	if i < 0 {
		i = len(u.waiting)
	}
	u.waiting = slices.Insert(u.waiting, i, up)
	u.admit()
	u.tellMoved(i + 1)
	return up
}

// place is how many joins wait ahead of up, and whether up still waits.
func (u *uplink) place(up *upload) (ahead int, waiting bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := slices.Index(u.waiting, up)
	return max(i, 0), i >= 0
}

// start records the transfer of a join that has its slot, and what tells
// its reader of a yield (nil: nothing).
func (u *uplink) start(up *upload, t *transfer, notify func(turn)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	up.t, up.notify = t, notify
	up.markAt, up.markAcked = u.now(), t.acked.Load()
}

// hold runs fn under the uplink's lock with whether up waits after
// yielding its slot and the time it has waited so in all, up to now:
// the reader sets its deadlines there, in order with what notify sets.
func (u *uplink) hold(up *upload, fn func(waiting bool, waited time.Duration)) {
	u.mu.Lock()
	defer u.mu.Unlock()
	waited := up.waited
	if up.yielded {
		waited += u.now().Sub(up.waitFrom)
	}
	fn(up.yielded, waited)
}

// leave takes a join out of the uplink, waiting or on its way, and gives
// its slot to the next in line.
func (u *uplink) leave(up *upload) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.active = slices.DeleteFunc(u.active, func(x *upload) bool { return x == up })
	if i := slices.Index(u.waiting, up); i >= 0 {
		u.waiting = slices.Delete(u.waiting, i, i+1)
		up.yielded = false
		u.tellMoved(i)
	}
	u.admit()
}

// admit gives free slots to the joins waiting first: a join's first turn
// starts its download, a turn back after a yield resumes it. u.mu is held.
func (u *uplink) admit() {
	n := 0
	now := u.now()
	for n < len(u.waiting) && (u.slots == 0 || len(u.active) < u.slots) {
		up := u.waiting[n]
		u.active = append(u.active, up)
		n++
		if !up.yielded {
			up.started = now
			close(up.ready)
			continue
		}
		up.yielded = false
		up.waited += now.Sub(up.waitFrom)
		up.markAt, up.markAcked = now, up.t.acked.Load()
		up.t.hold(false)
		if up.notify != nil {
			up.notify(turn{yields: up.yields, waited: up.waited})
		}
	}
	if n == 0 {
		return
	}
	u.waiting = slices.Delete(u.waiting, 0, n)
	u.tellMoved(0)
}

// tellMoved tells the joins waiting from index from on that their place
// changed: those waiting their first turn by their moved signal, those
// that yielded by notify. u.mu is held.
func (u *uplink) tellMoved(from int) {
	for i, w := range u.waiting[min(from, len(u.waiting)):] {
		if !w.yielded {
			signal(w.moved)
			continue
		}
		if ahead := from + i; ahead != w.told && w.notify != nil {
			tn := turn{waiting: true, ahead: ahead}
			if w.told < 0 { // the first word since it yielded: why
				tn.yielded, tn.rate, tn.share, tn.yields = true, w.yieldRate, u.rate/float64(max(u.slots, 1)), w.yields
			}
			w.told = ahead
			w.notify(tn)
		}
	}
}

// review takes back the slots of joins running far below their share
// while others wait (see uplink): each join holding a slot is measured
// over a share window from its turn's start, and over the next window
// after each; one whose window's acknowledgements fell below
// 1/shareFloor of its share while a join waited yields its slot, the
// slowest first, at most one per join waiting. The session calls it on
// its tick, with the time of the tick.
func (u *uplink) review(now time.Time) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.window <= 0 || !u.paced() || u.slots == 0 || len(u.active) == 0 {
		return
	}
	share := u.rate / float64(u.slots)
	type slow struct {
		up   *upload
		rate float64
	}
	var slows []slow
	for _, up := range u.active {
		if up.t == nil || now.Sub(up.markAt) < u.window {
			continue
		}
		acked := up.t.acked.Load()
		rate := float64(acked-up.markAcked) / now.Sub(up.markAt).Seconds()
		if len(u.waiting) > 0 && rate < share/shareFloor {
			slows = append(slows, slow{up, rate})
			continue
		}
		up.markAt, up.markAcked = now, acked
	}
	if len(slows) == 0 {
		return
	}
	slices.SortStableFunc(slows, func(a, b slow) int { return cmp.Compare(a.rate, b.rate) })
	waiting := len(u.waiting)
	for i, s := range slows {
		if i >= waiting {
			// Enough slots are free for those waiting: the rest are
			// measured again over the next window.
			s.up.markAt, s.up.markAcked = now, s.up.t.acked.Load()
			continue
		}
		u.yield(s.up, now, s.rate)
	}
	u.admit()
	u.tellMoved(0)
}

// yield takes up's slot, which it used at rate bytes per second: its
// download pauses where it is, and it waits at the back of the line,
// told so (tellMoved) once the line has moved. u.mu is held.
func (u *uplink) yield(up *upload, now time.Time, rate float64) {
	u.active = slices.DeleteFunc(u.active, func(x *upload) bool { return x == up })
	up.yielded, up.waitFrom = true, now
	up.yields++
	up.yieldRate, up.told = rate, -1
	up.t.hold(true)
	u.waiting = append(u.waiting, up)
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
