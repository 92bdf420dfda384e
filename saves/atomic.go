package saves

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic writes the file at path with what write produces. Until it
// returns successfully the previous file, if any, is untouched; on any
// error the temporary file is removed.
func WriteAtomic(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", base, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", base, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", base, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", base, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open folder: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	return nil
}
