package snapshot

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// A resumed payload leaves out the blobs the joiner holds, lists them in
// the header, and a receiver hands them on in order through OnHeld while
// the others arrive as usual.
func TestResumedPayload(t *testing.T) {
	sim := runSim(t, 4, 3000, 30)
	p := cutPoint(t, sim, DefaultLevel)
	full, err := NewPayload(p, 1, sim.Tick(), joinCommands(sim.Tick()))
	if err != nil {
		t.Fatal(err)
	}
	held := map[uint64]bool{p.World.Hash: true, p.Maps[2].Blob.Hash: true, 12345: true}
	pl, err := NewResumedPayload(p, 1, sim.Tick(), joinCommands(sim.Tick()), held)
	if err != nil {
		t.Fatal(err)
	}
	saved := uint64(len(p.World.Data) + len(p.Maps[2].Blob.Data))
	if pl.Held() != saved || pl.Total() != full.Total()-saved+uint64(len(pl.segs[0])-len(full.segs[0])) {
		t.Fatalf("held %d bytes of %d, total %d of %d", pl.Held(), saved, pl.Total(), full.Total())
	}
	var order []int
	r := NewReceiver(pl.Total(), func(i int, b Blob) error {
		order = append(order, i)
		want := p.World.Data
		if i > 0 {
			want = p.Maps[i-1].Blob.Data
		}
		if !bytes.Equal(b.Data, want) {
			t.Errorf("blob %d differs", i)
		}
		return nil
	})
	r.OnHeld(func(i int, info BlobInfo) error {
		order = append(order, -i-1)
		return nil
	})
	b := pl.Bytes()
	for off := 0; off < len(b); off += 1000 {
		end := min(off+1000, len(b))
		if _, err := r.Add(uint64(off), pl.Total(), b[off:end]); err != nil {
			t.Fatal(err)
		}
		if got := pl.Complete(uint64(end)); len(got) > 0 && got[len(got)-1] != order[len(order)-1] {
			t.Fatalf("after %d bytes Complete says %v, the receiver handed on %v", end, got, order)
		}
	}
	var chunked []int // what CompletedIn says, 7 bytes at a time
	for off := uint64(0); off < pl.Total(); off += 7 {
		chunked = append(chunked, pl.CompletedIn(off, min(off+7, pl.Total()))...)
	}
	if !slices.Equal(chunked, pl.Complete(pl.Total())) {
		t.Fatalf("CompletedIn chunk by chunk gave %v, Complete(total) %v", chunked, pl.Complete(pl.Total()))
	}
	if want := []int{-1, 1, 2, -4, 4}; !slices.Equal(order, want) {
		t.Fatalf("blobs handed on in order %v, want %v (negative: held)", order, want)
	}
	if got := r.Header().Held; !slices.Equal(got, []uint32{0, 3}) {
		t.Fatalf("header holds %v", got)
	}
	if got := pl.Complete(pl.Total()); !slices.Equal(got, []int{1, 2, 4}) {
		t.Fatalf("Complete(total) = %v", got)
	}
	// Without OnHeld, and through Parse, a payload with held blobs is refused.
	if _, err := Parse(b); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Parse of a resumed payload: %v", err)
	}
}
