package snapshot

import (
	"bytes"
	"encoding/binary"
	"testing"

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
		valid := pl.Chunk(0, int(pl.Total()))
		f.Add(valid)
		f.Add(valid[:len(valid)/2])
	}
	empty, err := NewPayload(cutPoint(f, locksteptest.New(0, 0), DefaultLevel), 0, 0, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(empty.Chunk(0, int(empty.Total())))
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

// fuzzAssemblerLimit is small so the fuzzer reaches it.
const fuzzAssemblerLimit = 4096

// FuzzAssembler drives an assembler with operations decoded from the input,
// 5 bytes each: a mode byte, a 16-bit value and a 16-bit chunk length
// (modulo twice the limit). The mode's low bit picks the offset (the
// expected one, or the value), the next bit picks the total (the first one
// accepted, or the value).
func FuzzAssembler(f *testing.F) {
	f.Add([]byte{0, 0, 100, 0, 50, 0, 0, 100, 0, 50})             // two halves
	f.Add([]byte{2, 0x10, 0x01, 0, 4})                            // total over the limit
	f.Add([]byte{0, 0, 100, 0, 60, 0, 0, 100, 0, 60})             // past total
	f.Add([]byte{0, 0, 100, 0, 10, 1, 0, 50, 0, 10})              // out of order
	f.Add([]byte{0, 0, 100, 0, 10, 2, 0, 99, 0, 10})              // changing total
	f.Add([]byte{0, 0x10, 0x00, 0x08, 0x00, 0, 0, 0, 0x08, 0x00}) // exactly the limit
	// pattern[i] == byte(i); chunks are read-only slices of it.
	pattern := make([]byte, 256+2*fuzzAssemblerLimit)
	for i := range pattern {
		pattern[i] = byte(i)
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		a := NewAssembler(fuzzAssemblerLimit)
		var first uint64
		done := false
		for len(ops) >= 5 {
			mode, val, n := ops[0], uint64(binary.BigEndian.Uint16(ops[1:])), int(binary.BigEndian.Uint16(ops[3:])%(2*fuzzAssemblerLimit))
			ops = ops[5:]
			off := a.Received()
			if mode&1 != 0 {
				off = val
			}
			total := first
			if mode&2 != 0 || first == 0 {
				total = val
			}
			data := pattern[off%256:][:n]
			before := a.Received()
			fin, err := a.Add(off, total, data)
			if err == nil && first == 0 {
				first = total
			}
			switch {
			case err != nil:
				if a.Received() != before {
					t.Fatalf("refused chunk changed the payload from %d to %d bytes", before, a.Received())
				}
			default:
				if a.Received() != before+uint64(n) {
					t.Fatalf("accepted %d bytes, payload grew from %d to %d", n, before, a.Received())
				}
				if total > fuzzAssemblerLimit || off != before || total != a.Total() {
					t.Fatalf("accepted chunk at %d of total %d after %d bytes", off, total, before)
				}
				if fin != (a.Received() == a.Total()) {
					t.Fatalf("done=%v with %d of %d bytes", fin, a.Received(), a.Total())
				}
				done = done || fin
			}
			if a.Received() > fuzzAssemblerLimit || uint64(cap(a.Bytes())) > fuzzAssemblerLimit {
				t.Fatalf("assembler holds %d bytes (cap %d) over the limit %d", a.Received(), cap(a.Bytes()), fuzzAssemblerLimit)
			}
			if a.Total() != 0 && a.Received() > a.Total() {
				t.Fatalf("assembler holds %d bytes of a %d-byte payload", a.Received(), a.Total())
			}
		}
		// Every accepted byte is where its chunk put it: chunk data is
		// cut from pattern so that the byte at payload position p is
		// byte(p).
		if !bytes.Equal(a.Bytes(), pattern[:a.Received()]) {
			t.Fatal("payload bytes are not where their chunks put them")
		}
		if done && a.Received() != a.Total() {
			t.Fatalf("done with %d of %d bytes", a.Received(), a.Total())
		}
	})
}
