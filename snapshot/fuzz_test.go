package snapshot

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

func FuzzParse(f *testing.F) {
	sim := runSim(f, 2, 64, 20)
	p := cutPoint(f, sim, DefaultLevel)
	for _, cmds := range [][]MapCommands{nil, joinCommands(sim.Tick())} {
		pl, err := NewPayload(p, 1, sim.Tick()+2, cmds)
		if err != nil {
			f.Fatal(err)
		}
		valid := pl.Bytes()
		f.Add(valid)
		f.Add(valid[:len(valid)/2])
	}
	empty, err := NewPayload(cutPoint(f, locksteptest.New(0, 0), DefaultLevel), 0, 0, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(empty.Bytes())
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		parsed, err := Parse(b)
		if err != nil {
			return
		}
		// What Parse accepts adds up exactly.
		if len(parsed.Maps) != len(parsed.Header.Maps) {
			t.Fatalf("%d map blobs for %d maps", len(parsed.Maps), len(parsed.Header.Maps))
		}
		size := prefixSize + uint64(binary.BigEndian.Uint32(b)) + uint64(len(parsed.World.Data))
		for i, m := range parsed.Maps {
			if uint64(len(m.Data)) != parsed.Header.Maps[i].Blob.Size {
				t.Fatalf("map %d blob of %d bytes, header says %d", i, len(m.Data), parsed.Header.Maps[i].Blob.Size)
			}
			size += uint64(len(m.Data))
		}
		if size != uint64(len(b)) {
			t.Fatalf("parts add up to %d bytes of %d", size, len(b))
		}
		sim, err := parsed.Load(locksteptest.Load, Limits{MaxRaw: 1 << 20})
		if err != nil {
			return
		}
		if sim.Tick() != parsed.Header.Tick || sim.WorldHash() != parsed.Header.WorldHash {
			t.Fatalf("Load accepted a world at tick %d hash %x; header says %d %x",
				sim.Tick(), sim.WorldHash(), parsed.Header.Tick, parsed.Header.WorldHash)
		}
	})
}

// FuzzReceiver feeds a receiver a valid payload cut into chunks whose
// sizes, offsets and totals come from the input, sometimes corrupted. It
// must never panic, never hand on a blob of a size the header did not
// declare, and finish only when every byte arrived.
func FuzzReceiver(f *testing.F) {
	sim := runSim(f, 3, 2000, 20)
	p := cutPoint(f, sim, DefaultLevel)
	pl, err := NewPayload(p, 1, sim.Tick(), joinCommands(sim.Tick()))
	if err != nil {
		f.Fatal(err)
	}
	valid := bytes.Clone(pl.Bytes())
	f.Add([]byte{0, 10, 0, 0, 20, 0, 200, 1, 5, 0})
	f.Add([]byte{1, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, ops []byte) {
		b := bytes.Clone(valid)
		total := uint64(len(b))
		var got uint64
		var r *Receiver
		r = NewReceiver(total, func(i int, blob Blob) error {
			h := r.Header()
			want := h.World.Size
			if i > 0 {
				want = h.Maps[i-1].Blob.Size
			}
			if uint64(len(blob.Data)) != want {
				t.Fatalf("blob %d of %d bytes, header says %d", i, len(blob.Data), want)
			}
			return nil
		})
		var off uint64
		for len(ops) >= 2 && off < total {
			mode, n := ops[0], uint64(ops[1])+1
			ops = ops[2:]
			end := min(off+n, total)
			chunk := b[off:end]
			tot := total
			switch mode % 8 {
			case 5:
				chunk = append(bytes.Clone(chunk), 0xff) // runs past
			case 6:
				tot = total + uint64(mode) // changes the total
			case 7:
				if len(chunk) > 0 {
					chunk = bytes.Clone(chunk)
					chunk[0] ^= mode | 1 // corrupts a byte
				}
			}
			done, err := r.Add(off, tot, chunk)
			if err != nil {
				return
			}
			off += uint64(len(chunk))
			got = r.Received()
			if done != (got == total) {
				t.Fatalf("done=%v after %d of %d bytes", done, got, total)
			}
		}
	})
}

// FuzzInflate gives the same blob to Decompress (in memory) and
// InflateFrom (streamed, as a save is read): they must accept and refuse
// alike, agree on the bytes, and never return more than the limit.
func FuzzInflate(f *testing.F) {
	raw := bytes.Repeat([]byte("map "), 300)
	good, err := Compress(raw, Compression{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good.Data, good.RawSize, int64(0))
	f.Add(good.Data, good.RawSize, int64(len(raw)-1))
	f.Add(good.Data, good.RawSize+1, int64(0))
	f.Add(good.Data[:len(good.Data)/2], good.RawSize, int64(0))
	f.Add(append(bytes.Clone(good.Data), 1, 2, 3), good.RawSize, int64(1<<20))
	f.Add([]byte{0x1f, 0x8b}, uint64(1<<63), int64(-1))
	f.Fuzz(func(t *testing.T, data []byte, rawSize uint64, limit int64) {
		b := Blob{Data: data, RawSize: rawSize, Hash: xxhash.Sum64(data)}
		mem, memErr := Decompress(b, limit)
		r := bytes.NewReader(append(bytes.Clone(data), "after"...))
		got, err := InflateFrom(r, info(b), limit)
		if (err == nil) != (memErr == nil) {
			t.Fatalf("streamed: %v; in memory: %v", err, memErr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(got, mem) || uint64(len(got)) != rawSize {
			t.Fatalf("streamed %d bytes, in memory %d, declared %d", len(got), len(mem), rawSize)
		}
		if limit > 0 && int64(len(got)) > limit {
			t.Fatalf("%d bytes over the limit %d", len(got), limit)
		}
		if r.Len() != len("after") {
			t.Fatalf("read %d bytes past the blob", len("after")-r.Len())
		}
	})
}

// FuzzReceiverHeld feeds a receiver a resumed payload whose held blobs
// and chunk size come from the input. The receiver must hand on every
// blob exactly once (received or held), in order, and be done only then.
func FuzzReceiverHeld(f *testing.F) {
	sim := runSim(f, 3, 2000, 20)
	p := cutPoint(f, sim, DefaultLevel)
	f.Add([]byte{0, 2}, uint16(700))
	f.Add([]byte{3}, uint16(100))
	f.Add([]byte{2, 1}, uint16(5000))
	f.Add([]byte{0, 1, 2, 3}, uint16(1))
	f.Fuzz(func(t *testing.T, heldIdx []byte, step uint16) {
		held := map[uint64]bool{}
		for _, i := range heldIdx {
			if i == 0 {
				held[p.World.Hash] = true
			} else if int(i) <= len(p.Maps) {
				held[p.Maps[i-1].Blob.Hash] = true
			}
		}
		pl, err := NewResumedPayload(p, 1, sim.Tick(), nil, held)
		if err != nil {
			t.Fatal(err)
		}
		b := pl.Bytes()
		next := 0
		r := NewReceiver(pl.Total(), func(i int, _ Blob) error {
			if i != next {
				t.Fatalf("blob %d handed on, expected %d", i, next)
			}
			next++
			return nil
		})
		r.OnHeld(func(i int, _ BlobInfo) error {
			if i != next {
				t.Fatalf("held blob %d handed on, expected %d", i, next)
			}
			next++
			return nil
		})
		n := int(step) + 1
		for off := 0; off < len(b); off += n {
			done, err := r.Add(uint64(off), pl.Total(), b[off:min(off+n, len(b))])
			if err != nil {
				t.Fatal(err)
			}
			if done && next != 1+len(p.Maps) {
				t.Fatalf("done after %d of %d blobs", next, 1+len(p.Maps))
			}
		}
		if next != 1+len(p.Maps) {
			t.Fatalf("%d of %d blobs handed on", next, 1+len(p.Maps))
		}
	})
}

// FuzzInflateZstd is FuzzInflate for zstd blobs: in memory and streamed
// they accept and refuse alike and never return more than the limit.
func FuzzInflateZstd(f *testing.F) {
	raw := bytes.Repeat([]byte("map "), 300)
	good, err := Compress(raw, Compression{Codec: Zstd})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good.Data, good.RawSize, int64(0))
	f.Add(good.Data, good.RawSize, int64(len(raw)-1))
	f.Add(good.Data, good.RawSize+1, int64(0))
	f.Add(good.Data[:len(good.Data)/2], good.RawSize, int64(0))
	f.Add(append(bytes.Clone(good.Data), good.Data...), good.RawSize*2, int64(0))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd}, uint64(1<<63), int64(-1))
	f.Fuzz(func(t *testing.T, data []byte, rawSize uint64, limit int64) {
		b := Blob{Data: data, RawSize: rawSize, Hash: xxhash.Sum64(data), Codec: Zstd}
		mem, memErr := Decompress(b, limit)
		r := bytes.NewReader(append(bytes.Clone(data), "after"...))
		got, err := InflateFrom(r, info(b), limit)
		if (err == nil) != (memErr == nil) {
			t.Fatalf("streamed: %v; in memory: %v", err, memErr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(got, mem) || uint64(len(got)) != rawSize {
			t.Fatalf("streamed %d bytes, in memory %d, declared %d", len(got), len(mem), rawSize)
		}
		if limit > 0 && int64(len(got)) > limit {
			t.Fatalf("%d bytes over the limit %d", len(got), limit)
		}
	})
}
