package replay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader reads arbitrary bytes as a recording: never a panic, and
// nothing allocated beyond what the file holds.
func FuzzReader(f *testing.F) {
	path, _ := record(f, recording{maps: 2, ticks: 40, framesEvery: 10, checkEvery: 20})
	whole, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(whole)
	f.Add(whole[:len(whole)/2])
	f.Add([]byte(Magic + "\x00\x01\x00\x00"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "fuzz"+Ext)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(p)
		mem, merr := NewReader(p, bytes.NewReader(data), int64(len(data)))
		if (err == nil) != (merr == nil) || err != nil && err.Error() != merr.Error() {
			t.Fatalf("from the file: %v; from memory: %v", err, merr)
		}
		if err != nil {
			return
		}
		defer r.Close()
		for range 10000 {
			fr, err := r.Next()
			mfr, merr := mem.Next()
			if (err == nil) != (merr == nil) || fr.Kind != mfr.Kind {
				t.Fatalf("from the file: %v %v; from memory: %v %v", fr.Kind, err, mfr.Kind, merr)
			}
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			if fr.Commands != nil && len(fr.Commands.Commands) > len(data)*64 {
				t.Fatalf("%d commands from %d bytes", len(fr.Commands.Commands), len(data))
			}
		}
	})
}
