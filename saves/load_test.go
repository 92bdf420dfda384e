package saves

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
)

// TestLoadRereadsBlobs: Load reads each blob from the file again, through
// its hash, with either loader; a blob changed after Read is named, and
// one whose gzip stream still decodes is caught by its hash.
func TestLoadRereadsBlobs(t *testing.T) {
	s := newSession(t, 3, 1000, 4, 8)
	for _, tc := range []struct {
		name  string
		at    func(b blobAt) int64 // where to flip a byte; nil for none
		want  error                // nil: loads; else errors.Is
		named string
	}{
		{"unchanged", nil, nil, ""},
		// Byte 4 of a gzip stream is its header's MTIME, which no gzip
		// check covers: only the blob's hash sees the change.
		{"gzip header", func(b blobAt) int64 { return b.off + 4 }, snapshot.ErrHashMismatch, "changed since it was checked"},
		{"deflate data", func(b blobAt) int64 { return b.off + int64(b.info.Size)/2 }, nil, "decompress"},
	} {
		for _, ld := range []struct {
			name string
			load lockstep.Loader
			ml   lockstep.MapLoader
		}{{"loader", locksteptest.Load, nil}, {"map loader", nil, locksteptest.MapLoader}} {
			path := filepath.Join(t.TempDir(), "colony"+Ext)
			s.write(t, path)
			f, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.at != nil {
				flip(t, path, tc.at(f.blobs[2]))
			}
			sim, err := Load(f, ld.load, ld.ml, 0)
			switch {
			case tc.at == nil && err != nil:
				t.Errorf("%s, %s: %v", tc.name, ld.name, err)
			case tc.at == nil && (sim.Tick() != s.direct.Tick() || sim.WorldHash() != s.direct.WorldHash()):
				t.Errorf("%s, %s: loaded tick %d hash %x, want %d %x", tc.name, ld.name, sim.Tick(), sim.WorldHash(), s.direct.Tick(), s.direct.WorldHash())
			case tc.at != nil && (err == nil || !strings.Contains(err.Error(), "map 1 data") || !strings.Contains(err.Error(), tc.named)):
				t.Errorf("%s, %s: %v, want an error naming map 1 data and %q", tc.name, ld.name, err, tc.named)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("%s, %s: %v, want %v", tc.name, ld.name, err, tc.want)
			}
		}
	}
}

// flip inverts the byte at off of the file at path.
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestLoadFrom: a save read and loaded from its bytes (ReadFrom,
// LoadFrom: the browser's replay viewer holds no files) is the one Read
// and Load give from its file.
func TestLoadFrom(t *testing.T) {
	s := newSession(t, 3, 1000, 4, 8)
	path := filepath.Join(t.TempDir(), "colony"+Ext)
	s.write(t, path)
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(f, nil, locksteptest.MapLoader, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := ReadFrom("colony", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadFrom(mem, bytes.NewReader(b), nil, locksteptest.MapLoader, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tick() != want.Tick() || got.WorldHash() != want.WorldHash() || got.Tick() != s.direct.Tick() {
		t.Fatalf("from memory: tick %d hash %x; from the file: tick %d hash %x", got.Tick(), got.WorldHash(), want.Tick(), want.WorldHash())
	}
	// A byte changed in a blob of the bytes is caught as in a file.
	b[mem.blobs[1].off+4] ^= 1
	if _, err := LoadFrom(mem, bytes.NewReader(b), nil, locksteptest.MapLoader, 0); !errors.Is(err, snapshot.ErrHashMismatch) {
		t.Fatalf("a changed blob: %v", err)
	}
	if _, err := ReadFrom("colony", bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrDamaged) {
		t.Fatalf("a changed blob read: %v", err)
	}
}
