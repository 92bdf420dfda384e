package modsync

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeManifest is a manifest with one mod of the given files, as a
// hostile host could send it.
func fakeManifest(files ...File) *Manifest {
	return &Manifest{Format: FormatVersion, GameVersion: "1.5", Mods: []Mod{{PackageID: "evil.mod", Folders: []string{"."}, Files: files}}}
}

func fakeFile(p string, data []byte) File {
	return File{Path: p, Size: int64(len(data)), Hash: sumOf(data), Kind: KindTexture}
}

// TestHostilePathsRefused: a manifest that would write outside the
// cache, name a device, or hide one file behind another's letter case is
// refused when decoded, and a view of it (had it not been decoded) is
// refused too, creating nothing outside the cache.
func TestHostilePathsRefused(t *testing.T) {
	data := []byte("x")
	tricks := map[string][]string{
		"parent":      {"../../../../../../../../evil.png"},
		"parent late": {"Textures/../../../../../../../evil.png"},
		"absolute":    {"/tmp/evil.png"},
		"drive":       {"C:/evil.png"},
		"backslash":   {`Textures\..\..\evil.png`},
		"device":      {"Textures/NUL.png"},
		"trailing":    {"Textures/evil.png."},
		"case twins":  {"Textures/A.png", "Textures/a.png"},
		"file folder": {"Textures", "Textures/a.png"},
		"NUL byte":    {"Textures/a\x00.png"},
	}
	c := newCache(t)
	outside := filepath.Dir(c.Dir())
	for name, paths := range tricks {
		var files []File
		for _, p := range paths {
			files = append(files, fakeFile(p, data))
		}
		m := fakeManifest(files...)
		b, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b, DefaultLimits); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%s: decoded: %v", name, err)
		}
		if err := c.Insert(sumOf(data), 1, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.View(m, 0); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%s: view: %v", name, err)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || entries[0].Name() != "cache" {
		t.Errorf("beside the cache: %v", entries)
	}
	filepath.WalkDir(outside, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.Contains(e.Name(), "evil") {
			t.Errorf("%s was written", p)
		}
		return nil
	})
}

// TestHostileManifestLimits: a manifest over a limit is refused, and a
// length or count it claims is refused before anything is allocated for
// it.
func TestHostileManifestLimits(t *testing.T) {
	lim := DefaultLimits
	big := fakeFile("Textures/a.png", []byte("x"))
	big.Size = lim.MaxFileSize + 1
	negative := fakeFile("Textures/a.png", []byte("x"))
	negative.Size = -1
	many := make([]File, 0, 40)
	for i := range 40 {
		f := fakeFile("Textures/"+strconv.Itoa(100+i)+".png", []byte("x"))
		f.Size = lim.MaxTotal / 32
		many = append(many, f)
	}
	unsorted := fakeManifest(fakeFile("b.png", nil), fakeFile("a.png", nil))
	held := fakeManifest(fakeFile("a.png", nil))
	held.Mods[0].Held = true
	kind := fakeManifest(fakeFile("a.png", nil))
	kind.Mods[0].Files[0].Kind = "code"
	folders := fakeManifest()
	for i := range maxFolders + 1 {
		folders.Mods[0].Folders = append(folders.Mods[0].Folders, "f"+strconv.Itoa(i))
	}
	for name, m := range map[string]*Manifest{
		"file too big": fakeManifest(big), "negative size": fakeManifest(negative), "total too big": fakeManifest(many...),
		"unsorted": unsorted, "held with files": held, "unknown kind": kind, "too many load folders": folders,
		"format": {Format: 2},
	} {
		b, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b, lim); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	small := lim
	small.MaxFiles = 1
	if _, err := Decode(mustEncode(t, fakeManifest(fakeFile("a.png", nil), fakeFile("b.png", nil))), small); !errors.Is(err, ErrLimit) {
		t.Errorf("two files of at most one: %v", err)
	}

	// Claims: 2^32-1 mods, a string of 2^32-1 bytes, deep nesting,
	// trailing bytes, an extension type.
	for name, b := range map[string][]byte{
		"huge array":  {0x81, 0xa1, 'm', 0xdd, 0xff, 0xff, 0xff, 0xff},
		"huge string": {0x81, 0xa1, 'g', 0xdb, 0xff, 0xff, 0xff, 0xff},
		"huge map":    {0xdf, 0xff, 0xff, 0xff, 0xff},
		"deep":        bytes.Repeat([]byte{0x91}, 64),
		"trailing":    append(mustEncode(t, fakeManifest()), 0xc0),
		"ext":         {0x81, 0xa1, 'g', 0xd4, 0x01, 0x00},
		"cut":         mustEncode(t, fakeManifest(fakeFile("a.png", nil)))[:20],
	} {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		_, err := Decode(b, lim)
		runtime.ReadMemStats(&ms)
		if err == nil {
			t.Errorf("%s: decoded", name)
		}
		if grew := ms.TotalAlloc - before; grew > 1<<20 {
			t.Errorf("%s: decoding allocated %d bytes", name, grew)
		}
	}
	if _, err := Decode(make([]byte, lim.MaxManifestBytes+1), lim); !errors.Is(err, ErrLimit) {
		t.Errorf("manifest over its size limit: %v", err)
	}
}

func mustEncode(t *testing.T, m *Manifest) []byte {
	t.Helper()
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// endless is a body that never ends.
type endless struct{ n atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'A'
	}
	e.n.Add(int64(len(p)))
	return len(p), nil
}

// TestHostileServerBodies: a host that sends more than the manifest
// declares (without a length, or announcing a huge one), a compressed
// bomb, or a range it was not asked for, gets nothing into the cache and
// is not read past the declared size.
func TestHostileServerBodies(t *testing.T) {
	data := bytes.Repeat([]byte("texture "), 128)
	file := fakeFile("Textures/a.png", data)
	var bomb bytes.Buffer
	z := gzip.NewWriter(&bomb)
	z.Write(make([]byte, 64<<20))
	z.Close()
	stream := &endless{}
	handlers := map[string]http.HandlerFunc{
		"endless body": func(w http.ResponseWriter, r *http.Request) {
			io.Copy(w, io.LimitReader(stream, 1<<30))
		},
		"huge length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.FormatInt(1<<40, 10))
			w.Write(data)
		},
		"gzip bomb": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb.Bytes())
		},
		"gzip of nothing, forever": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			zw, _ := gzip.NewWriterLevel(w, gzip.NoCompression)
			for range 1 << 20 {
				if _, err := zw.Write(nil); err != nil || zw.Flush() != nil {
					return
				}
			}
		},
		"gzip not asked for": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "br")
			w.Write(data)
		},
		"wrong range": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Range", "bytes 0-9/10")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[:10])
		},
		"short body": func(w http.ResponseWriter, r *http.Request) {
			w.Write(data[:100])
		},
		"not found": http.NotFound,
	}
	for name, hf := range handlers {
		srv := httptest.NewServer(hf)
		c := newCache(t)
		f := &Fetcher{Base: srv.URL, Cache: c, Limits: DefaultLimits}
		st, err := f.Fetch(context.Background(), []File{file})
		srv.Close()
		if err == nil || c.Has(file.Hash, file.Size) {
			t.Errorf("%s: fetched: %+v, %v", name, st, err)
		}
		if st.FileBytes > file.Size+1 || st.FetchedBytes > maxCompressed(file.Size)+chunk {
			t.Errorf("%s: read %d bytes (%d on the wire) of a file of %d", name, st.FileBytes, st.FetchedBytes, file.Size)
		}
		if !strings.Contains(err.Error(), file.Hash.String()) {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
	}
}

// TestFetchCaps: a list of files over the joiner's limits is refused
// before anything is requested.
func TestFetchCaps(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer srv.Close()
	a, b := fakeFile("a.png", []byte("a")), fakeFile("b.png", []byte("bb"))
	for name, lim := range map[string]Limits{
		"count": {MaxFiles: 1, MaxFileSize: 10, MaxTotal: 10},
		"size":  {MaxFiles: 10, MaxFileSize: 1, MaxTotal: 10},
		"total": {MaxFiles: 10, MaxFileSize: 10, MaxTotal: 2},
	} {
		f := &Fetcher{Base: srv.URL, Cache: newCache(t), Limits: lim}
		if _, err := f.Fetch(context.Background(), []File{a, b}); !errors.Is(err, ErrLimit) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if requests.Load() != 0 {
		t.Errorf("%d requests made", requests.Load())
	}
}

// TestManifestOverHTTP: a joiner gets the host's manifest and its hash
// over HTTP, and a host that sends an endless or oversized manifest is
// not read past the limit.
func TestManifestOverHTTP(t *testing.T) {
	m := build(t, BuildOptions{}, synthMod(t, t.TempDir(), "test.synth"))
	h := serve(t, m)
	got, sum, err := HTTPSource{Base: h.srv.URL}.Manifest(context.Background(), DefaultLimits)
	want, _ := m.Hash()
	if err != nil || sum != want || len(got.Mods) != 1 {
		t.Fatalf("manifest: %v", err)
	}
	lim := DefaultLimits
	lim.MaxManifestBytes = 1 << 20
	stream := &endless{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, io.LimitReader(stream, 1<<30))
	}))
	defer srv.Close()
	if _, _, err := (HTTPSource{Base: srv.URL}).Manifest(context.Background(), lim); !errors.Is(err, ErrLimit) {
		t.Errorf("endless manifest: %v", err)
	}
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(2<<20))
		w.Write(make([]byte, 100))
	}))
	defer srv2.Close()
	if _, _, err := (HTTPSource{Base: srv2.URL}).Manifest(context.Background(), lim); !errors.Is(err, ErrLimit) {
		t.Errorf("announced oversized manifest: %v", err)
	}
}
