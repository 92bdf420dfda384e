package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// rules are the steps the operating system allows.
type rules struct {
	// chmod: set the permission bits on the temporary file.
	chmod bool
	// syncDir: open the folder and sync it after the rename.
	syncDir bool
	// noSpace are the error numbers that mean the disk or quota is full.
	noSpace []syscall.Errno
}

// Windows error numbers for a full disk: ERROR_HANDLE_DISK_FULL and
// ERROR_DISK_FULL. Go's syscall package names them only on Windows.
const (
	winHandleDiskFull syscall.Errno = 39
	winDiskFull       syscall.Errno = 112
)

// rulesFor is the one place the per-OS choices are made.
func rulesFor(goos string) rules {
	switch goos {
	case "windows":
		return rules{chmod: false, syncDir: false, noSpace: []syscall.Errno{winHandleDiskFull, winDiskFull}}
	case "plan9", "js", "wasip1":
		return rules{chmod: true, syncDir: false, noSpace: []syscall.Errno{syscall.ENOSPC}}
	default:
		return rules{chmod: true, syncDir: true, noSpace: noSpaceUnix}
	}
}

// fsops are the file system calls Write makes, replaceable in tests to
// simulate a full disk or to see which steps ran.
type fsops struct {
	createTemp func(dir, pattern string) (file, error)
	rename     func(from, to string) error
	remove     func(name string) error
	openDir    func(dir string) (syncCloser, error)
}

// file is the temporary file as Write uses it.
type file interface {
	io.Writer
	Name() string
	Chmod(os.FileMode) error
	Sync() error
	Close() error
}

// syncCloser is an opened folder.
type syncCloser interface {
	Sync() error
	Close() error
}

var realOps = fsops{
	createTemp: func(dir, pattern string) (file, error) { return os.CreateTemp(dir, pattern) },
	rename:     os.Rename,
	remove:     os.Remove,
	openDir:    func(dir string) (syncCloser, error) { return os.Open(dir) },
}

// writer is a configured atomic writer; Write uses the running OS's.
type writer struct {
	rules rules
	ops   fsops
}

var current = writer{rules: rulesFor(runtime.GOOS), ops: realOps}

// Write writes the file at path with what write produces. Until Write
// returns nil the previous file, if any, is untouched; on any error the
// temporary file is removed. perm applies where the OS has permission
// bits (not Windows).
func Write(path string, perm os.FileMode, write func(io.Writer) error) error {
	return current.write(path, perm, write)
}

// WriteFile writes data to path atomically, as Write does.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// IsNoSpace reports whether err says the disk (or the user's quota) is
// full, on the running OS.
func IsNoSpace(err error) bool { return current.rules.isNoSpace(err) }

func (r rules) isNoSpace(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	for _, e := range r.noSpace {
		if errno == e {
			return true
		}
	}
	return false
}

func (wr writer) write(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := wr.ops.createTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			wr.ops.remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", base, err)
	}
	if wr.rules.chmod {
		if err := f.Chmod(perm); err != nil {
			return fmt.Errorf("chmod %s: %w", base, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", base, err)
	}
	// Closed before the rename: Windows cannot rename an open file.
	closed = true
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", base, err)
	}
	if err := wr.ops.rename(tmp, path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	if !wr.rules.syncDir {
		return nil
	}
	return wr.syncDir(dir)
}

// syncDir makes a rename in dir durable.
func (wr writer) syncDir(dir string) error {
	d, err := wr.ops.openDir(dir)
	if err != nil {
		return fmt.Errorf("open folder to sync it: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	return nil
}
