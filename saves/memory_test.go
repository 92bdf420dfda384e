package saves_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/saves/savestest"
)

// TestHugeFileBoundedMemory: a sparse 256 MiB file whose header agrees with
// its size is read, listed and inspected without allocating anything
// near its size, and is named damaged where its world data is.
func TestHugeFileBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 256 MiB of zeros")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "huge"+saves.Ext)
	const size = 256 << 20
	if err := savestest.Sparse(path, size, saves.Meta{GameName: "huge", Tick: 7}); err != nil {
		t.Fatal(err)
	}
	const budget = 16 << 20
	for _, tc := range []struct {
		name string
		run  func() error
		want string // "" for no error
	}{
		{"Read", func() error { _, err := saves.Read(path); return err }, "world data"},
		{"Inspect", func() error { return saves.Inspect(path).Err }, "world data"},
		{"ReadHeader", func() error { _, err := saves.ReadHeader(path); return err }, ""},
		{"List", func() error {
			infos, err := saves.List(dir)
			if err == nil && (len(infos) != 1 || infos[0].Meta.GameName != "huge" || infos[0].Size != size) {
				return errors.New("list does not show the file's meta")
			}
			return err
		}, ""},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := tc.run()
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > budget {
			t.Errorf("%s allocated %d MiB for a %d MiB file", tc.name, alloc>>20, size>>20)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, saves.ErrDamaged) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want damage in %s", tc.name, err, tc.want)
		}
	}
}
