package saves

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/lockhost/lockhost/snapshot"
)

func TestAutosavePath(t *testing.T) {
	tests := []struct {
		save string
		tick uint64
		want string
	}{
		{"saves/colony.lhsave", 42, "saves/colony.auto-00000000000000000042.lhsave"},
		{"colony.lhsave", 0, "colony.auto-00000000000000000000.lhsave"},
		{"/x/my.colony", 18446744073709551615, "/x/my.colony.auto-18446744073709551615.lhsave"},
	}
	for _, tc := range tests {
		if got := AutosavePath(tc.save, tc.tick); got != filepath.FromSlash(tc.want) {
			t.Errorf("AutosavePath(%q, %d) = %q, want %q", tc.save, tc.tick, got, tc.want)
		}
	}
	// Names sort as ticks do.
	a, b := filepath.Base(AutosavePath("c.lhsave", 999)), filepath.Base(AutosavePath("c.lhsave", 1000))
	if a >= b {
		t.Errorf("%q sorts after %q", a, b)
	}
}

// writeAt saves s with its meta tick moved to tick (no commands).
func writeAt(t *testing.T, s *session, path string, tick uint64) {
	t.Helper()
	m := s.meta
	m.Tick = tick
	if err := Write(path, m, s.payloadAt(t, tick)); err != nil {
		t.Fatal(err)
	}
}

// payloadAt lays out the snapshot granted up to tick, with no commands.
func (s *session) payloadAt(t *testing.T, tick uint64) *snapshot.Payload {
	t.Helper()
	pl, err := snapshot.NewPayload(s.point, 0, tick, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func TestAutosaveRotation(t *testing.T) {
	s := newSession(t, 2, 32, 5, 5)
	dir := t.TempDir()
	save := filepath.Join(dir, "colony"+Ext)
	// Files that are not autosaves of colony.lhsave.
	os.WriteFile(filepath.Join(dir, "other.auto-00000000000000000007.lhsave"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "colony.auto-7.lhsave"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "colony.auto-0000000000000000000x.lhsave"), []byte("x"), 0o644)

	ticks := []uint64{30, 5, 1000, 100, 7}
	for _, tick := range ticks {
		writeAt(t, s, AutosavePath(save, tick), tick)
	}
	got, err := Autosaves(save)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tick := range []uint64{1000, 100, 30, 7, 5} {
		want = append(want, AutosavePath(save, tick))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("autosaves %q, want %q", got, want)
	}

	tests := []struct {
		keep int
		want []string
	}{
		{10, want},
		{3, want[:3]},
		{1, want[:1]},
		{0, []string{}},
	}
	for _, tc := range tests {
		if err := PruneAutosaves(save, tc.keep); err != nil {
			t.Fatal(err)
		}
		got, _ := Autosaves(save)
		if len(got) != len(tc.want) || (len(got) > 0 && !reflect.DeepEqual(got, tc.want)) {
			t.Fatalf("keep %d: %q, want %q", tc.keep, got, tc.want)
		}
	}
	if err := PruneAutosaves(save, -1); err == nil {
		t.Fatal("keep -1: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "other.auto-00000000000000000007.lhsave")); err != nil {
		t.Fatal("pruned another save's autosave")
	}
}

func TestNewestValid(t *testing.T) {
	s := newSession(t, 2, 32, 5, 5)
	tests := []struct {
		name    string
		main    int64 // main save's tick, -1 none, -2 damaged
		autos   map[uint64]bool
		want    string // "main", "auto-<tick>" or "" for none
		wantTck uint64
	}{
		{"damaged newest autosave skipped", 20, map[uint64]bool{30: true, 40: false}, "auto", 30},
		{"main newest", 50, map[uint64]bool{30: true, 40: true}, "main", 50},
		{"main damaged", -2, map[uint64]bool{30: true}, "auto", 30},
		{"only main", 8, nil, "main", 8},
		{"nothing valid", -2, map[uint64]bool{30: false}, "", 0},
		{"nothing at all", -1, nil, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			save := filepath.Join(dir, "colony"+Ext)
			switch {
			case tc.main >= 0:
				writeAt(t, s, save, uint64(tc.main))
			case tc.main == -2:
				writeAt(t, s, save, 60)
				damage(t, save)
			}
			for tick, ok := range tc.autos {
				p := AutosavePath(save, tick)
				writeAt(t, s, p, tick)
				if !ok {
					damage(t, p)
				}
			}
			info, ok := NewestValid(save)
			if tc.want == "" {
				if ok {
					t.Fatalf("found %+v", info)
				}
				return
			}
			wantPath := save
			if tc.want == "auto" {
				wantPath = AutosavePath(save, tc.wantTck)
			}
			if !ok || info.Path != wantPath || info.Meta.Tick != tc.wantTck || info.Err != nil {
				t.Fatalf("got %+v, %v; want %s", info, ok, wantPath)
			}
		})
	}
}

// damage flips a byte in the middle of a file.
func damage(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestList(t *testing.T) {
	s := newSession(t, 1, 32, 5, 5)
	dir := t.TempDir()
	writeAt(t, s, filepath.Join(dir, "a"+Ext), 10)
	writeAt(t, s, filepath.Join(dir, "b"+Ext), 30)
	writeAt(t, s, filepath.Join(dir, "c"+Ext), 10)
	writeAt(t, s, filepath.Join(dir, "d"+Ext), 20)
	damage(t, filepath.Join(dir, "d"+Ext))
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"+Ext), 0o755)
	// c is newer than a on disk.
	past := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(dir, "a"+Ext), past, past)

	infos, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range infos {
		names = append(names, filepath.Base(in.Path))
	}
	if want := []string{"b.lhsave", "c.lhsave", "a.lhsave", "d.lhsave"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("order %q, want %q", names, want)
	}
	if infos[3].Err == nil || infos[0].Err != nil || infos[3].Size == 0 {
		t.Fatalf("errors: %+v", infos)
	}
	if _, err := List(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing folder: no error")
	}
}
