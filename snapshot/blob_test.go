package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"
)

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		// Half random, half runs: something gzip can partly compress.
		if i%64 < 32 {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func TestCompressRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  []byte
		c    Compression
	}{
		{"empty", []byte{}, Compression{}},
		{"one byte", []byte{42}, Compression{}},
		{"mixed default", randomBytes(1, 100_000), Compression{}},
		{"mixed best speed", randomBytes(2, 100_000), Compression{Level: gzip.BestSpeed}},
		{"mixed best compression", randomBytes(3, 50_000), Compression{Level: gzip.BestCompression}},
		{"mixed huffman only", randomBytes(4, 50_000), Compression{Level: gzip.HuffmanOnly}},
		{"zstd empty", []byte{}, Compression{Codec: Zstd}},
		{"zstd one byte", []byte{42}, Compression{Codec: Zstd}},
		{"zstd mixed default", randomBytes(5, 100_000), Compression{Codec: Zstd}},
		{"zstd mixed fastest", randomBytes(6, 100_000), Compression{Codec: Zstd, Level: 1}},
		{"zstd mixed best", randomBytes(7, 50_000), Compression{Codec: Zstd, Level: 19}},
		{"zstd large", randomBytes(8, 3<<20), Compression{Codec: Zstd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Twice, so the second run uses a pooled writer and reader.
			for range 2 {
				b, err := Compress(tc.raw, tc.c)
				if err != nil {
					t.Fatal(err)
				}
				if b.Codec != tc.c.Codec {
					t.Fatalf("blob names %s, compressed with %s", b.Codec, tc.c.Codec)
				}
				if b.RawSize != uint64(len(tc.raw)) {
					t.Fatalf("RawSize %d, want %d", b.RawSize, len(tc.raw))
				}
				if b.Hash != xxhash.Sum64(b.Data) {
					t.Fatal("Hash is not the xxhash64 of Data")
				}
				got, err := Decompress(b, 0)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, tc.raw) {
					t.Fatalf("round trip changed %d bytes into %d bytes", len(tc.raw), len(got))
				}
				// A limit at exactly the raw size is enough.
				if len(tc.raw) > 0 {
					if _, err := Decompress(b, int64(len(tc.raw))); err != nil {
						t.Fatalf("limit == RawSize: %v", err)
					}
				}
			}
		})
	}
}

func TestCompressCompresses(t *testing.T) {
	raw := make([]byte, 1<<20)
	for _, c := range []Codec{Gzip, Zstd} {
		b, err := Compress(raw, Compression{Codec: c})
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Data) > 16<<10 {
			t.Fatalf("%s: 1 MiB of zeros compressed to %d bytes", c, len(b.Data))
		}
	}
}

func TestCompressBadLevel(t *testing.T) {
	if _, err := Compress([]byte("x"), Compression{Level: 42}); err == nil {
		t.Fatal("level 42 accepted")
	}
	if _, err := Compress([]byte("x"), Compression{Codec: 9}); err == nil {
		t.Fatal("codec 9 accepted")
	}
}

func TestDecompressRejectsTampering(t *testing.T) {
	raw := randomBytes(5, 10_000)
	good, err := Compress(raw, Compression{})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, len(good.Data) / 2, len(good.Data) - 1} {
		bad := good
		bad.Data = bytes.Clone(good.Data)
		bad.Data[i] ^= 0x01
		if _, err := Decompress(bad, 0); !errors.Is(err, ErrHashMismatch) {
			t.Errorf("byte %d flipped: %v, want ErrHashMismatch", i, err)
		}
	}
	bad := good
	bad.Hash++
	if _, err := Decompress(bad, 0); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("wrong hash: %v, want ErrHashMismatch", err)
	}
	bad = good
	bad.Data = good.Data[:len(good.Data)-1]
	if _, err := Decompress(bad, 0); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("truncated data: %v, want ErrHashMismatch", err)
	}
}

// rehash returns b with its hash matching its data: the checks beyond the
// hash must hold on their own.
func rehash(b Blob) Blob {
	b.Hash = xxhash.Sum64(b.Data)
	return b
}

func TestDecompressSizeChecks(t *testing.T) {
	raw := randomBytes(6, 10_000)
	good, err := Compress(raw, Compression{})
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
	if _, err := Decompress(good, 1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("caller limit 1: %v, want ErrTooLarge", err)
	}

	huge := good
	huge.RawSize = 1 << 63
	if _, err := Decompress(huge, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("RawSize 2^63 without a limit: %v, want ErrTooLarge", err)
	}

	// Truncated gzip with a matching hash.
	cut := rehash(Blob{Data: good.Data[:len(good.Data)/2], RawSize: good.RawSize})
	if _, err := Decompress(cut, 0); err == nil {
		t.Error("truncated gzip stream accepted")
	}
	// Not gzip at all.
	junk := rehash(Blob{Data: []byte("definitely not gzip"), RawSize: 10})
	if _, err := Decompress(junk, 0); err == nil {
		t.Error("non-gzip data accepted")
	}
	// Corrupted deflate data with a matching hash: the gzip CRC catches
	// what the blob hash no longer can.
	flipped := bytes.Clone(good.Data)
	flipped[len(flipped)-12] ^= 0x40
	if _, err := Decompress(rehash(Blob{Data: flipped, RawSize: good.RawSize}), 0); err == nil {
		t.Error("corrupted deflate data accepted")
	}
	// The good blob still works after all the failures above (pooled
	// readers are reset properly).
	got, err := Decompress(good, 0)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("good blob after failures: %v", err)
	}
}

// bitWriter packs a deflate bit stream (least significant bit first).
type bitWriter struct {
	out   []byte
	acc   uint64
	nbits uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

// code writes a Huffman code, which deflate stores most significant bit
// first.
func (w *bitWriter) code(v uint64, n uint) {
	w.bits(uint64(bits.Reverse64(v)>>(64-n)), n)
}

func (w *bitWriter) flush() []byte {
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
		w.acc, w.nbits = 0, 0
	}
	return w.out
}

// gzipZeros returns a valid gzip stream of at least n zero bytes and the
// exact size it inflates to. It writes the deflate stream by hand (one
// literal zero, then copies of 258 bytes at distance 1 in a fixed-Huffman
// block) so that building a 64 MiB bomb costs milliseconds, race detector
// or not.
func gzipZeros(n int) ([]byte, int) {
	w := &bitWriter{out: []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}}
	w.bits(1, 1)      // BFINAL
	w.bits(1, 2)      // BTYPE 01: fixed Huffman
	w.code(0x30+0, 8) // literal 0
	size := 1
	for size < n {
		w.code(0xc0+5, 8) // length code 285: 258 bytes
		w.code(0, 5)      // distance code 0: distance 1
		size += 258
	}
	w.code(0, 7) // end of block
	out := w.flush()
	crc := crc32.NewIEEE()
	zeros := make([]byte, 1<<20)
	for left := size; left > 0; left -= min(left, len(zeros)) {
		crc.Write(zeros[:min(left, len(zeros))])
	}
	out = binary.LittleEndian.AppendUint32(out, crc.Sum32())
	out = binary.LittleEndian.AppendUint32(out, uint32(size))
	return out, size
}

func TestGzipZerosIsValid(t *testing.T) {
	data, size := gzipZeros(100_000)
	b := rehash(Blob{Data: data, RawSize: uint64(size)})
	got, err := Decompress(b, 0)
	if err != nil {
		t.Fatalf("hand-made gzip stream: %v", err)
	}
	if len(got) != size || size < 100_000 || bytes.ContainsFunc(got, func(r rune) bool { return r != 0 }) {
		t.Fatalf("hand-made gzip stream inflated to %d bytes (want %d zeros)", len(got), size)
	}
}

func TestDecompressBombIsBounded(t *testing.T) {
	const (
		real     = 64 << 20
		declared = 1 << 20
	)
	data, size := gzipZeros(real)
	if size < real || len(data) > real/100 {
		t.Fatalf("bomb of %d bytes inflating to %d", len(data), size)
	}
	bomb := rehash(Blob{Data: data, RawSize: declared})
	// Warm the reader pool so its allocation is not counted.
	small, n := gzipZeros(1)
	if _, err := Decompress(rehash(Blob{Data: small, RawSize: uint64(n)}), 0); err != nil {
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

	// A caller limit bounds the work the same way when the declared size
	// itself is large.
	bomb.RawSize = real
	runtime.ReadMemStats(&before)
	_, err = Decompress(bomb, declared)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bomb over the caller limit: %v, want ErrTooLarge", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("refusing a blob over the caller limit allocated %d KiB", alloc>>10)
	}
}
