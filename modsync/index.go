package modsync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The cache keeps the manifests it laid mods out from in
// manifests/<manifest hash> (their encoding), so that "which mods use
// this file" can be answered offline ([Cache.Owners]), and it marks a
// file as used by setting its modification time whenever a view links
// it, so that [Cache.Prune] by age drops what no join used lately.

// Remember keeps the manifest m in the cache (once per manifest), so
// that Owners can name the mods of its files. View and Dirs call it; a
// joiner that fetched files for a manifest it did not lay out may call
// it too.
func (c *Cache) Remember(m *Manifest) error {
	mh, err := m.Hash()
	if err != nil {
		return err
	}
	return c.remember(m, mh)
}

func (c *Cache) remember(m *Manifest, mh Sum) error {
	dir := filepath.Join(c.dir, "manifests")
	dest := filepath.Join(dir, mh.String())
	if _, err := os.Lstat(dest); err == nil {
		return nil
	}
	b, err := m.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("content cache: %w", err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dest)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("content cache: %w", err)
	}
	return nil
}

// Owner is one mod file a cached file is, in a remembered manifest.
type Owner struct {
	Manifest  Sum    // the manifest's hash
	PackageID string // the mod
	Version   string // its version, as the manifest says
	Path      string // the file's path in the mod
}

// String is "packageid version: path".
func (o Owner) String() string {
	id := o.PackageID
	if o.Version != "" {
		id += " " + o.Version
	}
	return id + ": " + o.Path
}

// Owners maps each file hash the remembered manifests list to the mod
// files it is, sorted, each mod file once (a mod shared by several
// manifests in the same version counts once). A remembered manifest that
// no longer decodes is skipped and named in the error, which is
// returned with the owners of the others.
func (c *Cache) Owners() (map[Sum][]Owner, error) {
	entries, err := os.ReadDir(filepath.Join(c.dir, "manifests"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[Sum][]Owner{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("content cache: %w", err)
	}
	out := map[Sum][]Owner{}
	seen := map[string]bool{}
	var bad []string
	for _, e := range entries {
		mh, perr := ParseSum(e.Name())
		if perr != nil || !e.Type().IsRegular() {
			continue
		}
		m, err := c.readManifest(mh)
		if err != nil {
			bad = append(bad, e.Name())
			continue
		}
		for _, d := range m.Mods {
			for _, f := range d.Files {
				key := f.Hash.String() + "\x00" + strings.ToLower(d.PackageID) + "\x00" + d.Version + "\x00" + f.Path
				if seen[key] {
					continue
				}
				seen[key] = true
				out[f.Hash] = append(out[f.Hash], Owner{Manifest: mh, PackageID: d.PackageID, Version: d.Version, Path: f.Path})
			}
		}
	}
	for _, o := range out {
		slices.SortFunc(o, func(a, b Owner) int { return strings.Compare(a.String(), b.String()) })
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("content cache: remembered manifest(s) that do not decode: %s", strings.Join(bad, ", "))
	}
	return out, nil
}

// readManifest decodes the remembered manifest mh and checks its hash.
func (c *Cache) readManifest(mh Sum) (*Manifest, error) {
	p := filepath.Join(c.dir, "manifests", mh.String())
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > int64(DefaultLimits.MaxManifestBytes) {
		return nil, fmt.Errorf("%s: not a manifest", p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	m, err := Decode(b, DefaultLimits)
	if err != nil {
		return nil, err
	}
	if got, err := m.Hash(); err != nil || got != mh {
		return nil, fmt.Errorf("%s: %w", p, ErrHashMismatch)
	}
	return m, nil
}

// forget removes the remembered manifests none of whose shared files
// the cache still holds, returning how many it removed.
func (c *Cache) forget() (int, error) {
	entries, err := os.ReadDir(filepath.Join(c.dir, "manifests"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("content cache: %w", err)
	}
	n := 0
	for _, e := range entries {
		p := filepath.Join(c.dir, "manifests", e.Name())
		mh, perr := ParseSum(e.Name())
		if perr != nil {
			continue
		}
		m, err := c.readManifest(mh)
		if err == nil && c.holdsAny(m) {
			continue
		}
		if err := os.Remove(p); err != nil {
			return n, fmt.Errorf("content cache: %w", err)
		}
		n++
	}
	return n, nil
}

func (c *Cache) holdsAny(m *Manifest) bool {
	for _, d := range m.Mods {
		for _, f := range d.Files {
			if c.Has(f.Hash, f.Size) {
				return true
			}
		}
	}
	return false
}

// touch marks the cached files of d as used now (their modification
// time), for Prune by age. A file whose time cannot be set keeps its
// old one: it may be pruned sooner, never wrongly kept.
func (c *Cache) touch(d *Mod) {
	now := time.Now()
	for _, f := range d.Files {
		_ = os.Chtimes(c.objectPath(f.Hash), now, now)
	}
}
