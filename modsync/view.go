package modsync

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// View lays out mod i of manifest m as a mod folder the game and the
// defs scanner can load, inside the cache (views/<manifest hash>/<i>/<id>),
// and returns its path. Each shared file is a hard link to its cached
// object (a copy where links are not possible), and each load folder
// exists, so the view selects the same folders as the host's copy. It
// writes nothing outside the cache: paths are checked again
// (CheckModPaths) and every step goes through an os.Root on the cache
// folder, which follows no link out of it. Every file must be cached;
// each is marked used now, and the manifest remembered (Remember).
func (c *Cache) View(m *Manifest, i int) (string, error) {
	mh, err := m.Hash()
	if err != nil {
		return "", err
	}
	return c.view(m, mh, i)
}

// view is View for a manifest whose hash is known.
func (c *Cache) view(m *Manifest, mh Sum, i int) (string, error) {
	if i < 0 || i >= len(m.Mods) {
		return "", fmt.Errorf("content view: no mod %d", i)
	}
	d := &m.Mods[i]
	if d.Held {
		return "", fmt.Errorf("content view: mod %s is held back by the host", d.PackageID)
	}
	if err := checkLayout(d); err != nil {
		return "", fmt.Errorf("content view: mod %s: %w", d.PackageID, err)
	}
	for _, f := range d.Files {
		if !c.Has(f.Hash, f.Size) {
			return "", fmt.Errorf("content view: mod %s: %s (%s) is not in the cache", d.PackageID, f.Path, f.Hash)
		}
	}
	c.touch(d)
	_ = c.remember(m, mh) // only for naming owners (Owners): a view works without it
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return "", fmt.Errorf("content view: %w", err)
	}
	defer root.Close()
	parent := path.Join("views", mh.String()[:32])
	final := path.Join(parent, strconv.Itoa(i), viewName(d.PackageID))
	tmp := path.Join(parent, ".tmp-"+randomName())
	if err := layOut(root, tmp, d); err != nil {
		root.RemoveAll(tmp)
		return "", fmt.Errorf("content view: mod %s: %w", d.PackageID, err)
	}
	if err := errors.Join(root.RemoveAll(final), root.MkdirAll(path.Dir(final), 0o755)); err != nil {
		root.RemoveAll(tmp)
		return "", fmt.Errorf("content view: %w", err)
	}
	if err := root.Rename(tmp, final); err != nil {
		root.RemoveAll(tmp)
		return "", fmt.Errorf("content view: %w", err)
	}
	return filepath.Join(c.dir, filepath.FromSlash(final)), nil
}

// checkLayout checks every path a view of d creates.
func checkLayout(d *Mod) error {
	paths := make([]string, 0, len(d.Files))
	for _, f := range d.Files {
		paths = append(paths, f.Path)
	}
	if err := CheckModPaths(paths); err != nil {
		return err
	}
	for _, f := range d.Folders {
		if f != "." {
			if err := CheckPath(f); err != nil {
				return fmt.Errorf("load folder: %w", err)
			}
		}
	}
	return nil
}

// layOut builds d's folder at dir inside root.
func layOut(root *os.Root, dir string, d *Mod) error {
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range d.Folders {
		if err := root.MkdirAll(path.Join(dir, f), 0o755); err != nil {
			return err
		}
	}
	for _, f := range d.Files {
		dst := path.Join(dir, f.Path)
		if err := root.MkdirAll(path.Dir(dst), 0o755); err != nil {
			return err
		}
		h := f.Hash.String()
		obj := path.Join("objects", h[:2], h)
		if err := root.Link(obj, dst); err == nil {
			continue
		}
		if err := copyIn(root, obj, dst); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return nil
}

// copyIn copies a file within root, creating dst (which must not exist).
func copyIn(root *os.Root, src, dst string) error {
	in, err := root.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := root.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Close())
}

// viewName is the name of a mod's folder in a view: for a mod whose
// package ID was derived from its folder name ("legacy." and the name,
// see package defs), that name, so that the view derives the same ID;
// else the package ID made safe.
func viewName(id string) string {
	x, ok := strings.CutPrefix(id, "legacy.")
	if ok && x != "" && x != "." && x != ".." && len(x) <= MaxSegmentLen && strings.Trim(x, "abcdefghijklmnopqrstuvwxyz0123456789._") == "" {
		return x
	}
	return safeName(id)
}

// safeName is a package ID as a folder name: letters, digits, '.', '_'
// and '-' kept, in lower case, others '_', at most 64 bytes.
func safeName(id string) string {
	b := []byte(strings.ToLower(id))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0) {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	return strings.TrimRight(string(b), ".")
}

func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Dirs returns the mod folders a joiner loads the host's content from,
// in the host's load order: the player's own folder for each mod it has
// with the same shared files (local, built by Build from the player's
// mods; nil when it has none), else a view of the mod in the cache, which
// must hold its files (Fetcher.Fetch of Need). For a mod the host holds
// back, the player's copy in whatever version (the handshake's def
// hashes then tell whether it loads the same); lacking it is an error
// naming it. The player's folders are
// only read.
func (c *Cache) Dirs(host, local *Manifest) ([]string, error) {
	states := Compare(host, local)
	mh, err := host.Hash()
	if err != nil {
		return nil, err
	}
	dirs := make([]string, 0, len(host.Mods))
	for i, s := range states {
		var mine *Mod
		if local != nil {
			mine = local.Mod(s.PackageID)
		}
		switch {
		case (s.State == Same || s.State == HeldBack) && mine != nil && mine.dir != "":
			dirs = append(dirs, mine.dir)
		case s.State == HeldBack:
			return nil, fmt.Errorf("mod %s: the host does not share it, and you have it in no version it loads", s.PackageID)
		default:
			dir, err := c.view(host, mh, i)
			if err != nil {
				return nil, err
			}
			dirs = append(dirs, dir)
		}
	}
	return dirs, nil
}
