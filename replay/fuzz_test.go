package replay

import (
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
		if err != nil {
			return
		}
		defer r.Close()
		for range 10000 {
			fr, err := r.Next()
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			if fr.Commands != nil && len(fr.Commands.Commands) > len(data)*64 {
				t.Fatalf("%d commands from %d bytes", len(fr.Commands.Commands), len(data))
			}
		}
	})
}
