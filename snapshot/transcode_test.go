package snapshot

import (
	"bytes"
	"errors"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zstdFrame is n zero bytes as one zstd stream with window (0: the
// library's).
func zstdFrame(t *testing.T, n int, window int) []byte {
	t.Helper()
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest)}
	if window > 0 {
		opts = append(opts, zstd.WithWindowSize(window))
	}
	var b bytes.Buffer
	enc, err := zstd.NewWriter(&b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTranscodeBounded: a transcode refuses, with ErrTooLarge, a point
// whose blobs declare more than its raw limit before inflating any of
// them (the blob here is not even zstd), a blob that inflates past its
// declared raw size, and a zstd frame whose window is over
// TranscodeWindow; a blob within its bounds is streamed to the other
// codec unchanged.
func TestTranscodeBounded(t *testing.T) {
	junk := newBlob(Zstd, []byte("not a zstd frame"), 2<<30)
	if _, err := Transcode(&Point{World: junk}, Compression{Codec: Gzip}, 1, 1<<30); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a point declaring 2 GiB under a 1 GiB limit: %v, want ErrTooLarge before inflating", err)
	}
	liar := newBlob(Zstd, zstdFrame(t, 4<<20, 0), 64<<10)
	if _, err := Transcode(&Point{World: liar}, Compression{Codec: Gzip}, 1, 1<<30); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a blob declaring 64 KiB that inflates to 4 MiB: %v, want ErrTooLarge", err)
	}
	wide := newBlob(Zstd, zstdFrame(t, 32<<20, 32<<20), 32<<20)
	if _, err := Transcode(&Point{World: wide}, Compression{Codec: Gzip}, 1, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a frame with a 32 MiB window: %v, want ErrTooLarge", err)
	}
	raw := bytes.Repeat([]byte("lockstep "), 1<<16)
	for _, from := range []Codec{Gzip, Zstd} {
		to := Compression{Codec: Zstd}
		if from == Zstd {
			to.Codec = Gzip
		}
		out, err := Transcode(&Point{World: mustCompress(t, raw, from)}, to, 1, uint64(len(raw)))
		if err != nil {
			t.Fatalf("%s to %s: %v", from, to.Codec, err)
		}
		got, err := Decompress(out.World, 0)
		if err != nil || out.World.Codec != to.Codec || !bytes.Equal(got, raw) {
			t.Fatalf("%s to %s: codec %s, %d bytes, %v", from, to.Codec, out.World.Codec, len(got), err)
		}
	}
}
