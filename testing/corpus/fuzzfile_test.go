package corpus

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	for _, args := range [][]any{
		{[]byte{}},
		{[]byte("\x00\xff\n\"é")},
		{byte(0), []byte("x")},
		{byte(255), []byte{}},
		{uint16(65280), int32(-1), []byte{1}},
		{int32(2147483647), []byte("a")},
		{[]byte("LHPQ"), "lockhost colony", "\xff\xfe", int32(-2147483648)},
		{true, int64(-5), uint64(1 << 63)},
	} {
		b, err := Marshal(args...)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", args, err)
		}
		got, err := Unmarshal(b)
		if err != nil {
			t.Fatalf("Unmarshal(%q): %v", b, err)
		}
		if !reflect.DeepEqual(got, args) {
			t.Errorf("round trip of %v gave %v (file %q)", args, got, b)
		}
	}
}

// TestUnmarshalGoForms reads the forms Go itself writes, which differ from
// Marshal's for some values.
func TestUnmarshalGoForms(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []any
	}{
		{"go test fuzz v1\n[]byte(\"<?>\")\n", []any{[]byte("<?>")}},
		{"go test fuzz v1\nbyte('\\x10')\n[]byte(\"\\x83\")\n", []any{byte(0x10), []byte{0x83}}},
		{"go test fuzz v1\nbyte('a')\n", []any{byte('a')}},
		{"go test fuzz v1\nbyte(200)\n", []any{byte(200)}},
		{"go test fuzz v1\nrune('\\x02')\nint32(-7)\n", []any{int32(2), int32(-7)}},
		{"go test fuzz v1\r\nuint16(7)\r\nstring(\"é\")\r\n", []any{uint16(7), "é"}},
	} {
		got, err := Unmarshal([]byte(tc.file))
		if err != nil {
			t.Errorf("Unmarshal(%q): %v", tc.file, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Unmarshal(%q) = %#v, want %#v", tc.file, got, tc.want)
		}
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	for _, file := range []string{
		"",
		"go test fuzz v1\n",
		"go test fuzz v2\n[]byte(\"\")\n",
		"go test fuzz v1\n[]int(\"\")\n",
		"go test fuzz v1\nbyte(256)\n",
		"go test fuzz v1\nuint16(-1)\n",
		"go test fuzz v1\nint32(2147483648)\n",
		"go test fuzz v1\nstring(1)\n",
		"go test fuzz v1\nfloat32(1)\n",
		"go test fuzz v1\n[]byte(\"x\"\n",
		"go test fuzz v1\nos.Exit(1)\n",
	} {
		if got, err := Unmarshal([]byte(file)); err == nil {
			t.Errorf("Unmarshal(%q) = %v, want an error", file, got)
		}
	}
}

func TestFileName(t *testing.T) {
	a, b := FileName([]byte("a")), FileName([]byte("b"))
	if a == b || !IsRecorded(a) || !IsRecorded(b) || a != FileName([]byte("a")) {
		t.Fatalf("names %q and %q", a, b)
	}
	for _, name := range []string{"0be613a59af9e352", "rec-0be613a59af9e35", "rec-0BE613A59AF9E352", "rec-0be613a59af9e352.tmp"} {
		if IsRecorded(name) {
			t.Errorf("%q taken for a recorded seed", name)
		}
	}
}

// TestWriteDir rewrites a folder holding a crasher Go saved, a stale
// recorded seed and a current one: only the stale one goes.
func TestWriteDir(t *testing.T) {
	dir := t.TempDir()
	crasher := []byte("go test fuzz v1\n[]byte(\"<?>\")\n")
	keep, _ := Marshal([]byte("keep"))
	stale, _ := Marshal([]byte("stale"))
	fresh, _ := Marshal([]byte("fresh"))
	for name, b := range map[string][]byte{"0be613a59af9e352": crasher, FileName(keep): keep, FileName(stale): stale} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	written, removed, err := WriteDir(dir, [][]byte{keep, fresh})
	if err != nil {
		t.Fatal(err)
	}
	if written != 1 || removed != 1 {
		t.Errorf("wrote %d and removed %d files, want 1 and 1", written, removed)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"0be613a59af9e352", FileName(keep), FileName(fresh)}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("folder holds %v, want %v", names, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, FileName(fresh))); string(b) != string(fresh) {
		t.Fatalf("fresh seed holds %q", b)
	}
	// A second run with the same seeds changes nothing.
	if written, removed, err := WriteDir(dir, [][]byte{keep, fresh}); err != nil || written != 0 || removed != 0 {
		t.Fatalf("second run: wrote %d, removed %d, %v", written, removed, err)
	}
}

// TestFramesAndTransfers splits a hand-made stream: whole frames only,
// and a payload in two chunks after a resync.
func TestFramesAndTransfers(t *testing.T) {
	stream := appendPacket(t, nil, 22, []byte{0x80})
	stream = appendPacket(t, stream, 26, []byte{0x80})
	stream = appendPacket(t, stream, 18, []byte{0x83, 0xa1, 'o', 0x00, 0xa1, 't', 0x03, 0xa1, 'd', 0xc4, 0x02, 'a', 'b'})
	stream = appendPacket(t, stream, 18, []byte{0x83, 0xa1, 'o', 0x02, 0xa1, 't', 0x03, 0xa1, 'd', 0xc4, 0x01, 'c'})
	whole := len(stream)
	stream = append(stream, 0, 0, 0, 9, 22) // cut short
	fs := Frames(stream)
	if len(fs) != 4 || fs[3].End != whole || fs[0].ID != 22 || string(fs[0].Body) != "\x80" {
		t.Fatalf("frames %+v", fs)
	}
	ts, err := Transfers(fs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || !ts[0].Repair || string(ts[0].Payload) != "abc" || !slices.Equal(ts[0].Chunks, []int{2, 1}) {
		t.Fatalf("transfers %+v", ts)
	}
}

func appendPacket(t *testing.T, dst []byte, id byte, body []byte) []byte {
	t.Helper()
	n := len(body) + 1
	return append(append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n), id), body...)
}
