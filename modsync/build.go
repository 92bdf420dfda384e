package modsync

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/lockhost/lockhost/defs"
)

// BuildOptions say what a host shares.
type BuildOptions struct {
	// Except are package IDs (compared case insensitively) of mods held
	// back: listed, with no files.
	Except []string
	// MaxFileSize is the largest file shared (0: DefaultLimits'); a larger
	// one is listed as not shared.
	MaxFileSize int64
}

// source is where a shared file is on the host: a file inside a mod
// folder, and its size when the manifest was built.
type source struct {
	root string // the mod folder
	rel  string // '/'-separated, inside root
	size int64
}

// Build makes the manifest of a scanned content set whose mods were read
// from folders on disk (defs.ScanDirs; Mod.Dir is each folder). It reads
// and hashes every listed file once; the manifest remembers where each
// is, for Handler. The files listed are those the game reads for the
// set's game version (see selector); code, links, files whose names are
// unsafe (CheckPath) or clash with another's, and files over the size
// limit are listed as not shared.
func Build(set *defs.Set, opts BuildOptions) (*Manifest, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultLimits.MaxFileSize
	}
	dbs := fileDatabases(set)
	m := &Manifest{Format: FormatVersion, GameVersion: set.GameVersion, sources: map[Sum]source{}}
	for _, sm := range set.Mods {
		d := Mod{PackageID: sm.PackageID, Name: sm.Name, Version: sm.Version, Folders: slices.Clone(sm.Folders), dir: sm.Dir}
		if slices.ContainsFunc(opts.Except, func(id string) bool { return strings.EqualFold(strings.TrimSpace(id), sm.PackageID) }) {
			d.Held = true
			m.Mods = append(m.Mods, d)
			continue
		}
		if sm.Dir == "" {
			return nil, fmt.Errorf("mod %s: no folder on disk to share from", sm.PackageID)
		}
		b := modBuilder{mod: &d, root: sm.Dir, sel: selector{folders: sm.Folders}, max: opts.MaxFileSize,
			dbs: dbs[strings.ToLower(sm.PackageID)], sources: m.sources, files: map[string]string{}, dirs: map[string]string{}}
		if err := b.walk(); err != nil {
			return nil, fmt.Errorf("sharing mod %s: %w", sm.PackageID, err)
		}
		sortMod(&d)
		m.Mods = append(m.Mods, d)
	}
	return m, nil
}

// fileDatabases maps each mod (lower-case package ID) and file to the
// def types its loaded defs belong to, sorted.
func fileDatabases(set *defs.Set) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, db := range set.Databases {
		for _, d := range db.Defs {
			id := strings.ToLower(d.Mod)
			if out[id] == nil {
				out[id] = map[string][]string{}
			}
			if list := out[id][d.File]; !slices.Contains(list, db.Type) {
				out[id][d.File] = append(list, db.Type)
			}
		}
	}
	for _, files := range out {
		for _, list := range files {
			slices.Sort(list)
		}
	}
	return out
}

// modBuilder lists one mod's files.
type modBuilder struct {
	mod     *Mod
	root    string
	sel     selector
	max     int64
	dbs     map[string][]string
	sources map[Sum]source
	files   map[string]string // foldKey of each shared file → its path
	dirs    map[string]string // foldKey of each folder of a shared file → a file in it
}

// walk lists the mod's files without following links. What cannot be
// read is listed as not shared rather than failing the whole manifest.
func (b *modBuilder) walk() error {
	fsys := os.DirFS(b.root)
	return fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil && p == ".":
			return err
		case err != nil:
			b.notShared(p, 0, "cannot be read: "+err.Error())
			if e != nil && e.IsDir() {
				return fs.SkipDir
			}
			return nil
		case e.IsDir():
			if p != "." && !b.sel.dir(p) {
				return fs.SkipDir
			}
			return nil
		case e.Type()&fs.ModeSymlink != 0 && b.sel.dir(p):
			b.notShared(p, 0, "a link (links are not followed)")
			return nil
		}
		if kind, read := b.sel.file(p); read {
			b.add(fsys, p, kind, e)
		}
		return nil
	})
}

func (b *modBuilder) notShared(p string, size int64, reason string) {
	b.mod.NotShared = append(b.mod.NotShared, NotShared{Path: p, Size: size, Reason: reason})
}

// add lists one file the game reads, shared or not.
func (b *modBuilder) add(fsys fs.FS, p string, kind Kind, e fs.DirEntry) {
	info, err := e.Info()
	if err != nil {
		b.notShared(p, 0, "cannot be read: "+err.Error())
		return
	}
	reason := b.refuse(p, kind, info)
	if reason != "" {
		b.notShared(p, info.Size(), reason)
		return
	}
	sum, head, size, err := hashFile(fsys, p, b.max)
	if err != nil {
		b.notShared(p, info.Size(), "cannot be read: "+err.Error())
		return
	}
	if why := codeByMagic(head); why != "" {
		b.notShared(p, size, why)
		return
	}
	b.claim(p)
	b.mod.Files = append(b.mod.Files, File{Path: p, Size: size, Hash: sum, Kind: kind, Databases: b.dbs[p]})
	if _, ok := b.sources[sum]; !ok {
		b.sources[sum] = source{root: b.root, rel: p, size: size}
	}
}

// refuse returns why a file is not shared by what its entry says, or "".
func (b *modBuilder) refuse(p string, kind Kind, info fs.FileInfo) string {
	if !info.Mode().IsRegular() {
		return "not a regular file (a link or a device)"
	}
	if why := codeByName(p); why != "" || kind == "" {
		return orElse(why, "code: in an Assemblies folder")
	}
	if err := CheckPath(p); err != nil {
		return "unsafe name: " + strings.TrimPrefix(err.Error(), ErrUnsafePath.Error()+": ")
	}
	if info.Size() > b.max {
		return fmt.Sprintf("larger than %d bytes", b.max)
	}
	k := foldKey(p)
	if q, dup := b.files[k]; dup {
		return "same name as " + q + " where letter case does not count"
	}
	if q, dup := b.dirs[k]; dup {
		return "a file named as the folder of " + q + " where letter case does not count"
	}
	for i := len(k) - 1; i > 0; i-- {
		if q, dup := b.files[k[:i]]; k[i] == '/' && dup {
			return "in a folder named as the file " + q + " where letter case does not count"
		}
	}
	return ""
}

// claim records a shared file's name and folders, for refuse.
func (b *modBuilder) claim(p string) {
	k := foldKey(p)
	b.files[k] = p
	for i := len(k) - 1; i > 0; i-- {
		if k[i] == '/' {
			b.dirs[k[:i]] = p
		}
	}
}

// orElse is a unless it is empty, else b.
func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// hashFile reads a file once: its SHA-256, first bytes and size.
func hashFile(fsys fs.FS, p string, limit int64) (Sum, []byte, int64, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return Sum{}, nil, 0, err
	}
	defer f.Close()
	h := sha256.New()
	head := make([]byte, magicLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return Sum{}, nil, 0, err
	}
	head = head[:n]
	h.Write(head)
	rest, err := io.Copy(h, io.LimitReader(f, limit-int64(n)+1))
	if err != nil {
		return Sum{}, nil, 0, err
	}
	size := int64(n) + rest
	if size > limit {
		return Sum{}, nil, 0, fmt.Errorf("grew over %d bytes while read", limit)
	}
	var sum Sum
	h.Sum(sum[:0])
	return sum, head, size, nil
}
