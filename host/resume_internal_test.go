package host

import (
	"errors"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// A resume may name only blobs this join was sent (written whole, or held
// from an earlier attempt), by index and hash; naming another is refused,
// and the payload then leaves out exactly the named ones.
func TestJoinProgressClaims(t *testing.T) {
	raw, err := snapshot.Cut(locksteptest.New(3, 5000))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := raw.Compress(snapshot.Compression{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(pt, 1, pt.Tick, nil)
	if err != nil {
		t.Fatal(err)
	}
	jp := newJoinProgress(1)
	tr := newJoinTransfer(pl, 0)
	jp.last.Store(tr)
	// Written up to the end of map 0's blob (index 1), acknowledged up to
	// the world blob only.
	var end1 uint64
	for off := uint64(1); off <= pl.Total(); off++ {
		if c := pl.Complete(off); len(c) == 2 {
			end1 = off
			break
		}
	}
	tr.wrote(end1 - 1) // the writer stores each chunk's end
	tr.wrote(end1)
	tr.ack(end1 - 1)

	world := wire.HeldBlob{Index: 0, Hash: pt.World.Hash}
	map0 := wire.HeldBlob{Index: 1, Hash: pt.Maps[0].Blob.Hash}
	for _, bad := range [][]wire.HeldBlob{
		{{Index: 2, Hash: pt.Maps[1].Blob.Hash}}, // never written
		{{Index: 2, Hash: pt.Maps[0].Blob.Hash}}, // written, but at index 1
		{world, {Index: 1, Hash: 42}},            // no such blob
	} {
		if _, err := jp.resume(bad); !errors.Is(err, errBadResume) {
			t.Fatalf("resume naming %v: %v, want errBadResume", bad, err)
		}
	}
	held, err := jp.resume([]wire.HeldBlob{world, map0})
	if err != nil {
		t.Fatal(err)
	}
	next, err := snapshot.NewResumedPayload(pt, 1, pt.Tick, nil, held)
	if err != nil {
		t.Fatal(err)
	}
	if got := next.HeldBlobs(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("resumed payload leaves out %v, want [0 1]", got)
	}
	if next.Held() != uint64(len(pt.World.Data)+len(pt.Maps[0].Blob.Data)) {
		t.Fatalf("resumed payload leaves out %d bytes", next.Held())
	}
}

// The recent joins list a join retried after drops once: the last
// attempt's outcome, the bytes of every attempt, the time from the first.
func TestHistoryMergesRetries(t *testing.T) {
	h := &history{}
	t0 := time.Now()
	h.join(JoinRecord{At: t0, Name: "Ann", Outcome: JoinOK, Join: 1})
	h.join(JoinRecord{At: t0.Add(2 * time.Second), Name: "Bo", Outcome: JoinDropped, Join: 2, Bytes: 100, Total: time.Second})
	h.join(JoinRecord{At: t0.Add(5 * time.Second), Name: "Bo", Outcome: JoinDropped, Join: 2, Retries: 1, Bytes: 50, Resumed: 70, Total: time.Second})
	h.join(JoinRecord{At: t0.Add(9 * time.Second), Name: "Bo", Outcome: JoinOK, Join: 2, Retries: 2, Bytes: 10, Resumed: 90, Total: 2 * time.Second})
	var o Overview
	h.fill(&o)
	if len(o.Joins) != 2 || o.Joins[1].Name != "Ann" {
		t.Fatalf("joins %+v, want Bo's one row and Ann's", o.Joins)
	}
	bo := o.Joins[0]
	if bo.Outcome != JoinOK || bo.Retries != 2 || bo.Bytes != 160 || bo.Resumed != 160 || bo.Total != 8*time.Second {
		t.Fatalf("Bo's join: %+v", bo)
	}
}
