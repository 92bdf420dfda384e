package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "colony.lhsave")
	for _, content := range []string{"first", "second, longer"} {
		if err := WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Fatalf("file holds %q, want %q", got, content)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600", st.Mode().Perm())
		}
	}
}

// TestFailureKeepsOldFile: a write that fails part way, as on a full disk,
// leaves the old file as it was and no temporary file behind.
func TestFailureKeepsOldFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"disk full", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}},
		{"other", errors.New("encoder broke")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "colony.lhsave")
			if err := os.WriteFile(path, []byte("good"), 0o644); err != nil {
				t.Fatal(err)
			}
			err := Write(path, 0o644, func(w io.Writer) error {
				io.WriteString(w, "half a sa")
				return tc.err
			})
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want the writer's error", err)
			}
			if got, want := IsNoSpace(err), tc.name == "disk full"; got != want {
				t.Fatalf("IsNoSpace(%v) = %v", err, got)
			}
			got, _ := os.ReadFile(path)
			if string(got) != "good" {
				t.Fatalf("old file became %q", got)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("temporary file left behind: %d entries", len(entries))
			}
		})
	}
}

func TestNoFolder(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "missing", "f"), []byte("x"), 0o644)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

// fakeFile records what happens to the temporary file.
type fakeFile struct {
	log    *[]string
	name   string
	closed bool
}

func (f *fakeFile) Write(p []byte) (int, error) { return len(p), nil }
func (f *fakeFile) Name() string                { return f.name }
func (f *fakeFile) Chmod(os.FileMode) error     { *f.log = append(*f.log, "chmod"); return nil }
func (f *fakeFile) Sync() error                 { *f.log = append(*f.log, "sync"); return nil }
func (f *fakeFile) Close() error {
	*f.log = append(*f.log, "close")
	f.closed = true
	return nil
}

type fakeDir struct{ log *[]string }

func (d fakeDir) Sync() error  { *d.log = append(*d.log, "syncdir"); return nil }
func (d fakeDir) Close() error { return nil }

// TestRulesPerOS runs the writer with each OS's rules against a recording
// file system: the steps, their order, and that the temporary file is
// closed before the rename (Windows cannot rename an open file).
func TestRulesPerOS(t *testing.T) {
	for _, tc := range []struct {
		goos string
		want []string
	}{
		{"linux", []string{"create", "chmod", "sync", "close", "rename", "opendir", "syncdir"}},
		{"darwin", []string{"create", "chmod", "sync", "close", "rename", "opendir", "syncdir"}},
		{"freebsd", []string{"create", "chmod", "sync", "close", "rename", "opendir", "syncdir"}},
		{"windows", []string{"create", "sync", "close", "rename"}},
	} {
		t.Run(tc.goos, func(t *testing.T) {
			var log []string
			var tmp *fakeFile
			wr := writer{rules: rulesFor(tc.goos), ops: fsops{
				createTemp: func(dir, pattern string) (file, error) {
					log = append(log, "create")
					tmp = &fakeFile{log: &log, name: filepath.Join(dir, strings.Replace(pattern, "*", "1", 1))}
					return tmp, nil
				},
				rename: func(from, to string) error {
					if !tmp.closed {
						return fmt.Errorf("rename of an open file")
					}
					log = append(log, "rename")
					return nil
				},
				remove: func(string) error { log = append(log, "remove"); return nil },
				openDir: func(string) (syncCloser, error) {
					if tc.goos == "windows" {
						return nil, errors.New("Access is denied.")
					}
					log = append(log, "opendir")
					return fakeDir{&log}, nil
				},
			}}
			err := wr.write(filepath.Join("saves", "colony.lhsave"), 0o644, func(w io.Writer) error {
				_, err := io.WriteString(w, "data")
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(log, tc.want) {
				t.Fatalf("steps %v, want %v", log, tc.want)
			}
		})
	}
}

func TestIsNoSpacePerOS(t *testing.T) {
	wrap := func(e syscall.Errno) error {
		return fmt.Errorf("save: %w", &fs.PathError{Op: "write", Path: "f", Err: e})
	}
	for _, tc := range []struct {
		goos string
		err  error
		want bool
	}{
		{"linux", wrap(syscall.ENOSPC), true},
		{"linux", wrap(syscall.EDQUOT), true},
		{"linux", wrap(syscall.EACCES), false},
		{"darwin", wrap(syscall.ENOSPC), true},
		{"linux", errors.New("no space left on device"), false},
		{"windows", wrap(winDiskFull), true},
		{"windows", wrap(winHandleDiskFull), true},
		{"windows", wrap(5), false}, // ERROR_ACCESS_DENIED
		{"linux", nil, false},
	} {
		if got := rulesFor(tc.goos).isNoSpace(tc.err); got != tc.want {
			t.Errorf("%s: isNoSpace(%v) = %v, want %v", tc.goos, tc.err, got, tc.want)
		}
	}
}
