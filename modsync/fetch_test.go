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
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gofrs/flock"
	"github.com/lockhost/lockhost/defs"
)

// gzipSize is the size of data gzipped at the default level.
func gzipSize(t *testing.T, data []byte) int {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(data)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// TestFetchExactlyWhatIsMissing: into an empty cache a joiner fetches
// exactly the host's files, each once, then from the same cache nothing;
// the views it lays out scan to the host's def databases and files, and
// the player's own mod folder is not written.
func TestFetchExactlyWhatIsMissing(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	hostSet := scanDirs(t, allowTool, synth)
	m, err := Build(hostSet, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := serve(t, m)
	before := treeHash(t, allowTool2021)
	c := newCache(t)
	need := Need(m, nil)
	st := fetchAll(t, c, h.srv.URL, m)
	var want int64
	var each, all int
	var concat []byte
	for _, f := range need {
		want += f.Size
		data, _ := os.ReadFile(m.LocalFiles()[f.Hash])
		each += gzipSize(t, data)
		concat = append(concat, data...)
	}
	all = gzipSize(t, concat)
	sent := h.Sent.Load()
	if st.Fetched != len(need) || st.FileBytes != want || st.FetchedBytes != sent || st.Cached != 0 {
		t.Errorf("fetched %d files, %d bytes (%d on the wire, server sent %d); want %d files, %d bytes", st.Fetched, st.FileBytes, st.FetchedBytes, sent, len(need), want)
	}
	// Text travels compressed: the wire carries about what gzip makes of
	// the files one by one (the host compresses fast, not small).
	if st.FetchedBytes >= want || st.FetchedBytes > int64(each)+int64(each)/10 {
		t.Errorf("%d bytes on the wire for %d bytes of files (gzip %d)", st.FetchedBytes, want, each)
	}
	t.Logf("empty cache: fetched %d files of %d bytes with %d bytes on the wire; gzip of the missing files: %d bytes file by file, %d bytes as one stream",
		st.Fetched, st.FileBytes, st.FetchedBytes, each, all)

	again := fetchAll(t, c, h.srv.URL, m)
	if again.FetchedBytes != 0 || again.Fetched != 0 || again.Cached != len(need) || h.Sent.Load() != sent {
		t.Errorf("second fetch: %+v, server sent %d more", again, h.Sent.Load()-sent)
	}
	t.Logf("same cache again: fetched %d bytes, %d files from the cache", again.FetchedBytes, again.Cached)

	checkViews(t, c, m, hostSet)
	if treeHash(t, allowTool2021) != before {
		t.Error("the player's own mod folder changed")
	}
}

// checkViews lays out every mod of m from the cache and scans the views:
// the same def databases as the host's, and the same shared files.
func checkViews(t *testing.T, c *Cache, m *Manifest, hostSet *defs.Set) {
	t.Helper()
	var dirs []string
	for i := range m.Mods {
		dir, err := c.View(m, i)
		if err != nil {
			t.Fatal(err)
		}
		if rel, err := filepath.Rel(c.Dir(), dir); err != nil || !filepath.IsLocal(rel) {
			t.Fatalf("view %s is not inside the cache %s", dir, c.Dir())
		}
		dirs = append(dirs, dir)
	}
	viewSet := scanDirs(t, dirs...)
	if r := defs.Diff(hostSet.Manifest(), viewSet.Manifest()); !r.Same() {
		t.Errorf("the views' defs differ from the host's: %+v", r)
	}
	vm, err := Build(viewSet, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Mods {
		if vm.Mods[i].Digest() != m.Mods[i].Digest() {
			t.Errorf("view of %s shares other files than the host's: %+v", m.Mods[i].PackageID, vm.Mods[i].Files)
		}
	}
	// A view can be laid out again (the next session with this host).
	if _, err := c.View(m, 0); err != nil {
		t.Errorf("second view: %v", err)
	}
}

// TestFetchUsesThePlayersOwnFiles: files the player has in its own mods
// (the 2021 copy of the real mod) are copied into the cache, not
// fetched; only the rest travels.
func TestFetchUsesThePlayersOwnFiles(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	m := build(t, BuildOptions{}, allowTool, synth)
	local := build(t, BuildOptions{}, allowTool2021)
	h := serve(t, m)
	f := &Fetcher{Base: h.srv.URL, Cache: newCache(t), Limits: DefaultLimits, Local: local.LocalFiles()}
	st, err := f.Fetch(context.Background(), Need(m, nil))
	if err != nil {
		t.Fatal(err)
	}
	lines := Compare(m, local)
	want := lines[0].MissingBytes + lines[1].MissingBytes
	if st.FileBytes != want || st.Local != 14 {
		t.Errorf("fetched %d bytes, %d files copied from the player's; want %d bytes, 14 files", st.FileBytes, st.Local, want)
	}
	t.Logf("with the player's 2021 copy: fetched %d bytes (%d on the wire), copied %d files (%d bytes) from the player's folders", st.FileBytes, st.FetchedBytes, st.Local, st.LocalBytes)
}

// TestSecondHostCostsNothingForSharedMods: two hosts run the same two
// mods (one real, one synthetic), the second a third mod too: fetching
// from the second after the first costs only the third mod's files.
func TestSecondHostCostsNothingForSharedMods(t *testing.T) {
	dir := t.TempDir()
	synth, other := synthMod(t, dir, "test.synth"), synthMod(t, dir, "test.other")
	mA := build(t, BuildOptions{}, allowTool, synth)
	mB := build(t, BuildOptions{}, allowTool, synth, other)
	hA, hB := serve(t, mA), serve(t, mB)
	c := newCache(t)
	stA := fetchAll(t, c, hA.srv.URL, mA)
	stB := fetchAll(t, c, hB.srv.URL, mB)
	// The third mod's textures and sounds are the same bytes as the
	// synthetic mod's: only its files of other content travel.
	inA := map[Sum]bool{}
	for _, f := range Need(mA, nil) {
		inA[f.Hash] = true
	}
	var third int64
	for _, f := range mB.Mod("test.other").Files {
		if !inA[f.Hash] {
			third += f.Size
		}
	}
	if stB.FileBytes != third || hB.Sent.Load() != stB.FetchedBytes || stB.Cached != len(Need(mB, nil))-stB.Fetched || stB.Cached < len(Need(mA, nil)) {
		t.Errorf("second host: fetched %d bytes (server sent %d), %d from the cache; want %d, only the third mod's new files", stB.FileBytes, hB.Sent.Load(), stB.Cached, third)
	}
	t.Logf("first host: %d bytes (%d on the wire); second host: %d bytes (%d on the wire; its two mods in common: 0; the third mod's %d bytes, less the files it shares by hash), %d files from the cache",
		stA.FileBytes, stA.FetchedBytes, stB.FileBytes, stB.FetchedBytes, mB.Mod("test.other").Size(), stB.Cached)
}

// bigMod writes a mod with one texture of n bytes.
func bigMod(t *testing.T, n int) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "big")
	writeFiles(t, root, map[string]string{
		"About/About.xml":    "<ModMetaData><packageId>test.big</packageId></ModMetaData>",
		"Defs/A.xml":         "<Defs><ThingDef><defName>Big</defName></ThingDef></Defs>",
		"Textures/Big/A.png": pixels(n, 9),
	})
	return root
}

// chunk is the most a resumed download may send besides what was left:
// one read buffer's worth.
const chunk = 64 << 10

// tamper wraps a handler: for requests of the file target it counts the
// body bytes the server writes, records the Range asked, and can cut the
// connection after cut bytes or flip a bit of the body.
type tamper struct {
	next   http.Handler
	target string
	cut    atomic.Int64 // > 0: abort after that many body bytes, once
	flips  atomic.Int64 // bodies left to flip a bit in
	served atomic.Int64
	ranges []string
}

func (tp *tamper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != ContentPrefix+tp.target {
		tp.next.ServeHTTP(w, r)
		return
	}
	tp.ranges = append(tp.ranges, r.Header.Get("Range"))
	tw := &tamperWriter{ResponseWriter: w, tp: tp, cut: tp.cut.Swap(0), flip: tp.flips.Add(-1) >= 0}
	tp.next.ServeHTTP(tw, r)
}

type tamperWriter struct {
	http.ResponseWriter
	tp      *tamper
	cut     int64
	written int64
	flip    bool
}

func (w *tamperWriter) Write(b []byte) (int, error) {
	if w.flip && len(b) > 0 {
		b = bytes.Clone(b)
		b[len(b)/2] ^= 0x10
		w.flip = false
	}
	if w.cut > 0 && w.written+int64(len(b)) >= w.cut {
		n, _ := w.ResponseWriter.Write(b[:w.cut-w.written])
		w.tp.served.Add(int64(n))
		w.ResponseWriter.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	n, err := w.ResponseWriter.Write(b)
	w.written += int64(n)
	w.tp.served.Add(int64(n))
	return n, err
}

// TestResumeAfterCut: a download cut at half resumes with Range and the
// server sends at most the rest plus one chunk.
func TestResumeAfterCut(t *testing.T) {
	m := build(t, BuildOptions{}, bigMod(t, 1<<20))
	big := modFile(m, "test.big", "Textures/Big/A.png")
	h, err := NewHandler(m)
	if err != nil {
		t.Fatal(err)
	}
	tp := &tamper{next: h, target: big.Hash.String()}
	tp.cut.Store(big.Size / 2)
	srv := httptest.NewServer(tp)
	defer srv.Close()
	c := newCache(t)
	f := &Fetcher{Base: srv.URL, Cache: c, Limits: DefaultLimits}
	files := Need(m, nil)
	first, err := f.Fetch(context.Background(), files)
	if err == nil {
		t.Fatal("a cut download succeeded")
	}
	cutAt := tp.served.Load()
	second, err := f.Fetch(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	rest := tp.served.Load() - cutAt
	if second.Resumed <= 0 || rest > big.Size-second.Resumed+chunk || tp.served.Load() > big.Size+chunk {
		t.Errorf("kept %d bytes, then the server sent %d of %d", second.Resumed, rest, big.Size)
	}
	if len(tp.ranges) != 2 || tp.ranges[0] != "" || !has(tp.ranges[1], "bytes=") {
		t.Errorf("ranges asked: %q", tp.ranges)
	}
	if !c.Has(big.Hash, big.Size) {
		t.Error("the resumed file is not in the cache")
	}
	t.Logf("file of %d bytes cut after %d (client kept %d; %d bytes of all files received before the cut); resumed with %q: server sent %d more, %d in all",
		big.Size, cutAt, second.Resumed, first.FetchedBytes, tp.ranges[1], rest, tp.served.Load())
}

// TestFlippedBitRefused: a body with one bit flipped is refused and the
// file fetched once more; a host that always flips it gets nothing into
// the cache.
func TestFlippedBitRefused(t *testing.T) {
	m := build(t, BuildOptions{}, bigMod(t, 100_000))
	big := modFile(m, "test.big", "Textures/Big/A.png")
	h, err := NewHandler(m)
	if err != nil {
		t.Fatal(err)
	}
	tp := &tamper{next: h, target: big.Hash.String()}
	tp.flips.Store(1)
	srv := httptest.NewServer(tp)
	defer srv.Close()
	c := newCache(t)
	f := &Fetcher{Base: srv.URL, Cache: c, Limits: DefaultLimits}
	st, err := f.Fetch(context.Background(), []File{*big})
	if err != nil || st.Refused != 1 || st.FetchedBytes != 2*big.Size || !c.Has(big.Hash, big.Size) {
		t.Fatalf("one flipped bit: %+v, %v", st, err)
	}
	t.Logf("flipped bit: refused %d, fetched %d bytes for a file of %d", st.Refused, st.FetchedBytes, big.Size)

	tp.flips.Store(1 << 30)
	c2 := newCache(t)
	f.Cache = c2
	st, err = f.Fetch(context.Background(), []File{*big})
	if !errors.Is(err, ErrHashMismatch) || c2.Has(big.Hash, big.Size) {
		t.Errorf("always flipped: %+v, %v", st, err)
	}
	if _, err := os.Stat(c2.partialPath(big.Hash)); !os.IsNotExist(err) {
		t.Errorf("a refused download stays in the partial folder: %v", err)
	}
}

// TestFetchBusy: a file another process is fetching into the same cache
// (its partial file locked) is not written by a second fetcher.
func TestFetchBusy(t *testing.T) {
	m := build(t, BuildOptions{}, bigMod(t, 10_000))
	big := modFile(m, "test.big", "Textures/Big/A.png")
	h := serve(t, m)
	c := newCache(t)
	other := flock.New(c.partialPath(big.Hash) + ".lock")
	if ok, err := other.TryLock(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	f := &Fetcher{Base: h.srv.URL, Cache: c, Limits: DefaultLimits}
	if _, err := f.Fetch(context.Background(), []File{*big}); !errors.Is(err, ErrBusy) || h.Sent.Load() != 0 {
		t.Errorf("locked file: %v, %d bytes sent", err, h.Sent.Load())
	}
	other.Unlock()
	if st, err := f.Fetch(context.Background(), []File{*big}); err != nil || st.FetchedBytes != big.Size {
		t.Errorf("after the other process: %+v, %v", st, err)
	}
}

// fileSource serves files from disk by hash, as the session connection
// will: no HTTP. shift moves the start it claims.
type fileSource struct {
	files map[Sum]string
	shift int64
	gets  int
}

func (s *fileSource) Get(_ context.Context, f File, from int64) (io.ReadCloser, int64, error) {
	s.gets++
	r, err := os.Open(s.files[f.Hash])
	if err != nil {
		return nil, 0, err
	}
	if _, err := r.Seek(from, io.SeekStart); err != nil {
		r.Close()
		return nil, 0, err
	}
	return r, from + s.shift, nil
}

// TestFetchFromAnySource: the fetcher's checks hold for a source other
// than HTTP, and a source that sends bytes from another offset than
// asked is refused.
func TestFetchFromAnySource(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	m := build(t, BuildOptions{}, synth)
	src := &fileSource{files: m.LocalFiles()}
	c := newCache(t)
	f := &Fetcher{Source: src, Cache: c, Limits: DefaultLimits}
	st, err := f.Fetch(context.Background(), Need(m, nil))
	if err != nil || st.FetchedBytes != m.Mods[0].Size() || src.gets != len(m.Mods[0].Files) {
		t.Fatalf("%+v, %d gets, %v", st, src.gets, err)
	}
	big := modFile(build(t, BuildOptions{}, bigMod(t, 50_000)), "test.big", "Textures/Big/A.png")
	path := filepath.Join(t.TempDir(), "big.png")
	os.WriteFile(path, []byte(pixels(50_000, 9)), 0o644)
	os.WriteFile(c.partialPath(big.Hash), []byte(pixels(50_000, 9))[:1000], 0o644)
	lying := &fileSource{files: map[Sum]string{big.Hash: path}, shift: 7}
	f.Source = lying
	if _, err := f.Fetch(context.Background(), []File{*big}); err == nil || !has(err.Error(), "asked from 1000") || c.Has(big.Hash, big.Size) {
		t.Errorf("a source answering from another offset: %v", err)
	}
}

// TestDirsLoadTheHostsContent: a joiner with one of the host's mods the
// same and another in an older version loads the first from its own
// folder and the second from the cache, and gets the host's def
// databases; a held-back mod it lacks is an error naming it.
func TestDirsLoadTheHostsContent(t *testing.T) {
	dir := t.TempDir()
	synth := synthMod(t, dir, "test.synth")
	hostSet := scanDirs(t, allowTool, synth)
	m, err := Build(hostSet, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	local := build(t, BuildOptions{}, allowTool2021, synth)
	h := serve(t, m)
	c := newCache(t)
	states := Compare(m, local)
	f := &Fetcher{Base: h.srv.URL, Cache: c, Limits: DefaultLimits, Local: local.LocalFiles()}
	if _, err := f.Fetch(context.Background(), Need(m, func(d *Mod) bool {
		return states[slices.IndexFunc(states, func(s ModState) bool { return s.PackageID == d.PackageID })].State != Same
	})); err != nil {
		t.Fatal(err)
	}
	dirs, err := c.Dirs(m, local)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 2 || !strings.HasPrefix(dirs[0], c.Dir()) || dirs[1] != synth {
		t.Fatalf("dirs %q", dirs)
	}
	if r := defs.Diff(hostSet.Manifest(), scanDirs(t, dirs...).Manifest()); !r.Same() {
		t.Errorf("the joiner's content differs from the host's: %+v", r)
	}
	held := build(t, BuildOptions{Except: []string{"test.synth"}}, allowTool, synth)
	if _, err := c.Dirs(held, nil); err == nil || !strings.Contains(err.Error(), "test.synth") {
		t.Errorf("held back, lacking: %v", err)
	}
	if dirs, err := c.Dirs(held, local); err != nil || dirs[1] != synth {
		t.Errorf("held back, but the player has it: %q, %v", dirs, err)
	}
	if line := Compare(held, local)[1].String(); !strings.Contains(line, "your copy") {
		t.Errorf("held back, but the player has it: %q", line)
	}
}

// TestResumeCompressedAfterCut: a whole file sent compressed and cut
// resumes uncompressed from the bytes the joiner kept, sending at most
// the rest plus one chunk.
func TestResumeCompressedAfterCut(t *testing.T) {
	root := filepath.Join(t.TempDir(), "dds")
	var text strings.Builder
	for i := 0; text.Len() < 1<<20; i++ {
		text.WriteString("DDS texel row " + strings.Repeat("ab", i%7) + "\n")
	}
	writeFiles(t, root, map[string]string{
		"About/About.xml":    "<ModMetaData><packageId>test.dds</packageId></ModMetaData>",
		"Textures/Big/A.dds": text.String(),
	})
	m := build(t, BuildOptions{}, root)
	big := modFile(m, "test.dds", "Textures/Big/A.dds")
	h, err := NewHandler(m)
	if err != nil {
		t.Fatal(err)
	}
	tp := &tamper{next: h, target: big.Hash.String()}
	tp.cut.Store(4000)
	srv := httptest.NewServer(tp)
	defer srv.Close()
	c := newCache(t)
	f := &Fetcher{Base: srv.URL, Cache: c, Limits: DefaultLimits}
	if _, err := f.Fetch(context.Background(), []File{*big}); err == nil {
		t.Fatal("a cut download succeeded")
	}
	cutAt := tp.served.Load()
	st, err := f.Fetch(context.Background(), []File{*big})
	if err != nil || !c.Has(big.Hash, big.Size) {
		t.Fatalf("resume: %+v, %v", st, err)
	}
	rest := tp.served.Load() - cutAt
	if st.Resumed <= 0 || rest > big.Size-st.Resumed+chunk || len(tp.ranges) != 2 || !has(tp.ranges[1], "bytes=") {
		t.Errorf("kept %d of %d bytes, then the server sent %d; ranges %q", st.Resumed, big.Size, rest, tp.ranges)
	}
	t.Logf("compressed file of %d bytes cut after %d bytes on the wire, which held %d bytes of it; resumed: %d more", big.Size, cutAt, st.Resumed, rest)
}

// TestLegacyModKeepsItsID: a mod from before packageId existed is called
// by its folder's name; its view is named so that it gets the same ID
// and the joiner loads the host's defs.
func TestLegacyModKeepsItsID(t *testing.T) {
	root := filepath.Join(t.TempDir(), "Old Mod")
	writeFiles(t, root, map[string]string{
		"About/About.xml": "<ModMetaData><name>Old</name></ModMetaData>",
		"Defs/A.xml":      "<Defs><ThingDef><defName>Old</defName></ThingDef></Defs>",
	})
	hostSet := scanDirs(t, allowTool, root)
	m, err := Build(hostSet, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Mods[1].PackageID != "legacy.old_mod" {
		t.Fatalf("legacy ID %q", m.Mods[1].PackageID)
	}
	h := serve(t, m)
	c := newCache(t)
	fetchAll(t, c, h.srv.URL, m)
	dirs, err := c.Dirs(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	viewSet := scanDirs(t, dirs...)
	if viewSet.Mods[1].PackageID != "legacy.old_mod" || !defs.Diff(hostSet.Manifest(), viewSet.Manifest()).Same() {
		t.Errorf("the view of the legacy mod is %q", viewSet.Mods[1].PackageID)
	}
}
