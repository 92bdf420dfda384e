package snapshot

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lim        Limits
		blob, all  uint64
		blobOK, ok bool
	}{
		{"zero limits accept anything", Limits{}, 1 << 40, 1 << 50, true, true},
		{"at the limits", Limits{MaxRaw: 100, MaxRawTotal: 300}, 100, 300, true, true},
		{"one over", Limits{MaxRaw: 100, MaxRawTotal: 300}, 101, 301, false, false},
		{"blob limit only", Limits{MaxRaw: 100}, 101, 1 << 50, false, true},
		{"total limit only", Limits{MaxRawTotal: 300}, 1 << 40, 301, true, false},
	} {
		if err := tc.lim.CheckBlob(3, tc.blob); (err == nil) != tc.blobOK || (err != nil && !errors.Is(err, ErrTooLarge)) {
			t.Errorf("%s: CheckBlob(%d): %v", tc.name, tc.blob, err)
		}
		if err := tc.lim.CheckTotal(tc.all); (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrTooLarge)) {
			t.Errorf("%s: CheckTotal(%d): %v", tc.name, tc.all, err)
		}
	}
}

// streamed gives b as InflateFrom reads it from a file: its info, and its
// bytes followed by other data that must not be read.
func streamed(b Blob) (*bytes.Reader, BlobInfo) {
	return bytes.NewReader(append(bytes.Clone(b.Data), "next blob"...)), info(b)
}

// TestInflateFromMatchesDecompress: a blob streamed through InflateFrom is
// accepted and refused as the same blob in memory is by Decompress.
func TestInflateFromMatchesDecompress(t *testing.T) {
	raw := bytes.Repeat([]byte("colony "), 5000)
	good, err := Compress(raw, Compression{})
	if err != nil {
		t.Fatal(err)
	}
	flipped := good
	flipped.Data = bytes.Clone(good.Data)
	flipped.Data[len(flipped.Data)/2] ^= 1
	// Trailing bytes inside the blob: the gzip stream ends early, but the
	// hash covers them.
	trailing := good
	trailing.Data = append(bytes.Clone(good.Data), 0, 0, 0)
	hashedTrailing := trailing
	hashedTrailing.Hash = xxhash.Sum64(trailing.Data)
	short := good
	short.RawSize--
	long := good
	long.RawSize++
	for _, tc := range []struct {
		name  string
		b     Blob
		limit int64
		want  error // nil: inflates to raw
		any   bool  // any error will do
	}{
		{"good", good, 0, nil, false},
		{"good, limit above", good, int64(len(raw)) + 1, nil, false},
		{"limit below raw", good, int64(len(raw)) - 1, ErrTooLarge, false},
		{"flipped byte", flipped, 0, nil, true},
		{"trailing bytes, old hash", trailing, 0, ErrHashMismatch, false},
		{"trailing bytes, hashed", hashedTrailing, 0, nil, false},
		{"declares one byte less", short, 0, ErrTooLarge, false},
		{"declares one byte more", long, 0, nil, true},
	} {
		r, bi := streamed(tc.b)
		got, err := InflateFrom(r, bi, tc.limit)
		mem, memErr := Decompress(tc.b, tc.limit)
		switch {
		case tc.any:
			if err == nil || memErr == nil {
				t.Errorf("%s: streamed %v, in memory %v; want errors", tc.name, err, memErr)
			}
		case tc.want != nil:
			if !errors.Is(err, tc.want) || !errors.Is(memErr, tc.want) {
				t.Errorf("%s: streamed %v, in memory %v; want %v", tc.name, err, memErr, tc.want)
			}
		default:
			if err != nil || memErr != nil || !bytes.Equal(got, raw) || !bytes.Equal(mem, raw) {
				t.Errorf("%s: streamed %v, in memory %v", tc.name, err, memErr)
			}
		}
		if tc.want == nil && !tc.any && r.Len() != len("next blob") {
			t.Errorf("%s: read %d bytes past the blob", tc.name, len("next blob")-r.Len())
		}
	}
}

// payloadOf parses a join payload of sim.
func payloadOf(t *testing.T, sim lockstep.Sim) *Parsed {
	t.Helper()
	return parsedOf(t, cutPoint(t, sim, DefaultLevel))
}

// parsedOf parses a join payload of p.
func parsedOf(t *testing.T, p *Point) *Parsed {
	t.Helper()
	pl, err := NewPayload(p, 1, p.Tick, nil)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(pl.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// TestLoadBlobs: both kinds of loader rebuild the same world through the
// one loading path, and the total limit counts every blob inflated.
func TestLoadBlobs(t *testing.T) {
	sim := runSim(t, 3, 700, 30)
	p := payloadOf(t, sim)
	total := p.Header.RawSize()
	for _, tc := range []struct {
		name string
		lim  Limits
		load lockstep.Loader
		ml   lockstep.MapLoader
		want string // "" for success
	}{
		{"loader", Limits{}, locksteptest.Load, nil, ""},
		{"map loader", Limits{}, nil, locksteptest.MapLoader, ""},
		{"both: map loader", Limits{}, func([]byte, []lockstep.MapBlob) (lockstep.Sim, error) {
			return nil, errors.New("the Loader was used")
		}, locksteptest.MapLoader, ""},
		{"no loader", Limits{}, nil, nil, "no loader"},
		{"total at the limit", Limits{MaxRawTotal: total}, locksteptest.Load, nil, ""},
		{"total one over", Limits{MaxRawTotal: total - 1}, nil, locksteptest.MapLoader, "in all"},
		{"blob over", Limits{MaxRaw: int64(p.Header.World.RawSize) - 1}, locksteptest.Load, nil, "world: raw size"},
	} {
		var inflated []int
		inflate := func(i int, maxRaw int64) ([]byte, error) {
			inflated = append(inflated, i)
			if maxRaw != tc.lim.MaxRaw {
				t.Errorf("%s: inflate given limit %d, want %d", tc.name, maxRaw, tc.lim.MaxRaw)
			}
			return p.Inflate(i, maxRaw)
		}
		got, err := p.Header.LoadBlobs(tc.lim, inflate, tc.load, tc.ml)
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.WorldHash() != sim.WorldHash() || len(inflated) != 4 || inflated[0] != 0 || inflated[3] != 3 {
			t.Errorf("%s: world hash %x (want %x), blobs inflated in order %v", tc.name, got.WorldHash(), sim.WorldHash(), inflated)
		}
	}
}

// TestAssemblyOrder: a MapLoader takes maps only after the world, and a
// map index outside the header is refused by either kind.
func TestAssemblyOrder(t *testing.T) {
	p := payloadOf(t, runSim(t, 2, 300, 10))
	world, err := p.Inflate(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	m0, err := p.Inflate(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Header.Assemble(nil, locksteptest.MapLoader)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Map(0, m0); err == nil || !strings.Contains(err.Error(), "no world blob") {
		t.Errorf("map before the world: %v", err)
	}
	if _, err := a.Finish(); err == nil {
		t.Error("Finish without a world: no error")
	}
	for _, load := range []struct {
		name string
		load lockstep.Loader
		ml   lockstep.MapLoader
	}{{"loader", locksteptest.Load, nil}, {"map loader", nil, locksteptest.MapLoader}} {
		a, err := p.Header.Assemble(load.load, load.ml)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.World(world); err != nil {
			t.Fatalf("%s: world: %v", load.name, err)
		}
		if err := a.Map(2, m0); err == nil {
			t.Errorf("%s: map 2 of a header of 2 accepted", load.name)
		}
		if err := a.Map(0, m0); err != nil {
			t.Fatalf("%s: map 0: %v", load.name, err)
		}
		if _, err := a.Finish(); err == nil {
			t.Errorf("%s: Finish with a map missing: no error", load.name)
		}
	}
	if _, err := p.Inflate(3, 0); err == nil {
		t.Error("Inflate of blob 3 of a payload of 2 maps: no error")
	}
}

// TestDecompressAllocatesOnce checks that a blob inflating to exactly its
// declared raw size is inflated into one buffer of that size: seeing the
// stream end must not allocate the whole blob a second time. Both codecs,
// several sizes; the bound (1.25× raw plus a fixed codec allowance) would
// fail at the 2× a grown copy costs.
func TestDecompressAllocatesOnce(t *testing.T) {
	for _, c := range Readable() {
		for _, n := range []int{1 << 20, 8 << 20, 24 << 20} {
			// About 2:1 for both codecs, like game state and unlike a
			// repeated pattern, so the in-memory bound on the buffer
			// claimed up front (64× the compressed size) is not what
			// decides.
			raw := make([]byte, n)
			rng := rand.New(rand.NewPCG(uint64(n), 1))
			for i := range raw {
				raw[i] = byte(rng.IntN(16))
			}
			b, err := Compress(raw, Compression{Codec: c})
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			out, err := Decompress(b, 0)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("%s %d: %v", c, n, err)
			}
			if !bytes.Equal(out, raw) {
				t.Fatalf("%s %d: inflated bytes differ", c, n)
			}
			got := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s, %d raw bytes: allocated %.2f× raw", c, n, float64(got)/float64(n))
			if limit := uint64(n)*5/4 + 4<<20; got > limit {
				t.Errorf("%s, %d raw bytes: allocated %d (%.2f× raw), want at most %d", c, n, got, float64(got)/float64(n), limit)
			}
		}
	}
}

// TestDecompressIntoReuses: DecompressInto inflates into the buffer it is
// given when that holds the blob, allocating no second one, and into a
// new one when it does not; a reused buffer larger than the blob does
// not loosen the blob's size checks.
func TestDecompressIntoReuses(t *testing.T) {
	for _, c := range Readable() {
		t.Run(c.String(), func(t *testing.T) {
			raw := make([]byte, 2<<20)
			rng := rand.New(rand.NewPCG(7, 1))
			for i := range raw {
				raw[i] = byte(rng.IntN(16))
			}
			b, err := Compress(raw, Compression{Codec: c})
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 0, 3<<20)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			out, err := DecompressInto(buf, b, 0)
			runtime.ReadMemStats(&after)
			if err != nil || !bytes.Equal(out, raw) {
				t.Fatalf("into a large enough buffer: %v", err)
			}
			if &out[0] != &buf[:1][0] {
				t.Error("inflated outside the buffer given")
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("allocated %d bytes beside the buffer given", got)
			}
			small := make([]byte, 0, 1<<20)
			out, err = DecompressInto(small, b, 0)
			if err != nil || !bytes.Equal(out, raw) || &out[0] == &small[:1][0] {
				t.Fatalf("into a buffer too small: %v", err)
			}
			// The buffer made has room for a blob a little larger, as the
			// next map of a world usually is.
			larger := append(bytes.Clone(raw), raw[:len(raw)/16]...)
			lb, err := Compress(larger, Compression{Codec: c})
			if err != nil {
				t.Fatal(err)
			}
			if again, err := DecompressInto(out[:0], lb, 0); err != nil || !bytes.Equal(again, larger) || &again[0] != &out[0] {
				t.Fatalf("a blob a sixteenth larger did not fit the buffer made for the one before: %v", err)
			}
			short := b
			short.RawSize = uint64(len(raw) - 1)
			if _, err := DecompressInto(buf, short, 0); !errors.Is(err, ErrTooLarge) {
				t.Errorf("RawSize one short, a larger buffer given: %v, want ErrTooLarge", err)
			}
			if _, err := DecompressInto(buf, b, int64(len(raw)-1)); !errors.Is(err, ErrTooLarge) {
				t.Errorf("caller limit below RawSize, a larger buffer given: %v, want ErrTooLarge", err)
			}
		})
	}
}
