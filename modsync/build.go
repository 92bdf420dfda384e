package modsync

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

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
	// Workers bounds the files hashed at once (0: GOMAXPROCS).
	Workers int
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
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
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
			dbs: dbs[strings.ToLower(sm.PackageID)], sources: m.sources, files: map[string]string{}, dirs: map[string]string{}, workers: opts.Workers}
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
	workers int
}

// walk lists the mod's files without following links, hashing them in
// parallel; what cannot be read is listed as not shared rather than
// failing the whole manifest.
func (b *modBuilder) walk() error {
	fsys := os.DirFS(b.root)
	var cands []candidate
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
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
			if c, ok := b.candidate(p, kind, e); ok {
				cands = append(cands, c)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	hashAll(fsys, cands, b.max, b.workers)
	for i := range cands {
		b.add(&cands[i])
	}
	return nil
}

// candidate is a file that may be shared, once hashed.
type candidate struct {
	path string
	kind Kind
	size int64
	sum  Sum
	head []byte
	err  error
}

func (b *modBuilder) notShared(p string, size int64, reason string) {
	b.mod.NotShared = append(b.mod.NotShared, NotShared{Path: p, Size: size, Reason: reason})
}

// candidate checks what a file's entry says: a file that may be shared
// is returned, one that may not is listed as not shared.
func (b *modBuilder) candidate(p string, kind Kind, e fs.DirEntry) (candidate, bool) {
	info, err := e.Info()
	if err != nil {
		b.notShared(p, 0, "cannot be read: "+err.Error())
		return candidate{}, false
	}
	var reason string
	switch {
	case !info.Mode().IsRegular():
		reason = "not a regular file (a link or a device)"
	case codeByName(p) != "" || kind == "":
		reason = orElse(codeByName(p), "code: in an Assemblies folder")
	case CheckPath(p) != nil:
		reason = "unsafe name: " + strings.TrimPrefix(CheckPath(p).Error(), ErrUnsafePath.Error()+": ")
	case info.Size() > b.max:
		reason = fmt.Sprintf("larger than %d bytes", b.max)
	}
	if reason != "" {
		b.notShared(p, info.Size(), reason)
		return candidate{}, false
	}
	return candidate{path: p, kind: kind, size: info.Size()}, true
}

// hashAll hashes the candidates on at most workers goroutines.
func hashAll(fsys fs.FS, cands []candidate, limit int64, workers int) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(workers, len(cands))) {
		wg.Go(func() {
			for i := range next {
				c := &cands[i]
				c.sum, c.head, c.size, c.err = hashFile(fsys, c.path, limit)
			}
		})
	}
	for i := range cands {
		next <- i
	}
	close(next)
	wg.Wait()
}

// add lists one hashed candidate, in walk order: shared, unless it is
// code by its first bytes, could not be read or clashes with a file
// already shared.
func (b *modBuilder) add(c *candidate) {
	reason := ""
	switch {
	case c.err != nil:
		reason = "cannot be read: " + c.err.Error()
	case codeByMagic(c.head) != "":
		reason = codeByMagic(c.head)
	default:
		reason = b.clash(c.path)
	}
	if reason != "" {
		b.notShared(c.path, c.size, reason)
		return
	}
	b.claim(c.path)
	b.mod.Files = append(b.mod.Files, File{Path: c.path, Size: c.size, Hash: c.sum, Kind: c.kind, Databases: b.dbs[c.path]})
	if _, ok := b.sources[c.sum]; !ok {
		b.sources[c.sum] = source{root: b.root, rel: c.path, size: c.size}
	}
}

// clash returns why p cannot be shared beside the files already shared
// (the same file or a file and a folder where letter case does not
// count), or "".
func (b *modBuilder) clash(p string) string {
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
