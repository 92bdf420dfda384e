package saves

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func FuzzRead(f *testing.F) {
	s := newSession(f, 2, 40, 3, 6)
	dir := f.TempDir()
	good := filepath.Join(dir, "good"+Ext)
	s.write(f, good)
	b, err := os.ReadFile(good)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(b[:prefixLen])
	f.Add([]byte(Magic))
	f.Add([]byte{})
	// Fuzz calls in one process run one at a time: reuse one file.
	path := filepath.Join(dir, "f"+Ext)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := Read(path)
		mem, merr := ReadFrom(path, bytes.NewReader(data), int64(len(data)))
		if (err == nil) != (merr == nil) || err != nil && err.Error() != merr.Error() || err == nil && !reflect.DeepEqual(mem.Meta, file.Meta) {
			t.Fatalf("from the file: %v; from memory: %v", err, merr)
		}
		info := Inspect(path)
		head, herr := ReadHeader(path)
		if herr == nil && err == nil && !reflect.DeepEqual(head.Meta, file.Meta) {
			t.Fatalf("header read %+v, full read %+v", head.Meta, file.Meta)
		}
		if err == nil && herr != nil {
			t.Fatalf("a valid save fails its header read: %v", herr)
		}
		if herr != nil && !errors.Is(herr, ErrDamaged) && !errors.Is(herr, ErrVersion) {
			t.Fatalf("header error %v is neither damage nor version", herr)
		}
		if err != nil {
			if file != nil {
				t.Fatal("a file and an error")
			}
			if !errors.Is(err, ErrDamaged) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v is neither damage nor version", err)
			}
			if info.Err == nil || info.Err.Error() != err.Error() {
				t.Fatalf("inspect says %v, read %v", info.Err, err)
			}
			return
		}
		if info.Err != nil || !reflect.DeepEqual(info.Meta, file.Meta) || info.Size != int64(len(data)) ||
			len(info.Maps) != len(file.Header.Maps) {
			t.Fatalf("inspect %+v disagrees with read %+v", info, file.Meta)
		}
	})
}
