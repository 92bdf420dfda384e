package modsync

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockhost/lockhost/internal/codec"
)

// Limits bound what a joiner accepts from a host: a manifest, and the
// files it fetches.
type Limits struct {
	MaxManifestBytes int   // encoded manifest
	MaxMods          int   // mods in a manifest
	MaxFiles         int   // files and not-shared entries in a manifest, all mods together
	MaxFileSize      int64 // one file
	MaxTotal         int64 // all shared files of a manifest together
}

// DefaultLimits are the limits a joiner uses unless told otherwise.
var DefaultLimits = Limits{
	MaxManifestBytes: 32 << 20,
	MaxMods:          2048,
	MaxFiles:         200_000,
	MaxFileSize:      512 << 20,
	MaxTotal:         16 << 30,
}

// maxFolders bounds a mod's load folders; maxString every string of a
// manifest (paths have their own, lower limit); maxMapKeys the keys of
// any map; maxNesting the depth.
const (
	maxFolders = 64
	maxString  = 1024
	maxMapKeys = 16
	maxNesting = 6
)

// ErrLimit is wrapped by every error that says a limit was exceeded.
var ErrLimit = errors.New("over a limit")

// Decode reads an encoded manifest. Every length and count is checked
// against lim before anything is allocated for it, then every field is
// checked: format version, paths (CheckModPaths), kinds, sizes, order
// and totals. A manifest Decode returns is safe to fetch and to lay out.
func Decode(b []byte, lim Limits) (*Manifest, error) {
	if len(b) > lim.MaxManifestBytes {
		return nil, fmt.Errorf("content manifest of %d bytes: %w (%d)", len(b), ErrLimit, lim.MaxManifestBytes)
	}
	maxCount := max(lim.MaxFiles, lim.MaxMods, maxMapKeys)
	if err := precheck(b, maxCount); err != nil {
		return nil, fmt.Errorf("content manifest: %w", err)
	}
	var m Manifest
	if err := codec.Decode(b, &m); err != nil {
		return nil, fmt.Errorf("content manifest: %w", err)
	}
	if err := m.Validate(lim); err != nil {
		return nil, err
	}
	return &m, nil
}

// Validate checks a manifest as Decode does.
func (m *Manifest) Validate(lim Limits) error {
	if m.Format != FormatVersion {
		return fmt.Errorf("content manifest format %d, this program reads %d", m.Format, FormatVersion)
	}
	if len(m.GameVersion) > maxString {
		return fmt.Errorf("content manifest: game version: %w", ErrLimit)
	}
	if len(m.Mods) > lim.MaxMods {
		return fmt.Errorf("content manifest: %d mods: %w (%d)", len(m.Mods), ErrLimit, lim.MaxMods)
	}
	ids := map[string]bool{}
	files, total := 0, int64(0)
	for i := range m.Mods {
		d := &m.Mods[i]
		id := strings.ToLower(d.PackageID)
		if d.PackageID == "" || ids[id] {
			return fmt.Errorf("content manifest: mod %d: package ID %q empty or used twice", i, d.PackageID)
		}
		ids[id] = true
		files += len(d.Files) + len(d.NotShared)
		if files > lim.MaxFiles {
			return fmt.Errorf("content manifest: more than %d files: %w", lim.MaxFiles, ErrLimit)
		}
		n, err := validateMod(d, lim)
		if err != nil {
			return fmt.Errorf("content manifest: mod %s: %w", d.PackageID, err)
		}
		if total += n; total > lim.MaxTotal {
			return fmt.Errorf("content manifest: files of more than %d bytes together: %w", lim.MaxTotal, ErrLimit)
		}
	}
	return nil
}

// validateMod checks one mod and returns the total size of its files.
func validateMod(d *Mod, lim Limits) (int64, error) {
	if len(d.PackageID) > maxString || len(d.Name) > maxString || len(d.Version) > maxString {
		return 0, fmt.Errorf("a name: %w", ErrLimit)
	}
	if d.Held && len(d.Files) > 0 {
		return 0, errors.New("held back, yet lists files")
	}
	if len(d.Folders) > maxFolders {
		return 0, fmt.Errorf("%d load folders: %w (%d)", len(d.Folders), ErrLimit, maxFolders)
	}
	for _, f := range d.Folders {
		if f != "." {
			if err := CheckPath(f); err != nil {
				return 0, fmt.Errorf("load folder: %w", err)
			}
		}
	}
	paths := make([]string, 0, len(d.Files))
	var total int64
	for i, f := range d.Files {
		if i > 0 && d.Files[i-1].Path >= f.Path {
			return 0, fmt.Errorf("files not sorted by path at %q", f.Path)
		}
		if f.Size < 0 || f.Size > lim.MaxFileSize {
			return 0, fmt.Errorf("%s: size %d: %w (%d)", f.Path, f.Size, ErrLimit, lim.MaxFileSize)
		}
		if !slices.Contains(kinds, f.Kind) {
			return 0, fmt.Errorf("%s: unknown kind %q", f.Path, f.Kind)
		}
		for _, db := range f.Databases {
			if db == "" || len(db) > maxString {
				return 0, fmt.Errorf("%s: a database name empty or too long", f.Path)
			}
		}
		paths = append(paths, f.Path)
		total += f.Size
	}
	for i, x := range d.NotShared {
		if i > 0 && d.NotShared[i-1].Path >= x.Path {
			return 0, fmt.Errorf("not-shared files not sorted by path at %q", x.Path)
		}
	}
	if err := CheckModPaths(paths); err != nil {
		return 0, err
	}
	return total, nil
}

// precheck walks a msgpack value without decoding it and refuses it
// unless every string and byte string is at most maxString bytes (a
// file's hash is one of 32), every array or map count is at most
// maxCount (maps at most maxMapKeys) and no more than the bytes left
// could hold, nesting is at most maxNesting deep, no extension is used
// and nothing follows the value. The decoder then never allocates on the
// word of a length it has not checked.
func precheck(b []byte, maxCount int) error {
	w := walker{b: b, maxCount: maxCount}
	if err := w.value(0); err != nil {
		return err
	}
	if w.off != len(b) {
		return fmt.Errorf("%d bytes after the manifest", len(b)-w.off)
	}
	return nil
}

type walker struct {
	b        []byte
	off      int
	maxCount int
}

var errShort = errors.New("manifest cut short")

// uint reads a big-endian unsigned integer of n bytes.
func (w *walker) uint(n int) (uint64, error) {
	if len(w.b)-w.off < n {
		return 0, errShort
	}
	var v uint64
	for _, c := range w.b[w.off : w.off+n] {
		v = v<<8 | uint64(c)
	}
	w.off += n
	return v, nil
}

// skip passes over n bytes of a string or scalar.
func (w *walker) skip(n uint64) error {
	if n > uint64(len(w.b)-w.off) {
		return errShort
	}
	w.off += int(n)
	return nil
}

// value checks one value and everything in it.
func (w *walker) value(depth int) error {
	if depth > maxNesting {
		return fmt.Errorf("nested more than %d deep: %w", maxNesting, ErrLimit)
	}
	c, err := w.uint(1)
	if err != nil {
		return err
	}
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		return nil
	case c >= 0xa0 && c <= 0xbf:
		return w.str(c & 0x1f)
	case c >= 0x90 && c <= 0x9f:
		return w.items(c&0x0f, 1, depth)
	case c >= 0x80 && c <= 0x8f:
		return w.items(c&0x0f, 2, depth)
	}
	return w.wide(byte(c), depth)
}

// wide checks a value whose type byte is not a fix type.
func (w *walker) wide(c byte, depth int) error {
	switch c {
	case 0xcc, 0xd0:
		return w.skip(1)
	case 0xcd, 0xd1:
		return w.skip(2)
	case 0xca, 0xce, 0xd2:
		return w.skip(4)
	case 0xcb, 0xcf, 0xd3:
		return w.skip(8)
	case 0xd9, 0xc4:
		return w.sized(1, func(n uint64) error { return w.str(n) })
	case 0xda, 0xc5:
		return w.sized(2, func(n uint64) error { return w.str(n) })
	case 0xdb, 0xc6:
		return w.sized(4, func(n uint64) error { return w.str(n) })
	case 0xdc:
		return w.sized(2, func(n uint64) error { return w.items(n, 1, depth) })
	case 0xdd:
		return w.sized(4, func(n uint64) error { return w.items(n, 1, depth) })
	case 0xde:
		return w.sized(2, func(n uint64) error { return w.items(n, 2, depth) })
	case 0xdf:
		return w.sized(4, func(n uint64) error { return w.items(n, 2, depth) })
	}
	return fmt.Errorf("msgpack type byte %#x is not used in a manifest", c)
}

// sized reads a length of n bytes and hands it to next.
func (w *walker) sized(n int, next func(uint64) error) error {
	v, err := w.uint(n)
	if err != nil {
		return err
	}
	return next(v)
}

// str checks a string or byte string of n bytes.
func (w *walker) str(n uint64) error {
	if n > maxString {
		return fmt.Errorf("a string of %d bytes: %w (%d)", n, ErrLimit, maxString)
	}
	return w.skip(n)
}

// items checks an array (per 1) or a map (per 2) of n entries.
func (w *walker) items(n uint64, per int, depth int) error {
	limit := uint64(w.maxCount)
	if per == 2 {
		limit = maxMapKeys
	}
	if n > limit {
		return fmt.Errorf("a count of %d: %w (%d)", n, ErrLimit, limit)
	}
	if n*uint64(per) > uint64(len(w.b)-w.off) {
		return errShort
	}
	for range n * uint64(per) {
		if err := w.value(depth + 1); err != nil {
			return err
		}
	}
	return nil
}
