package modsync

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Cache is a content-addressed folder of verified files, shared by every
// host a joiner fetches from:
//
//	objects/ab/abcdef…  a file, named by its SHA-256 in hex, read-only
//	partial/abcdef…     a download under way (resumable)
//	views/<manifest>/…  mod folders laid out from objects (View)
//	manifests/<hash>    the manifests views were laid out from (Remember)
//
// A file enters objects/ only after its hash was checked, by rename, so
// objects/ never holds a file whose name is not its hash (unless the disk
// changed it: Verify).
type Cache struct {
	dir string
}

// DefaultCacheDir is the cache of the user's cache folder:
// os.UserCacheDir()/lockhost/content.
func DefaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("content cache: %w", err)
	}
	return filepath.Join(base, "lockhost", "content"), nil
}

// OpenCache opens (creating it if need be) the cache in dir.
func OpenCache(dir string) (*Cache, error) {
	for _, sub := range []string{"objects", "partial", "views"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("content cache: %w", err)
		}
	}
	return &Cache{dir: dir}, nil
}

// Dir is the cache's folder.
func (c *Cache) Dir() string { return c.dir }

func (c *Cache) objectPath(s Sum) string {
	h := s.String()
	return filepath.Join(c.dir, "objects", h[:2], h)
}

func (c *Cache) partialPath(s Sum) string { return filepath.Join(c.dir, "partial", s.String()) }

// Has reports whether the cache holds the file with hash s and size.
func (c *Cache) Has(s Sum, size int64) bool {
	st, err := os.Lstat(c.objectPath(s))
	return err == nil && st.Mode().IsRegular() && st.Size() == size
}

// Open opens the cached file with hash s.
func (c *Cache) Open(s Sum) (*os.File, error) {
	f, err := os.Open(c.objectPath(s))
	if err != nil {
		return nil, fmt.Errorf("content cache: %w", err)
	}
	return f, nil
}

// ErrHashMismatch is wrapped by the errors of a file whose bytes do not
// have the hash they should.
var ErrHashMismatch = errors.New("hash mismatch")

// Insert adds the file with hash s and size read from r, checking both
// before the file becomes visible. It reads at most size+1 bytes.
func (c *Cache) Insert(s Sum, size int64, r io.Reader) error {
	if c.Has(s, size) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Join(c.dir, "partial"), "insert-*")
	if err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	_, err = io.Copy(tmp, io.LimitReader(r, size+1))
	if err == nil {
		err = c.commit(tmp, s, size)
	} else {
		tmp.Close()
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// commit checks the whole of f (a file in partial/) against s and size,
// syncs it and renames it into objects/. It closes f; on an error the
// caller removes it.
func (c *Cache) commit(f *os.File, s Sum, size int64) error {
	defer f.Close()
	got, n, err := hashReader(f, size+1)
	if err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	if n != size || got != s {
		return fmt.Errorf("content cache: file %s: %w (%d bytes, want %d)", s, ErrHashMismatch, n, size)
	}
	if runtime.GOOS != "windows" {
		if err := f.Chmod(0o444); err != nil {
			return fmt.Errorf("content cache: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	dst := c.objectPath(s)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	syncDir(filepath.Dir(dst))
	return nil
}

// syncDir makes a rename in dir durable where the system allows it.
func syncDir(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// hashReader hashes f from its start, reading at most limit bytes.
func hashReader(f *os.File, limit int64) (Sum, int64, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Sum{}, 0, err
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit))
	var s Sum
	h.Sum(s[:0])
	return s, n, err
}

// Entry is one cached file.
type Entry struct {
	Hash    Sum
	Size    int64
	ModTime time.Time
}

// List returns the cached files, sorted by hash. Files in objects/ whose
// names are not hashes are ignored.
func (c *Cache) List() ([]Entry, error) {
	var out []Entry
	root := filepath.Join(c.dir, "objects")
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		s, perr := ParseSum(e.Name())
		if e.IsDir() || perr != nil || !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		out = append(out, Entry{Hash: s, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("content cache: %w", err)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Hash.String(), b.Hash.String()) })
	return out, nil
}

// Verify hashes every cached file again and removes those whose bytes no
// longer have their name's hash, returning them. It needs no network.
func (c *Cache) Verify() ([]Sum, error) {
	list, err := c.List()
	if err != nil {
		return nil, err
	}
	var bad []Sum
	for _, e := range list {
		f, err := os.Open(c.objectPath(e.Hash))
		if err != nil {
			return bad, fmt.Errorf("content cache: %w", err)
		}
		got, _, err := hashReader(f, e.Size+1)
		f.Close()
		if err != nil {
			return bad, fmt.Errorf("content cache: %w", err)
		}
		if got != e.Hash {
			bad = append(bad, e.Hash)
			if err := os.Remove(c.objectPath(e.Hash)); err != nil {
				return bad, fmt.Errorf("content cache: %w", err)
			}
		}
	}
	return bad, nil
}

// Prune removes the cached files not in keep whose modification time is
// before the cutoff (a zero cutoff: whatever their age), every view and
// every partial download older than the cutoff, and the remembered
// manifests none of whose files remain. A file's modification time is
// when a view last used it (or when it was fetched). It returns the files
// removed and their bytes. It is for when no joiner is fetching into the
// cache: a download's lock file is among what it may remove.
func (c *Cache) Prune(keep map[Sum]bool, before time.Time) (int, int64, error) {
	list, err := c.List()
	if err != nil {
		return 0, 0, err
	}
	old := func(t time.Time) bool { return before.IsZero() || t.Before(before) }
	n, freed := 0, int64(0)
	for _, e := range list {
		if keep[e.Hash] || !old(e.ModTime) {
			continue
		}
		if err := os.Remove(c.objectPath(e.Hash)); err != nil {
			return n, freed, fmt.Errorf("content cache: %w", err)
		}
		n, freed = n+1, freed+e.Size
	}
	for _, sub := range []string{"views", "partial"} {
		entries, err := os.ReadDir(filepath.Join(c.dir, sub))
		if err != nil {
			return n, freed, fmt.Errorf("content cache: %w", err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err == nil && (sub == "views" || old(info.ModTime())) {
				err = os.RemoveAll(filepath.Join(c.dir, sub, e.Name()))
			}
			if err != nil {
				return n, freed, fmt.Errorf("content cache: %w", err)
			}
		}
	}
	if _, err := c.forget(); err != nil {
		return n, freed, err
	}
	return n, freed, nil
}
