package saves

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep/locksteptest"
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
			info, passed, ok := NewestValid(save)
			for _, p := range passed {
				if p.Err == nil || p.Meta.Tick > 0 && ok && p.Meta.Tick < info.Meta.Tick {
					t.Fatalf("passed over %s (%v), which is valid or older than %s", p.Path, p.Err, info.Path)
				}
			}
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
	damageAt(t, path, 0)
}

// damageAt flips a bit of the byte at off (0: the middle; negative: from
// the end).
func damageAt(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case off == 0:
		off = len(b) / 2
	case off < 0:
		off += len(b)
	}
	b[off] ^= 0x40
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
	damageAt(t, filepath.Join(dir, "d"+Ext), offFlags+1) // List reads headers
	writeAt(t, s, filepath.Join(dir, "e"+Ext), 5)
	damageAt(t, filepath.Join(dir, "e"+Ext), -sumLen-1) // ... and not the blobs after them
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
	if want := []string{"b.lhsave", "c.lhsave", "a.lhsave", "e.lhsave", "d.lhsave"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("order %q, want %q", names, want)
	}
	if infos[4].Err == nil || infos[0].Err != nil || infos[4].Size == 0 || infos[3].Err != nil || infos[0].Checked {
		t.Fatalf("errors: %+v", infos)
	}
	if in := Inspect(infos[3].Path); in.Err == nil || !in.Checked {
		t.Fatalf("inspect of a save damaged in its body: %+v", in)
	}
	if _, err := List(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing folder: no error")
	}
}

// TestMakeRoom: on a full disk the oldest autosave goes first, and the
// newest valid one is never deleted, even when newer ones are damaged.
func TestMakeRoom(t *testing.T) {
	s := newSession(t, 1, 32, 5, 5)
	tests := []struct {
		name    string
		autos   map[uint64]bool // tick: valid
		removed []uint64        // in order, until nothing is left to remove
	}{
		{"oldest first", map[uint64]bool{10: true, 20: true, 30: true}, []uint64{10, 20}},
		{"newest valid kept", map[uint64]bool{10: true, 20: true, 30: false}, []uint64{10, 30}},
		{"only one", map[uint64]bool{10: true}, nil},
		{"none valid", map[uint64]bool{10: false, 20: false}, []uint64{10, 20}},
		{"none", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			save := filepath.Join(t.TempDir(), "colony"+Ext)
			writeAt(t, s, save, 40)
			for tick, ok := range tc.autos {
				p := AutosavePath(save, tick)
				writeAt(t, s, p, tick)
				if !ok {
					damage(t, p)
				}
			}
			var got []uint64
			for range len(tc.autos) + 1 {
				p, err := MakeRoom(save)
				if err != nil {
					t.Fatal(err)
				}
				if p == "" {
					break
				}
				tick, _ := autosaveTick(filepath.Base(p), "colony")
				got = append(got, tick)
			}
			if !slices.Equal(got, tc.removed) {
				t.Fatalf("removed ticks %v, want %v", got, tc.removed)
			}
			if _, err := os.Stat(save); err != nil {
				t.Fatal("the save itself was removed")
			}
		})
	}
}

// TestNotASave: a file that is not a save is named as such and none of its
// bytes appear in the error.
func TestNotASave(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"root:x:0:0:secret-hash:/root:/bin/bash\n", "LOCKS-not", "\x00\x01"} {
		path := filepath.Join(dir, "passwd")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, in := range []Info{Inspect(path), InspectHeader(path)} {
			msg := fmt.Sprint(in.Err)
			if !errors.Is(in.Err, ErrDamaged) || !errors.Is(in.Err, ErrNotSave) || !strings.Contains(msg, "not a lockhost save") {
				t.Errorf("%q: %v, want not a lockhost save", content, in.Err)
			}
			for _, frag := range []string{"root", "secret", "-not", "\\x00"} {
				if strings.Contains(content, strings.Trim(frag, "\\")) && strings.Contains(msg, frag) {
					t.Errorf("%q: the error shows the file's bytes: %s", content, msg)
				}
			}
		}
	}
}

// TestLoadBoundsClaims: a save whose blob claims a huge raw size (with
// every hash right, so Read accepts it) is refused by Load over the
// caller's limit before anything is allocated, and under the limit Load
// allocates for what the blob really inflates to, not for the claim.
func TestLoadBoundsClaims(t *testing.T) {
	s := newSession(t, 2, 64, 5, 5)
	for _, tc := range []struct {
		name  string
		claim uint64
		want  string
	}{
		{"over the limit", 1 << 40, "exceeds size limit"},
		{"under the limit, a lie", 1 << 30, "header says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := *s.point
			p.Maps = slices.Clone(p.Maps)
			p.Maps[1].Blob.RawSize = tc.claim
			pl, err := snapshot.NewPayload(&p, 0, s.meta.Tick, s.cmds)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "claims"+Ext)
			if err := Write(path, s.meta, pl); err != nil {
				t.Fatal(err)
			}
			f, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = Load(f, nil, locksteptest.MapLoader, 2<<30)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "map 1 data") {
				t.Fatalf("load: %v, want %q about map 1", err, tc.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
				t.Fatalf("load allocated %d MiB for a claim of %d MiB", alloc>>20, tc.claim>>20)
			}
		})
	}
}
