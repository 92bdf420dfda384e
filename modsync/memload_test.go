package modsync

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lockhost/lockhost/defs"
)

// coreDir is the repository's default content as a folder: the base the
// browser player has built in.
var coreDir = filepath.Join("..", "game", "colony", "content", "Core")

// countingServer serves h and counts the file requests (not the manifest).
func countingServer(t *testing.T, h http.Handler, files *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != ManifestPath {
			files.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestMemLoader: the browser's way. Mods on a base the player has built
// in load from memory into the same def databases as the host's folders;
// the base's files are not fetched, the mods' are, once: a second load
// with the same store fetches nothing; a stored file whose bytes changed
// is fetched again; code never travels.
func TestMemLoader(t *testing.T) {
	dirs := []string{coreDir, synthMod(t, t.TempDir(), "test.synth")}
	if _, err := os.Stat(allowTool); err == nil {
		dirs = []string{coreDir, allowTool, dirs[1]} // a real mod too, where the tests have it
	}
	set := scanDirs(t, dirs...)
	m := build(t, BuildOptions{}, dirs...)
	h := serve(t, m)
	var requests atomic.Int64
	srv := countingServer(t, h.Handler, &requests)
	have, err := HashFS(os.DirFS(coreDir))
	if err != nil || len(have) == 0 {
		t.Fatalf("hash the base: %d files, %v", len(have), err)
	}
	store := MapStore{}
	load := func() ([]defs.ModSource, MemStats) {
		t.Helper()
		l := &MemLoader{Base: srv.URL, Store: store, Have: have, Limits: DefaultLimits}
		mods, st, err := l.Load(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		return mods, st
	}
	mods, st := load()
	base := len(m.Mods[0].Files)
	if st.Have != base || st.Fetched != st.Files-base || st.Stored != 0 || requests.Load() != int64(st.Fetched) {
		t.Errorf("first load: %+v, %d requests; want the %d base files built in, the rest fetched", st, requests.Load(), base)
	}
	got, err := defs.ScanFS(mods, defs.Options{GameVersion: gameVersion, ActiveComplete: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Summary(), set.Summary()) {
		t.Errorf("def databases from memory differ from the folders':\n%v\n%v", got.Summary(), set.Summary())
	}
	for k, b := range store {
		if strings.HasPrefix(string(b), "MZ") || strings.Contains(string(b), "a .NET assembly") {
			t.Errorf("code reached the store: %s", k)
		}
	}
	t.Logf("first load: %d files, %d bytes: %d built in, %d fetched (%d bytes)", st.Files, st.Bytes, st.Have, st.Fetched, st.FetchedBytes)

	requests.Store(0)
	if _, st := load(); st.Fetched != 0 || st.Stored != st.Files-base || requests.Load() != 0 {
		t.Errorf("second load: %+v, %d requests; want nothing fetched", st, requests.Load())
	}
	lamp := modFile(m, "test.synth", "Textures/Things/Lamp.png")
	store[lamp.Hash] = append([]byte("x"), store[lamp.Hash][1:]...)
	if _, st := load(); st.Fetched != 1 || requests.Load() != 1 || !matches(store[lamp.Hash], *lamp) {
		t.Errorf("a damaged stored file: %+v, %d requests; want it fetched again", st, requests.Load())
	}

	// Only what the def scan reads: the same def databases, no texture.
	requests.Store(0)
	l := &MemLoader{Base: srv.URL, Store: MapStore{}, Have: have, Limits: DefaultLimits, Pick: LoadsDefs}
	mods, st, err = l.Load(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := defs.ScanFS(mods, defs.Options{GameVersion: gameVersion, ActiveComplete: true}); err != nil || !slices.Equal(got.Summary(), set.Summary()) {
		t.Errorf("def databases from the def files only differ (%v)", err)
	}
	if st.Skipped == 0 || l.Store.(MapStore)[lamp.Hash] != nil || requests.Load() != int64(st.Fetched) {
		t.Errorf("with LoadsDefs: %+v, %d requests; want the texture skipped", st, requests.Load())
	}
	t.Logf("def files only: %d files fetched (%d bytes), %d skipped (%d bytes)", st.Fetched, st.FetchedBytes, st.Skipped, st.SkippedBytes)
}

// fullStore keeps nothing, as a browser over its quota.
type fullStore struct{ MapStore }

func (fullStore) Put(context.Context, Sum, []byte) error { return errors.New("quota exceeded") }

// TestMemLoaderFullStore: a store that keeps nothing costs a fetch on
// every load, never the load.
func TestMemLoaderFullStore(t *testing.T) {
	m := build(t, BuildOptions{}, synthMod(t, t.TempDir(), "test.synth"))
	h := serve(t, m)
	for range 2 {
		l := &MemLoader{Base: h.srv.URL, Store: fullStore{MapStore{}}, Limits: DefaultLimits}
		if _, st, err := l.Load(context.Background(), m); err != nil || st.Fetched != st.Files || st.Unkept != st.Files {
			t.Errorf("a full store: %+v, %v", st, err)
		}
	}
}

// TestMemLoaderRefuses: a host answering other bytes than the manifest's
// is asked twice and refused; a held mod, or files over the caps, are
// refused before anything is fetched.
func TestMemLoaderRefuses(t *testing.T) {
	m := build(t, BuildOptions{}, synthMod(t, t.TempDir(), "test.synth"))
	var requests atomic.Int64
	liar := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 100)))
	}), &requests)
	l := &MemLoader{Base: liar.URL, Store: MapStore{}, Limits: DefaultLimits}
	_, st, err := l.Load(context.Background(), m)
	if err == nil || !strings.Contains(err.Error(), ErrHashMismatch.Error()) || st.Refused != 1 || requests.Load() != 2 {
		t.Errorf("a lying host: %v, %+v, %d requests", err, st, requests.Load())
	}
	requests.Store(0)
	small := DefaultLimits
	small.MaxFileSize = 1000
	l.Limits = small
	if _, _, err := l.Load(context.Background(), m); err == nil || requests.Load() != 0 {
		t.Errorf("over the size cap: %v, %d requests", err, requests.Load())
	}
	l.Limits = DefaultLimits
	held := build(t, BuildOptions{Except: []string{"test.synth"}}, synthMod(t, t.TempDir(), "test.synth"))
	if _, _, err := l.Load(context.Background(), held); err == nil || !strings.Contains(err.Error(), "does not share") || requests.Load() != 0 {
		t.Errorf("a held mod: %v, %d requests", err, requests.Load())
	}
}
