package snapshot

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestParseCodec(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Codec
		ok   bool
	}{{"gzip", Gzip, true}, {"zstd", Zstd, true}, {"lzma", 0, false}, {"", 0, false}, {"ZSTD", 0, false}} {
		got, err := ParseCodec(tc.name)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseCodec(%q) = %v, %v", tc.name, got, err)
		}
		if tc.ok && got.String() != tc.name {
			t.Errorf("%v names itself %q", got, got.String())
		}
	}
}

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		want    Codec
		offered []Codec
		got     Codec
	}{
		{Zstd, []Codec{Zstd, Gzip}, Zstd},
		{Zstd, []Codec{Gzip, Zstd}, Zstd}, // the host's choice, whatever the order
		{Zstd, nil, Gzip},                 // a protocol 3 joiner
		{Zstd, []Codec{Gzip}, Gzip},
		{Gzip, []Codec{Zstd}, Gzip}, // every joiner reads gzip
		{Codec(9), []Codec{Codec(9)}, Gzip},
	} {
		if got := Choose(tc.want, tc.offered); got != tc.got {
			t.Errorf("Choose(%v, %v) = %v, want %v", tc.want, tc.offered, got, tc.got)
		}
	}
}

// TestDecompressSizeChecksEveryCodec: the declared raw size and the
// caller's limit bound every codec's output alike.
func TestDecompressSizeChecksEveryCodec(t *testing.T) {
	raw := randomBytes(6, 100_000)
	for _, c := range []Codec{Gzip, Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			good, err := Compress(raw, Compression{Codec: c})
			if err != nil {
				t.Fatal(err)
			}
			small := good
			small.RawSize = uint64(len(raw) - 1)
			if _, err := Decompress(small, 0); !errors.Is(err, ErrTooLarge) {
				t.Errorf("RawSize one short: %v, want ErrTooLarge", err)
			}
			large := good
			large.RawSize = uint64(len(raw) + 1)
			if _, err := Decompress(large, 0); err == nil {
				t.Error("RawSize one over the real size accepted")
			}
			if _, err := Decompress(good, int64(len(raw)-1)); !errors.Is(err, ErrTooLarge) {
				t.Errorf("caller limit below RawSize: %v, want ErrTooLarge", err)
			}
			cut := rehash(Blob{Data: good.Data[:len(good.Data)/2], RawSize: good.RawSize, Codec: c})
			if _, err := Decompress(cut, 0); err == nil {
				t.Error("truncated stream accepted")
			}
			junk := rehash(Blob{Data: []byte("definitely not compressed"), RawSize: 10, Codec: c})
			if _, err := Decompress(junk, 0); err == nil {
				t.Error("junk accepted")
			}
			// The other codec's bytes are refused: the codec named is
			// the one used.
			other := good
			other.Codec = Gzip + Zstd - c
			if _, err := Decompress(other, 0); err == nil {
				t.Errorf("%s data read as %s", c, other.Codec)
			}
			unknown := good
			unknown.Codec = 9
			if _, err := Decompress(unknown, 0); err == nil {
				t.Error("unknown codec accepted")
			}
			got, err := Decompress(good, 0)
			if err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("good blob after failures: %v", err)
			}
			// Streamed as a save is read, the same.
			got, err = InflateFrom(bytes.NewReader(good.Data), info(good), 0)
			if err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("streamed: %v", err)
			}
		})
	}
}

// TestZstdBombIsBounded: a zstd frame that inflates far beyond the size
// its blob declares is refused without allocating what it would inflate
// to, whether its header says so (the window) or not.
func TestZstdBombIsBounded(t *testing.T) {
	const (
		real     = 64 << 20
		declared = 1 << 20
	)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var streamed bytes.Buffer // no content size, a 1 MiB window
	sw, err := zstd.NewWriter(&streamed, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range real / len(zeros) {
		if _, err := sw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"content size in the header", enc.EncodeAll(make([]byte, real), nil)},
		{"streamed, no content size", streamed.Bytes()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) > real/100 {
				t.Fatalf("bomb of %d bytes", len(tc.data))
			}
			bomb := rehash(Blob{Data: tc.data, RawSize: declared, Codec: Zstd})
			// Warm the decoder pool so its allocation is not counted.
			if _, err := Decompress(mustCompress(t, []byte("warm"), Zstd), 0); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Decompress(bomb, 0)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("64 MiB bomb declared as 1 MiB: %v, want ErrTooLarge", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Fatalf("refusing a bomb declared as 1 MiB allocated %d MiB", alloc>>20)
			}
		})
	}
}

func mustCompress(t testing.TB, raw []byte, c Codec) Blob {
	t.Helper()
	b, err := Compress(raw, Compression{Codec: c})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTranscode: a point transcoded to another codec has the same state
// (tick, hashes, every blob's raw bytes) in the other codec, and one
// already in it shares its blobs.
func TestTranscode(t *testing.T) {
	sim := runSim(t, 4, 3000, 50)
	p, err := Build(sim, BuildOptions{Compression: Compression{Codec: Zstd}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := Transcode(p, Compression{Codec: Gzip}, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g.Tick != p.Tick || g.WorldHash != p.WorldHash || len(g.Maps) != len(p.Maps) || g.RawSize() != p.RawSize() {
		t.Fatalf("transcoded point differs: tick %d/%d, maps %d/%d", g.Tick, p.Tick, len(g.Maps), len(p.Maps))
	}
	pairs := [][2]Blob{{p.World, g.World}}
	for i := range p.Maps {
		if g.Maps[i].ID != p.Maps[i].ID || g.Maps[i].StateHash != p.Maps[i].StateHash {
			t.Fatalf("map %d: id or state hash changed", i)
		}
		pairs = append(pairs, [2]Blob{p.Maps[i].Blob, g.Maps[i].Blob})
	}
	for i, pr := range pairs {
		if pr[1].Codec != Gzip {
			t.Fatalf("blob %d is %s", i, pr[1].Codec)
		}
		a, err := Decompress(pr[0], 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Decompress(pr[1], 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("blob %d: transcoding changed its bytes", i)
		}
	}
	same, err := Transcode(p, Compression{Codec: Zstd}, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if &same.World.Data[0] != &p.World.Data[0] {
		t.Fatal("a blob already in the codec was copied")
	}
}

// TestBuildMapSubset: a build of some maps (a repair) holds those maps in
// the order asked, with the hashes of the whole state, and loads onto the
// state like a repair does.
func TestBuildMapSubset(t *testing.T) {
	sim := runSim(t, 5, 2000, 40)
	ids := sim.MapIDs()
	subset := []int32{ids[3], ids[1]}
	for _, c := range []Codec{Gzip, Zstd} {
		p, err := Build(sim, BuildOptions{Compression: Compression{Codec: c}, Maps: subset})
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int32, len(p.Maps))
		for i, m := range p.Maps {
			got[i] = m.ID
			if h, _ := sim.MapHash(m.ID); h != m.StateHash {
				t.Fatalf("map %d: state hash %x, sim has %x", m.ID, m.StateHash, h)
			}
			raw, err := Decompress(m.Blob, 0)
			if err != nil {
				t.Fatal(err)
			}
			want, err := sim.MarshalMap(m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(raw, want) {
				t.Fatalf("map %d: blob is not the map's encoding", m.ID)
			}
		}
		if !slices.Equal(got, subset) {
			t.Fatalf("%s: maps %v, want %v", c, got, subset)
		}
		if p.WorldHash != sim.WorldHash() {
			t.Fatalf("%s: world hash %x, the whole state's is %x", c, p.WorldHash, sim.WorldHash())
		}
		// The same as cutting those maps raw and compressing the cut.
		raw, err := CutMaps(sim, subset)
		if err != nil {
			t.Fatal(err)
		}
		q, err := raw.Compress(Compression{Codec: c})
		if err != nil {
			t.Fatal(err)
		}
		if q.WorldHash != p.WorldHash || q.Maps[0].Blob.Hash != p.Maps[0].Blob.Hash || q.World.Hash != p.World.Hash {
			t.Fatalf("%s: building the subset differs from compressing its cut", c)
		}
	}
}

// TestZstdWindow: the zstd frames Compress writes have the window the
// spec's section 8.1 says the host writes: 1 MiB over that, the blob's
// raw size (a single-segment frame) from 1 KiB to 1 MiB, and at most 2
// KiB below (zstd's smallest windows), and they state their content size
// from 1 KiB (the joiner inflates a frame that does into one buffer of
// that size). Each inflates, whole and streamed as a save is read.
func TestZstdWindow(t *testing.T) {
	for _, n := range []int{100, 1000, 1024, 1025, 300_000, 1 << 20, 3 << 20} {
		raw := randomBytes(uint64(n), n)
		b, err := Compress(raw, Compression{Codec: Zstd})
		if err != nil {
			t.Fatal(err)
		}
		var h zstd.Header
		if err := h.Decode(b.Data); err != nil {
			t.Fatal(err)
		}
		switch {
		case n > zstdWindow && (h.SingleSegment || h.WindowSize != zstdWindow):
			t.Errorf("%d raw bytes: window %d (single segment %v), want %d", n, h.WindowSize, h.SingleSegment, zstdWindow)
		case n > 1024 && n <= zstdWindow && !h.SingleSegment:
			t.Errorf("%d raw bytes: window %d, want a single segment", n, h.WindowSize)
		case n <= 1024 && !h.SingleSegment && h.WindowSize > 2048:
			t.Errorf("%d raw bytes: window %d, want at most 2 KiB", n, h.WindowSize)
		}
		if n > 1024 && (!h.HasFCS || h.FrameContentSize != uint64(n)) {
			t.Errorf("%d raw bytes: frame content size %d (stated: %v)", n, h.FrameContentSize, h.HasFCS)
		}
		if got, err := Decompress(b, 0); err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%d raw bytes: inflating: %v", n, err)
		}
		if got, err := InflateFrom(bytes.NewReader(b.Data), info(b), 0); err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%d raw bytes: streamed: %v", n, err)
		}
	}
}

// TestInflateBounded: Inflate gives back what was compressed, in either
// codec, and refuses output past its limit.
func TestInflateBounded(t *testing.T) {
	raw := bytes.Repeat([]byte("lockstep "), 10000)
	for _, c := range []Codec{Gzip, Zstd} {
		b := mustCompress(t, raw, c)
		got, err := Inflate(c, b.Data, int64(len(raw)))
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("%s: %d bytes back, %v", c, len(got), err)
		}
		if _, err := Inflate(c, b.Data, int64(len(raw))-1); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: one byte under its size: %v, want ErrTooLarge", c, err)
		}
	}
}
