package snapshot

import (
	"bytes"
	"errors"
	"testing"
)

func TestReceiverChunked(t *testing.T) {
	sim := runSim(t, 3, 5000, 40)
	p := cutPoint(t, sim, DefaultLevel)
	pl, err := NewPayload(p, 2, sim.Tick(), joinCommands(sim.Tick()))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{p.World.Data}
	for _, m := range p.Maps {
		want = append(want, m.Blob.Data)
	}
	for _, size := range []int{1, 7, 100, 4096, int(pl.Total())} {
		var got [][]byte
		var at []uint64 // bytes received when each blob was handed on
		var r *Receiver
		r = NewReceiver(pl.Total(), func(i int, b Blob) error {
			if i != len(got) {
				t.Fatalf("blob %d handed on as number %d", i, len(got))
			}
			got = append(got, b.Data)
			at = append(at, r.Received())
			return nil
		})
		for off := uint64(0); off < pl.Total(); {
			c := pl.Chunk(off, size)
			done, err := r.Add(off, pl.Total(), c)
			if err != nil {
				t.Fatalf("size %d at %d: %v", size, off, err)
			}
			off += uint64(len(c))
			if done != (off == pl.Total()) {
				t.Fatalf("size %d: done=%v at %d of %d", size, done, off, pl.Total())
			}
		}
		if len(got) != len(want) {
			t.Fatalf("size %d: %d blobs, want %d", size, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("size %d: blob %d differs", size, i)
			}
		}
		// With small chunks, the world blob is handed on long before the
		// transfer ends: decompression can overlap the download.
		if size < 4096 && at[0] >= pl.Total()-uint64(len(want[len(want)-1])) {
			t.Fatalf("size %d: world blob handed on only at %d of %d", size, at[0], pl.Total())
		}
		if r.Header() == nil || r.Header().Faction != 2 {
			t.Fatalf("header %+v", r.Header())
		}
	}
}

func TestReceiverRefusals(t *testing.T) {
	sim := runSim(t, 2, 300, 10)
	p := cutPoint(t, sim, DefaultLevel)
	pl, _ := NewPayload(p, 1, sim.Tick(), nil)
	valid := bytes.Clone(pl.Bytes())
	nop := func(int, Blob) error { return nil }

	if _, err := NewReceiver(pl.Total()-1, nop).Add(0, pl.Total(), valid[:10]); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over limit: %v", err)
	}
	bad := bytes.Clone(valid)
	bad[prefixSize] ^= 0x01 // first header byte
	if _, err := NewReceiver(pl.Total(), nop).Add(0, pl.Total(), bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("tampered header: %v, want ErrMalformed", err)
	}
	bad = bytes.Clone(valid)
	bad[5] ^= 0x01 // header hash
	if _, err := NewReceiver(pl.Total(), nop).Add(0, pl.Total(), bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("tampered header hash: %v, want ErrMalformed", err)
	}
	r := NewReceiver(pl.Total(), nop)
	if _, err := r.Add(0, pl.Total(), valid[:20]); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(21, pl.Total(), valid[21:30]); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("gap: %v, want ErrOutOfOrder", err)
	}
	stop := errors.New("stop")
	if _, err := NewReceiver(pl.Total(), func(int, Blob) error { return stop }).Add(0, pl.Total(), valid); !errors.Is(err, stop) {
		t.Errorf("callback error: %v", err)
	}
}

// TestReceiverOnHeader: the header callback runs once, before the first
// blob, whatever the chunk size, and its error stops the transfer.
func TestReceiverOnHeader(t *testing.T) {
	sim := runSim(t, 3, 5000, 40)
	p := cutPoint(t, sim, DefaultLevel)
	pl, err := NewPayload(p, 2, sim.Tick(), joinCommands(sim.Tick()))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 100, int(pl.Total())} {
		calls, blobs := 0, 0
		r := NewReceiver(pl.Total(), func(int, Blob) error {
			if calls != 1 {
				t.Fatalf("size %d: a blob with the header callback called %d times", size, calls)
			}
			blobs++
			return nil
		})
		r.OnHeader(func(h *Header) error {
			calls++
			if h.Faction != 2 || blobs != 0 {
				t.Fatalf("size %d: header %+v after %d blobs", size, h, blobs)
			}
			return nil
		})
		for off := uint64(0); off < pl.Total(); {
			c := pl.Chunk(off, size)
			if _, err := r.Add(off, pl.Total(), c); err != nil {
				t.Fatalf("size %d at %d: %v", size, off, err)
			}
			off += uint64(len(c))
		}
		if calls != 1 || blobs != 1+len(p.Maps) {
			t.Fatalf("size %d: header callback %d times, %d blobs", size, calls, blobs)
		}
	}
	stop := errors.New("no room")
	r := NewReceiver(pl.Total(), func(int, Blob) error { t.Fatal("a blob after the header was refused"); return nil })
	r.OnHeader(func(*Header) error { return stop })
	if _, err := r.Add(0, pl.Total(), pl.Chunk(0, int(pl.Total()))); !errors.Is(err, stop) {
		t.Fatalf("error %v, want the callback's", err)
	}
}
