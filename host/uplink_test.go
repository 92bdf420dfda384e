package host

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// TestUplinkSharedBucket: two transfers taking chunks turn about from one
// uplink get, together, no more than the burst plus the rate times the
// time their chunks may go: the cap is the host's, not each joiner's. The
// clock is the test's; what is counted is the bytes granted and the times
// the uplink gives them.
func TestUplinkSharedBucket(t *testing.T) {
	const rate = 100 << 10 // 100 KiB/s
	clock := &fakeClock{t: time.Unix(1000, 0)}
	u := newUplink(rate, -1, 0)
	u.now = clock.now
	start := clock.t
	var granted [2]uint64
	var total uint64
	var last time.Time
	for i := range 2 * 64 {
		who := i % 2
		at := u.take(pacedChunk)
		granted[who] += pacedChunk
		total += pacedChunk
		if allowed := u.burst + rate*at.Sub(start).Seconds(); float64(total) > allowed+1 {
			t.Fatalf("chunk %d: %d bytes granted by %v, over the burst plus the rate (%.0f)", i, total, at.Sub(start), allowed)
		}
		if at.Before(last) {
			t.Fatalf("chunk %d may go at %v, before the one granted before it (%v)", i, at, last)
		}
		last = at
		// The writer sends its chunk when the uplink says, then asks for the next.
		if at.After(clock.t) {
			clock.t = at
		}
	}
	if granted[0] != granted[1] {
		t.Errorf("granted %d and %d bytes: the two transfers do not share the rate evenly", granted[0], granted[1])
	}
	// Two joiners at 1 MiB each take as long as one would take for 2 MiB:
	// the rate is not doubled by a second joiner.
	want := time.Duration((float64(total) - u.burst) / rate * float64(time.Second))
	if got := last.Sub(start); got < want-time.Millisecond {
		t.Errorf("2 MiB granted after %v; at %d B/s shared it takes at least %v", got, rate, want)
	}
	if u.granted != total {
		t.Errorf("uplink counted %d bytes granted, want %d", u.granted, total)
	}
}

// TestUplinkSlotsInOrder: with two slots a third join waits, told its
// place; when a join ends its slot goes to the first in line.
func TestUplinkSlotsInOrder(t *testing.T) {
	u := newUplink(-1, 2, 0)
	a, b, c, d := u.enter("a"), u.enter("b"), u.enter("c"), u.enter("d")
	for _, up := range []*upload{a, b} {
		select {
		case <-up.ready:
		default:
			t.Fatalf("%s has no slot with a slot free", up.name)
		}
	}
	for i, up := range []*upload{c, d} {
		select {
		case <-up.ready:
			t.Fatalf("%s has a slot beyond the two", up.name)
		default:
		}
		if ahead, waiting := u.place(up); !waiting || ahead != i {
			t.Errorf("%s: %d ahead, waiting %v; want %d, true", up.name, ahead, waiting, i)
		}
	}
	if v := u.view(time.Now()); len(v.Sending) != 2 || len(v.Waiting) != 2 || v.Waiting[0] != "c" {
		t.Errorf("view %+v", v)
	}
	u.leave(b)
	select {
	case <-c.ready:
	default:
		t.Fatal("c, first in line, did not get b's slot")
	}
	select {
	case <-d.moved:
	default:
		t.Fatal("d was not told its place changed")
	}
	if ahead, waiting := u.place(d); !waiting || ahead != 0 {
		t.Errorf("d: %d ahead, waiting %v; want 0, true", ahead, waiting)
	}
	u.leave(d) // a join that gives up while waiting leaves the line
	u.leave(a)
	if v := u.view(time.Now()); len(v.Sending) != 1 || len(v.Waiting) != 0 {
		t.Errorf("after leaves: %+v", v)
	}
}

// TestTicksNotBehindWorldChunks: a downloading client's connection
// carries its ticks and commands between world chunks of at most
// pacedChunk bytes when the upload is paced, so a tick queued while a
// chunk is on its way waits for that chunk alone, not for a quarter
// megabyte. The client counts the world bytes that reach it between the
// moment a tick is queued and the tick.
func TestTicksNotBehindWorldChunks(t *testing.T) {
	pl := testPayload(t)
	hostEnd, clientEnd := net.Pipe() // no buffer: what the host writes waits for the reader
	defer clientEnd.Close()
	c := newConn(hostEnd, 64, 1<<20, 10*time.Second, testkit.Quiet())
	c.up = newUplink(64<<20, -1, 0) // paced, fast enough not to slow the test
	defer c.close(wire.ReasonServerClosing, "")
	c.startTransfer(newRepairTransfer(pl))
	tick := wire.MustMarshal(&wire.ServerTick{Tick: 7})

	var worldBytes, queuedAt uint64
	queued, worst, ticks := false, uint64(0), 0
	for worldBytes < pl.Total() {
		id, body := readFrame(t, clientEnd, func(read int) {
			// Midway through each world chunk, the session queues a tick.
			if !queued && read > 1024 {
				queued, queuedAt = true, worldBytes
				c.send(tick)
			}
		})
		switch id {
		case wire.IDServerWorldData:
			worldBytes += uint64(body)
		case wire.IDServerTick:
			ticks++
			worst = max(worst, worldBytes-queuedAt)
			queued = false
		}
	}
	if ticks == 0 {
		t.Fatal("no tick reached the client")
	}
	if worst > pacedChunk {
		t.Errorf("a tick waited behind %d bytes of world data, more than one paced chunk (%d)", worst, pacedChunk)
	}
}

// testPayload is a join point payload of about a megabyte of random
// bytes, which no codec shrinks.
func testPayload(t *testing.T) *snapshot.Payload {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	raw := &snapshot.Raw{Tick: 1, World: random(64), MapHashes: []uint64{1, 2},
		Maps: []lockstep.MapBlob{{ID: 1, Data: random(600 << 10)}, {ID: 2, Data: random(600 << 10)}}}
	pt, err := raw.Compress(snapshot.Compression{Codec: snapshot.Gzip, Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(pt, 1, pt.Tick, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Total() < 4*wire.MaxChunkData {
		t.Fatalf("payload of %d bytes: too small to show chunking", pl.Total())
	}
	return pl
}

// readFrame reads one frame from r in small reads, calling during after
// each read of the frame with the bytes read so far, and returns the
// packet ID and, for world data, the chunk's data length.
func readFrame(t *testing.T, r io.Reader, during func(read int)) (wire.ID, int) {
	t.Helper()
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		t.Fatal(err)
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	var body bytes.Buffer
	buf := make([]byte, 512)
	for body.Len() < n {
		k, err := r.Read(buf[:min(len(buf), n-body.Len())])
		if err != nil {
			t.Fatal(err)
		}
		body.Write(buf[:k])
		during(body.Len())
	}
	b := body.Bytes()
	id := wire.ID(b[0])
	if id != wire.IDServerWorldData {
		return id, 0
	}
	p, err := wire.Decode(id, b[1:])
	if err != nil {
		t.Fatal(err)
	}
	return id, len(p.(*wire.ServerWorldData).Data)
}

// shareJoin is one join of a share-policy test: its upload, its transfer
// and what the uplink told it.
type shareJoin struct {
	up    *upload
	t     *transfer
	turns []turn
}

// startShare puts a join in line and, once it has its slot, starts its
// transfer as the reader does.
func startShare(t *testing.T, u *uplink, name string) *shareJoin {
	t.Helper()
	j := &shareJoin{up: u.enter(name), t: newJoinTransfer(nil, 2<<20)}
	return j
}

// begin starts j's transfer, which must have its slot.
func (j *shareJoin) begin(t *testing.T, u *uplink) {
	t.Helper()
	select {
	case <-j.up.ready:
	default:
		t.Fatalf("%s has no slot", j.up.name)
	}
	u.start(j.up, j.t, func(tn turn) { j.turns = append(j.turns, tn) })
}

func (j *shareJoin) sending(u *uplink) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Contains(u.active, j.up)
}

// TestUplinkSlowHolderYields: under a cap of 1 MB/s with two slots (a
// share of 500 kB/s each), a join that acknowledges 40 KiB/s while
// another waits gives its slot to it after one share window: its
// transfer pauses, it is told why and its place, and it waits behind a
// newcomer that never had a turn. A fast join keeps its slot. When the
// others are done the slow join gets its slot back, its transfer goes on
// where it stopped, and the time it waited is reported. The clock is the
// test's; what is checked is who holds the slots.
func TestUplinkSlowHolderYields(t *testing.T) {
	const window = 5 * time.Second
	clock := &fakeClock{t: time.Unix(1000, 0)}
	u := newUplink(1e6, 2, window)
	u.now = clock.now
	fast, slow := startShare(t, u, "fast"), startShare(t, u, "slow")
	fast.begin(t, u)
	slow.begin(t, u)
	honest := startShare(t, u, "honest")

	// One second short of a window: nobody is judged yet.
	var fastAcked, slowAcked uint64
	step := func(d time.Duration) {
		clock.t = clock.t.Add(d)
		fastAcked += uint64(600e3 * d.Seconds())
		slowAcked += uint64(40 << 10 * d.Seconds())
		fast.t.ack(fastAcked)
		slow.t.ack(slowAcked)
		u.review(clock.t)
	}
	step(window - time.Second)
	if !slow.sending(u) || !fast.sending(u) {
		t.Fatal("a join lost its slot before a share window passed")
	}
	step(time.Second)
	if slow.sending(u) {
		t.Fatal("the slow join kept its slot after a share window at 40 KiB/s while another waited")
	}
	if !fast.sending(u) {
		t.Fatal("the fast join lost its slot")
	}
	honest.begin(t, u)
	if !slow.t.ahead(slowAcked) || !slow.t.paused.Load() {
		t.Error("the slow join's transfer goes on without its slot")
	}
	if len(slow.turns) != 1 || !slow.turns[0].yielded || !slow.turns[0].waiting || slow.turns[0].ahead != 0 {
		t.Fatalf("the slow join was told %+v; want one turn: yielded, waiting, first in line", slow.turns)
	}
	if r := slow.turns[0].rate; r < 40<<10-1 || r > 40<<10+1 || slow.turns[0].share != 500e3 {
		t.Errorf("told rate %.0f B/s under a share of %.0f; want 40 KiB/s under 500 kB/s", r, slow.turns[0].share)
	}

	// A newcomer that never had a turn goes before the join that yielded.
	late := startShare(t, u, "late")
	if ahead, waiting := u.place(late.up); !waiting || ahead != 0 {
		t.Errorf("the newcomer: %d ahead, waiting %v; want first in line", ahead, waiting)
	}
	if ahead, waiting := u.place(slow.up); !waiting || ahead != 1 {
		t.Errorf("the slow join: %d ahead, waiting %v; want second in line", ahead, waiting)
	}
	if n := len(slow.turns); n != 2 || slow.turns[1].ahead != 1 || slow.turns[1].yielded {
		t.Errorf("after the newcomer the slow join was told %+v; want its new place, 2nd", slow.turns)
	}

	// The others finish.
	clock.t = clock.t.Add(20 * time.Second)
	u.leave(fast.up)
	late.begin(t, u)
	u.leave(honest.up)
	if !slow.sending(u) {
		t.Fatal("the slow join did not get its slot back when the line emptied")
	}
	if slow.t.paused.Load() || slow.t.ahead(slowAcked) {
		t.Error("the slow join's transfer is still paused with its slot back")
	}
	last := slow.turns[len(slow.turns)-1]
	if last.waiting || last.waited != 20*time.Second {
		t.Errorf("the slow join's turn back: %+v; want not waiting, 20s waited", last)
	}

	// With no one waiting, a slow join keeps its slot for as long as it
	// takes.
	for range 20 {
		step(window)
	}
	if !slow.sending(u) {
		t.Fatal("the slow join lost its slot with no one waiting")
	}
	if n := len(slow.turns); n != 4 {
		t.Errorf("the slow join was told %d turns, want 4: %+v", n, slow.turns)
	}
}

// deadlineConn records the read deadlines set on it.
type deadlineConn struct {
	net.Conn
	read []time.Time
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.read = append(c.read, t)
	return nil
}

// TestDownloadDeadlinesSkipWaits: a download's read deadline is its own
// (minimum-rate) deadline while it holds its slot, none while it waits
// for its slot back after yielding it, and after its turn back that
// deadline moved on by the time it waited; the download is past it only
// when the time it held its slot is. The uplink's clock is the test's; the
// deadline is set long enough ago to be the sooner one.
func TestDownloadDeadlinesSkipWaits(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	u := newUplink(1e6, 1, time.Second)
	u.now = clock.now
	nc := &deadlineConn{}
	srv := &Server{cfg: Config{Timeouts: TimeoutConfig{DownloadStall: time.Hour}}, uplink: u, sess: &session{stats: &stats{}}}
	hostEnd, clientEnd := net.Pipe() // the notices go here
	go func() { _, _ = io.Copy(io.Discard, clientEnd) }()
	c := newConn(hostEnd, 8, 1<<20, time.Second, testkit.Quiet())
	defer c.close(wire.ReasonServerClosing, "")
	p := &peer{srv: srv, nc: nc, conn: c, log: testkit.Quiet(), slot: u.enter("slow"), finish: time.Now().Add(-time.Minute)}
	<-p.slot.ready
	tr := newJoinTransfer(nil, 0)
	u.start(p.slot, tr, p.slotTurn)
	last := func() time.Time { return nc.read[len(nc.read)-1] }

	u.hold(p.slot, p.downloadDeadline)
	if !last().Equal(p.finish) {
		t.Fatalf("holding its slot: deadline %v, want the download's own, %v", last(), p.finish)
	}
	if !p.pastFinish() {
		t.Error("holding its slot, the download is not past a deadline a minute ago")
	}

	other := u.enter("other")
	clock.t = clock.t.Add(time.Second)
	u.review(clock.t)
	if !last().IsZero() {
		t.Fatalf("waiting after yielding: deadline %v, want none", last())
	}
	u.hold(p.slot, p.downloadDeadline) // an acknowledgement of bytes already on their way
	if !last().IsZero() {
		t.Fatalf("acknowledging while it waits: deadline %v, want none", last())
	}
	if p.pastFinish() {
		t.Error("waiting for its slot back, the download is past its deadline")
	}

	clock.t = clock.t.Add(90 * time.Second)
	u.leave(other)
	want := p.finish.Add(90 * time.Second)
	if !last().Equal(want) {
		t.Fatalf("its turn back after 90 s: deadline %v, want %v", last(), want)
	}
	if p.pastFinish() {
		t.Error("after 90 s waited, the download is past a deadline a minute ago")
	}
	u.hold(p.slot, p.downloadDeadline)
	if !last().Equal(want) {
		t.Fatalf("acknowledging after its turn back: deadline %v, want %v", last(), want)
	}
}

// TestShareDownloadWindow: under the share policy a join's download may
// run at most half a second of its share ahead of its acknowledgements
// (at least 256 KiB), so a client that takes chunks and acknowledges a
// trickle draws little of the cap in its turn; with a share large enough,
// without a cap, slots or share window, the configured window stands,
// and -1 is still no limit.
func TestShareDownloadWindow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rate       float64
		slots      int
		window     time.Duration
		configured int64
		want       uint64
	}{
		{"8 Mbit/s, 2 slots", 1e6, 2, 5 * time.Second, 2 << 20, minShareWindow},
		{"8 Mbit/s, 1 slot", 1e6, 1, 5 * time.Second, 2 << 20, 500e3},
		{"a share past the window", 100e6, 2, 5 * time.Second, 2 << 20, 2 << 20},
		{"no cap", -1, 2, 5 * time.Second, 2 << 20, 2 << 20},
		{"no slots", 1e6, -1, 5 * time.Second, 2 << 20, 2 << 20},
		{"no share window", 1e6, 2, -1, 2 << 20, 2 << 20},
		{"no window", 1e6, 2, 5 * time.Second, -1, 0},
	} {
		u := newUplink(tc.rate, tc.slots, tc.window)
		if got := u.downloadWindow(tc.configured); got != tc.want {
			t.Errorf("%s: window %d, want %d", tc.name, got, tc.want)
		}
	}
	// What the writer makes of it: 256 KiB unacknowledged, and it waits.
	u := newUplink(1e6, 2, 5*time.Second)
	tr := newJoinTransfer(nil, u.downloadWindow(2<<20))
	tr.ack(100 << 10)
	if !tr.ahead(100<<10 + minShareWindow) {
		t.Errorf("the writer may run %d bytes past the acknowledgements", minShareWindow)
	}
	if tr.ahead(100<<10 + minShareWindow - 1) {
		t.Error("the writer waits before the window is full")
	}
}
