package modsync

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"testing/fstest"
	"time"

	"github.com/lockhost/lockhost/defs"
)

// Store keeps whole files by hash where no folder can hold them: the
// browser's Cache Storage. Get answers nil, nil for a file it lacks; what
// it answers is checked (size and SHA-256) before use, as what Put is
// given was.
type Store interface {
	Get(ctx context.Context, s Sum) ([]byte, error)
	Put(ctx context.Context, s Sum, b []byte) error
}

// MapStore is a Store in memory, for tests and for a page without
// Cache Storage (a file is then fetched on every visit).
type MapStore map[Sum][]byte

// Get is the file with hash s, or nil.
func (m MapStore) Get(_ context.Context, s Sum) ([]byte, error) { return m[s], nil }

// Put keeps b as the file with hash s.
func (m MapStore) Put(_ context.Context, s Sum, b []byte) error {
	m[s] = b
	return nil
}

// MemLoader gives the mods of a host's manifest as file systems in
// memory, for the browser player: every shared file comes from Have (the
// files the player has built in, by hash), else from Store, else from
// the host over HTTP (GET /content/<sha256>, whole), and is put in Store.
// Every file's size and SHA-256 are checked before use, whatever it came
// from; a file fetched with a wrong hash is fetched once more, then
// refused. The caps of Limits are checked before anything is fetched.
// With Pick, only the files it picks are got (LoadsDefs: enough to load
// the mods' defs and join).
type MemLoader struct {
	// Base is the host's HTTP address ("http://host:port").
	Base string
	// Client makes the requests; nil means http.DefaultClient, which
	// takes a compressed answer (in a browser, its fetch does).
	Client *http.Client
	Store  Store
	Have   map[Sum][]byte
	Limits Limits
	// Pick, if set, chooses the files to get (LoadsDefs: what the def
	// scan reads); the others are left out of the mods' file systems.
	Pick func(File) bool
	// Progress, if set, is told the bytes at hand so far and in all.
	Progress func(done, total int64)
}

// MemStats say where MemLoader.Load found its files.
type MemStats struct {
	Files        int   // distinct files of the shared mods
	Bytes        int64 // their size
	Have         int   // built in
	Stored       int   // from the Store (a visit before)
	Fetched      int   // from the host
	FetchedBytes int64 // their size (what arrived decompressed)
	Refused      int   // answers with a wrong hash, fetched again
	Unkept       int   // fetched files the Store would not keep
	Skipped      int   // files Pick left out
	SkippedBytes int64 // their size
	Elapsed      time.Duration
}

// LoadsDefs picks the files the def scan reads (defs.ScanFS): def files,
// About/About.xml and LoadFolders.xml. Textures, sounds, translations,
// patches (not applied) and asset bundles are not needed to join.
func LoadsDefs(f File) bool {
	return f.Kind == KindDefs || strings.EqualFold(f.Path, "About/About.xml") || strings.EqualFold(f.Path, "LoadFolders.xml")
}

// HashFS maps the SHA-256 of every regular file of fsys to its bytes: the
// files a player has built in, for MemLoader.Have.
func HashFS(fsys fs.FS) (map[Sum][]byte, error) {
	out := map[Sum][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err == nil {
			out[sha256.Sum256(b)] = b
		}
		return err
	})
	return out, err
}

// Load gets every shared file of m and returns its mods, in load order,
// as sources for defs.ScanFS (gamecontent.LoadFS). A mod the host holds
// back cannot be loaded this way: it is an error that names it.
func (l *MemLoader) Load(ctx context.Context, m *Manifest) ([]defs.ModSource, MemStats, error) {
	start := time.Now()
	var st MemStats
	for _, d := range m.Mods {
		if d.Held {
			return nil, st, fmt.Errorf("mod %s: the host does not share it", d.PackageID)
		}
		if err := checkLayout(&d); err != nil {
			return nil, st, fmt.Errorf("mod %s: %w", d.PackageID, err)
		}
	}
	files := Need(m, nil)
	if l.Pick != nil {
		files = slices.DeleteFunc(files, func(f File) bool {
			if l.Pick(f) {
				return false
			}
			st.Skipped, st.SkippedBytes = st.Skipped+1, st.SkippedBytes+f.Size
			return true
		})
	}
	if err := (&Fetcher{Limits: l.Limits}).checkCaps(files); err != nil {
		return nil, st, err
	}
	st.Files = len(files)
	for _, f := range files {
		st.Bytes += f.Size
	}
	data := make(map[Sum][]byte, len(files))
	var done int64
	for _, f := range files {
		b, err := l.get(ctx, f, &st)
		if err != nil {
			return nil, st, fmt.Errorf("%s (%s): %w", f.Path, f.Hash, err)
		}
		data[f.Hash] = b
		if done += f.Size; l.Progress != nil {
			l.Progress(done, st.Bytes)
		}
	}
	mods := make([]defs.ModSource, len(m.Mods))
	for i := range m.Mods {
		mods[i] = defs.ModSource{FS: memFS(&m.Mods[i], data), Dir: m.Mods[i].PackageID + " (from the host)"}
	}
	st.Elapsed = time.Since(start)
	return mods, st, nil
}

// get is one file: built in, stored, or fetched (and stored).
func (l *MemLoader) get(ctx context.Context, f File, st *MemStats) ([]byte, error) {
	if b, ok := l.Have[f.Hash]; ok && matches(b, f) {
		st.Have++
		return b, nil
	}
	if l.Store != nil {
		if b, err := l.Store.Get(ctx, f.Hash); err == nil && b != nil && matches(b, f) {
			st.Stored++
			return b, nil
		}
	}
	b, err := l.fetch(ctx, f)
	if errors.Is(err, ErrHashMismatch) {
		st.Refused++
		b, err = l.fetch(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	st.Fetched, st.FetchedBytes = st.Fetched+1, st.FetchedBytes+f.Size
	if l.Store != nil && l.Store.Put(ctx, f.Hash, b) != nil {
		st.Unkept++ // a full store (the browser's quota) costs the next visit a fetch, not this join
	}
	return b, nil
}

func matches(b []byte, f File) bool {
	return int64(len(b)) == f.Size && Sum(sha256.Sum256(b)) == f.Hash
}

// fetch downloads one whole file, reading at most one byte past its size.
func (l *MemLoader) fetch(ctx context.Context, f File) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL(l.Base, f.Hash), nil)
	if err != nil {
		return nil, err
	}
	client := l.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the host answered %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, f.Size+1))
	if err != nil {
		return nil, err
	}
	if !matches(b, f) {
		return nil, fmt.Errorf("%w (%d bytes, want %d)", ErrHashMismatch, len(b), f.Size)
	}
	return b, nil
}

// memFS lays mod d out in memory from data, as View lays it out in the
// cache: each load folder, and each shared file data holds.
func memFS(d *Mod, data map[Sum][]byte) fs.FS {
	fsys := fstest.MapFS{}
	for _, f := range d.Folders {
		if f != "." {
			fsys[f] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		}
	}
	for _, f := range d.Files {
		if b, ok := data[f.Hash]; ok {
			fsys[path.Clean(f.Path)] = &fstest.MapFile{Data: b, Mode: 0o444}
		}
	}
	return fsys
}
