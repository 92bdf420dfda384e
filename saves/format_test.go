package saves

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
)

// session is a Counters world with a snapshot at snapTick and commands
// applied directly up to saveTick.
type session struct {
	point  *snapshot.Point
	cmds   []snapshot.MapCommands
	direct *locksteptest.Counters // applied the commands without a save
	meta   Meta
}

func newSession(t testing.TB, maps, size int, snapTick, saveTick uint64) *session {
	t.Helper()
	sim := locksteptest.New(maps, size)
	var c locksteptest.Counters
	// Some history before the snapshot.
	for sim.Tick() < snapTick {
		if maps > 0 && sim.Tick()%3 == 0 {
			cmd := c.AddCommand(int32(sim.Tick())%int32(maps), 2)
			cmd.Tick = sim.Tick()
			if err := sim.Apply(cmd); err != nil {
				t.Fatal(err)
			}
		}
		sim.Step()
	}
	point, err := snapshot.Build(sim, snapshot.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byMap := map[int32][]lockstep.Command{}
	var order []int32
	for sim.Tick() < saveTick {
		tick := sim.Tick()
		for seq := uint32(0); maps > 0 && seq < uint32(tick%3); seq++ {
			id := int32((tick + uint64(seq)) % uint64(maps))
			cmd := c.AddCommand(id, int8(seq)-1)
			cmd.Tick, cmd.Seq, cmd.Player = tick, seq, 7
			if err := sim.Apply(cmd); err != nil {
				t.Fatal(err)
			}
			if _, ok := byMap[id]; !ok {
				order = append(order, id)
			}
			byMap[id] = append(byMap[id], cmd)
		}
		sim.Step()
	}
	s := &session{point: point, direct: sim}
	for _, id := range order {
		s.cmds = append(s.cmds, snapshot.MapCommands{MapID: id, Commands: byMap[id]})
	}
	s.meta = Meta{
		GameName: "Test colony", GameVersion: "1.5.4069", Mods: []string{"ludeon.core", "some.mod"},
		Databases: []DefSummary{{Type: "ThingDef", Count: 12, Hash: 0xabcdef}},
		Tick:      saveTick, Created: 1700000000,
	}
	return s
}

func (s *session) payload(t testing.TB) *snapshot.Payload {
	t.Helper()
	pl, err := snapshot.NewPayload(s.point, 0, s.meta.Tick, s.cmds)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func (s *session) write(t testing.TB, path string) {
	t.Helper()
	if err := Write(path, s.meta, s.payload(t)); err != nil {
		t.Fatal(err)
	}
}

func sameSim(t *testing.T, got, want lockstep.Sim) {
	t.Helper()
	if got.Tick() != want.Tick() {
		t.Fatalf("tick %d, want %d", got.Tick(), want.Tick())
	}
	if got.WorldHash() != want.WorldHash() {
		t.Fatalf("world hash %x, want %x", got.WorldHash(), want.WorldHash())
	}
	for _, id := range want.MapIDs() {
		g, _ := got.MapHash(id)
		w, _ := want.MapHash(id)
		if g != w {
			t.Fatalf("map %d hash %x, want %x", id, g, w)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name               string
		maps, size         int
		snapTick, saveTick uint64
	}{
		{"commands since snapshot", 3, 200, 10, 40},
		{"no commands", 2, 64, 5, 5},
		{"no maps", 0, 0, 3, 9},
		{"larger maps", 4, 300 << 10, 20, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, tc.maps, tc.size, tc.snapTick, tc.saveTick)
			path := filepath.Join(t.TempDir(), "colony"+Ext)
			s.write(t, path)
			f, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.Meta, s.meta) {
				t.Fatalf("meta %+v, want %+v", f.Meta, s.meta)
			}
			st, _ := os.Stat(path)
			if f.Size != st.Size() {
				t.Fatalf("size %d, file has %d", f.Size, st.Size())
			}
			for _, ml := range []lockstep.MapLoader{nil, locksteptest.MapLoader} {
				sim, err := Load(f, locksteptest.Load, ml, 64<<20)
				if err != nil {
					t.Fatalf("load (map loader %v): %v", ml != nil, err)
				}
				sameSim(t, sim, s.direct)
			}
			info := Inspect(path)
			if info.Err != nil || info.Meta.Tick != tc.saveTick || len(info.Maps) != tc.maps || info.Size != st.Size() {
				t.Fatalf("inspect: %+v", info)
			}
			for i, m := range info.Maps {
				if m.ID != s.point.Maps[i].ID || m.StateHash != s.point.Maps[i].StateHash ||
					m.Size != uint64(len(s.point.Maps[i].Blob.Data)) || m.RawSize != s.point.Maps[i].Blob.RawSize {
					t.Fatalf("map info %+v, point %+v", m, s.point.Maps[i])
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	s := newSession(t, 2, 1000, 4, 8)
	path := filepath.Join(t.TempDir(), "colony"+Ext)
	s.write(t, path)
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(f, nil, nil, 0); err == nil {
		t.Fatal("no loader: no error")
	}
	if _, err := Load(f, locksteptest.Load, nil, 100); !errors.Is(err, snapshot.ErrTooLarge) {
		t.Fatalf("over maxRaw: %v", err)
	}
	if _, err := Load(f, nil, locksteptest.MapLoader, 100); !errors.Is(err, snapshot.ErrTooLarge) {
		t.Fatalf("over maxRaw, map loader: %v", err)
	}
}

func TestWriteRefusesInconsistentBody(t *testing.T) {
	s := newSession(t, 1, 16, 5, 9)
	pl := s.payload(t)
	dir := t.TempDir()
	for _, tick := range []uint64{4, 8, 10} {
		m := s.meta
		m.Tick = tick
		if err := Write(filepath.Join(dir, "x"+Ext), m, pl); err == nil {
			t.Fatalf("meta tick %d with a body granted 9: no error", tick)
		}
	}
	if err := Write(filepath.Join(dir, "x"+Ext), s.meta, nil); err == nil {
		t.Fatal("nil body: no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("%d files left behind", len(entries))
	}
}

// layout is where the regions of a save file are.
type layout struct {
	metaEnd, hdrEnd int
	blobs           []region // world, then maps
	size            int
}

type region struct {
	name       string
	start, end int
}

func layoutOf(t *testing.T, path string) ([]byte, layout) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	l := layout{size: len(b)}
	l.metaEnd = prefixLen + int(binary.BigEndian.Uint32(b[offMetaLen:]))
	l.hdrEnd = l.metaEnd + payloadPrefix + int(binary.BigEndian.Uint32(b[l.metaEnd:]))
	off := l.hdrEnd
	add := func(name string, n int) {
		l.blobs = append(l.blobs, region{name, off, off + n})
		off += n
	}
	add("world data", int(f.Header.World.Size))
	for _, m := range f.Header.Maps {
		add(fmt.Sprintf("map %d data", m.ID), int(m.Blob.Size))
	}
	if off != len(b)-sumLen {
		t.Fatalf("blobs end at %d, checksum at %d", off, len(b)-sumLen)
	}
	return b, l
}

// regionAt names the part of the file holding offset i, as Read's errors
// do.
func (l layout) regionAt(i int) string {
	switch {
	case i < prefixLen:
		return "header"
	case i < l.metaEnd:
		return "meta"
	case i < l.hdrEnd:
		return "command list"
	case i >= l.size-sumLen:
		return "checksum"
	}
	for _, r := range l.blobs {
		if i >= r.start && i < r.end {
			return r.name
		}
	}
	return "?"
}

func TestFlippedByteNamed(t *testing.T) {
	s := newSession(t, 3, 40, 6, 12)
	dir := t.TempDir()
	good := filepath.Join(dir, "good"+Ext)
	s.write(t, good)
	b, l := layoutOf(t, good)
	t.Logf("save of %d bytes: meta to %d, header to %d, blobs %+v", l.size, l.metaEnd, l.hdrEnd, l.blobs)
	bad := filepath.Join(dir, "bad"+Ext)
	seen := map[string]int{}
	for i := range b {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			d := bytes.Clone(b)
			d[i] ^= mask
			if err := os.WriteFile(bad, d, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(bad)
			want := l.regionAt(i)
			if err == nil {
				t.Fatalf("byte %d (%s) ^ %#x: read succeeded", i, want, mask)
			}
			if !errors.Is(err, ErrDamaged) || errors.Is(err, ErrVersion) {
				t.Fatalf("byte %d (%s) ^ %#x: %v is not ErrDamaged", i, want, mask, err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("byte %d ^ %#x: %q does not name %q", i, mask, err, want)
			}
			seen[want]++
		}
	}
	for _, r := range []string{"header", "meta", "command list", "world data", "map 0 data", "map 2 data", "checksum"} {
		if seen[r] == 0 {
			t.Errorf("no byte of region %q tested", r)
		}
	}
}

func TestDamageMessages(t *testing.T) {
	s := newSession(t, 2, 40, 6, 12)
	dir := t.TempDir()
	good := filepath.Join(dir, "good"+Ext)
	s.write(t, good)
	b, l := layoutOf(t, good)
	tests := []struct {
		name string
		off  int
		want string
	}{
		{"magic", 0, `header: not a lockhost save`},
		{"flags", offFlags + 1, "header: unknown flags 0x0001 at byte 10"},
		{"total length", offTotal + 7, fmt.Sprintf("header: length field at byte 12 says %d bytes, the file has %d", l.size^1, l.size)},
		{"meta length", offMetaLen + 3, fmt.Sprintf("header: meta length field at byte 20 says %d, the meta is %d bytes", (l.metaEnd-prefixLen)^1, l.metaEnd-prefixLen)},
		{"payload header", l.hdrEnd - 1, fmt.Sprintf("command list and snapshot header (bytes %d..%d)", l.metaEnd, l.hdrEnd)},
		{"world", l.blobs[0].start, fmt.Sprintf("world data (bytes %d..%d) does not match its hash", l.blobs[0].start, l.blobs[0].end)},
		{"map 1", l.blobs[2].end - 1, fmt.Sprintf("map 1 data (bytes %d..%d) does not match its hash", l.blobs[2].start, l.blobs[2].end)},
		{"checksum", l.size - 1, "checksum mismatch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := bytes.Clone(b)
			d[tc.off] ^= 1
			path := filepath.Join(t.TempDir(), "bad"+Ext)
			os.WriteFile(path, d, 0o644)
			_, err := Read(path)
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrDamaged naming %q", err, tc.want)
			}
		})
	}
}

func TestTruncation(t *testing.T) {
	s := newSession(t, 2, 40, 6, 12)
	dir := t.TempDir()
	good := filepath.Join(dir, "good"+Ext)
	s.write(t, good)
	b, _ := os.ReadFile(good)
	bad := filepath.Join(dir, "bad"+Ext)
	for n := 0; n < len(b); n++ {
		if err := os.WriteFile(bad, b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(bad)
		if !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrDamaged) {
			t.Fatalf("cut at %d: %v, want ErrTruncated", n, err)
		}
		want := fmt.Sprintf("the file ends at byte %d of %d", n, len(b))
		if n < prefixLen {
			want = fmt.Sprintf("the file ends at byte %d, inside its 24-byte header", n)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("cut at %d: %q does not say %q", n, err, want)
		}
	}
	// Bytes after the end are damage, not a newer format.
	os.WriteFile(bad, append(bytes.Clone(b), 0), 0o644)
	if _, err := Read(bad); !errors.Is(err, ErrDamaged) || errors.Is(err, ErrTruncated) ||
		!strings.Contains(err.Error(), fmt.Sprintf("1 bytes after its declared end at byte %d", len(b))) {
		t.Fatalf("trailing byte: %v", err)
	}
}

func TestNewerVersion(t *testing.T) {
	s := newSession(t, 1, 40, 2, 3)
	dir := t.TempDir()
	good := filepath.Join(dir, "good"+Ext)
	s.write(t, good)
	b, _ := os.ReadFile(good)
	// A file really written by a newer version: its checksum covers its
	// version number.
	newer := bytes.Clone(b)
	binary.BigEndian.PutUint16(newer[offVersion:], FormatVersion+1)
	binary.BigEndian.PutUint64(newer[len(newer)-sumLen:], xxhash.Sum64(newer[:len(newer)-sumLen]))
	path := filepath.Join(dir, "newer"+Ext)
	os.WriteFile(path, newer, 0o644)
	_, err := Read(path)
	if !errors.Is(err, ErrVersion) || errors.Is(err, ErrDamaged) ||
		!strings.Contains(err.Error(), "written by a newer lockhost (save format version 2; this build reads up to version 1)") {
		t.Fatalf("newer version: %v", err)
	}
	if info := Inspect(path); !errors.Is(info.Err, ErrVersion) {
		t.Fatalf("inspect: %v", info.Err)
	}
	// A newer version with a different layout entirely.
	os.WriteFile(path, append([]byte(Magic), 0, 9, 0xde, 0xad), 0o644)
	if _, err := Read(path); !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "version 9") {
		t.Fatalf("newer, short: %v", err)
	}
	// Version 0 is damage.
	binary.BigEndian.PutUint16(newer[offVersion:], 0)
	os.WriteFile(path, newer, 0o644)
	if _, err := Read(path); !errors.Is(err, ErrDamaged) {
		t.Fatalf("version 0: %v", err)
	}
}

func TestWriteFailureKeepsOldSave(t *testing.T) {
	s := newSession(t, 3, 4<<20, 3, 9) // a body of several chunks
	dir := t.TempDir()
	old := filepath.Join(dir, "colony"+Ext)
	s.write(t, old)
	oldBytes, _ := os.ReadFile(old)
	newer := *s
	newer.meta.GameName = "changed"

	notDir := filepath.Join(dir, "missing", "colony"+Ext)
	isDir := filepath.Join(dir, "adir"+Ext)
	if err := os.Mkdir(isDir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(isDir, "x"), []byte("x"), 0o644) // rename over a non-empty folder fails everywhere

	boom := errors.New("disk full")
	tests := []struct {
		name string
		path string
		hook func(int) error
		want string
	}{
		{"missing folder", notDir, nil, "create temporary file"},
		{"target is a folder", isDir, nil, "rename into place"},
		{"fails halfway", old, func(n int) error {
			if n == 2 {
				return boom
			}
			return nil
		}, "disk full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			testHookWrite = tc.hook
			defer func() { testHookWrite = nil }()
			err := Write(tc.path, newer.meta, newer.payload(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "save "+tc.path) {
				t.Fatalf("err = %v, want one naming the save and %q", err, tc.want)
			}
			if tc.hook != nil && !errors.Is(err, boom) {
				t.Fatalf("err = %v does not wrap the write error", err)
			}
			got, _ := os.ReadFile(old)
			if !bytes.Equal(got, oldBytes) {
				t.Fatal("old save changed")
			}
			f, err := Read(old)
			if err != nil || f.Meta.GameName != s.meta.GameName {
				t.Fatalf("old save: %v", err)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Fatalf("temporary file %s left behind", e.Name())
				}
			}
			if len(entries) != 2 {
				t.Fatalf("%d entries in the folder, want the save and the folder", len(entries))
			}
		})
	}
}
