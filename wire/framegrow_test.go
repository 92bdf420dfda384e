package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// TestFrameBufferGrowsWithData: a frame that claims the largest size and
// carries a few bytes costs a few kilobytes, not the claimed size; the
// whole frame still arrives intact when it is sent.
func TestFrameBufferGrowsWithData(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sent     int // body bytes actually sent (id included)
		wantErr  error
		maxBytes int // most the reader may have allocated
	}{
		{"claims 1 MiB, sends 10 bytes", 10, io.ErrUnexpectedEOF, 2 * growStep},
		{"claims 1 MiB, sends 100 KiB", 100 << 10, io.ErrUnexpectedEOF, 256 << 10},
		{"claims 1 MiB, sends it", DefaultMaxFrame, nil, 2 * DefaultMaxFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := binary.BigEndian.AppendUint32(nil, DefaultMaxFrame)
			body := bytes.Repeat([]byte{7}, tc.sent)
			fr := NewFrameReader(bytes.NewReader(append(in, body...)), 0)
			id, got, err := fr.Next()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Next: %v, want %v", err, tc.wantErr)
			}
			if c := cap(fr.buf); c > tc.maxBytes {
				t.Fatalf("buffer capacity %d after %d bytes arrived, want at most %d", c, tc.sent, tc.maxBytes)
			}
			if err == nil && (id != 7 || !bytes.Equal(got, body[1:])) {
				t.Fatalf("frame came back as id %d, %d bytes", id, len(got))
			}
		})
	}
}

// TestFrameReaderSetMax: the limit can be raised for later frames.
func TestFrameReaderSetMax(t *testing.T) {
	var in []byte
	big := bytes.Repeat([]byte{1}, 3000)
	in = AppendFrame(in, IDClientCommand, big)
	in = AppendFrame(in, IDClientCommand, big)
	fr := NewFrameReader(bytes.NewReader(in), 4000)
	if _, _, err := fr.Next(); err != nil {
		t.Fatal(err)
	}
	fr.SetMax(2000)
	if _, _, err := fr.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("frame over the lowered limit: %v, want ErrFrameTooLarge", err)
	}
}
