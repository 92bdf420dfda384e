package host

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
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
	u := newUplink(rate, -1)
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
	u := newUplink(-1, 2)
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
	c.up = newUplink(64<<20, -1) // paced, fast enough not to slow the test
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
