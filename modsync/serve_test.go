package modsync

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHandlerServesOnlyPublished: the handler serves the manifest and
// the files it publishes, with Range and HEAD, and nothing else: not a
// file it lists as not shared, not another hash, not a path.
func TestHandlerServesOnlyPublished(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	m := build(t, BuildOptions{}, synth)
	h := serve(t, m)
	lamp := modFile(m, "test.synth", "Textures/Things/Lamp.png")
	want, _ := os.ReadFile(filepath.Join(synth, "Textures/Things/Lamp.png"))

	body, resp := fetchURL(t, "GET", URL(h.srv.URL, lamp.Hash), "")
	if resp.StatusCode != 200 || string(body) != string(want) || resp.Header.Get("ETag") != `"`+lamp.Hash.String()+`"` {
		t.Errorf("GET: %s, %d bytes", resp.Status, len(body))
	}
	body, resp = fetchURL(t, "GET", URL(h.srv.URL, lamp.Hash), "bytes=10-19")
	if resp.StatusCode != 206 || string(body) != string(want[10:20]) {
		t.Errorf("Range: %s %q", resp.Status, body)
	}
	if _, resp = fetchURL(t, "HEAD", URL(h.srv.URL, lamp.Hash), ""); resp.StatusCode != 200 || resp.ContentLength != lamp.Size {
		t.Errorf("HEAD: %s, length %d", resp.Status, resp.ContentLength)
	}
	body, _ = fetchURL(t, "GET", h.srv.URL+ManifestPath, "")
	if got, err := Decode(body, DefaultLimits); err != nil || len(got.Mods) != 1 {
		t.Errorf("manifest: %v", err)
	}

	dll, _ := os.ReadFile(filepath.Join(synth, "Assemblies/Synth.dll"))
	for name, path := range map[string]string{
		"not shared":  ContentPrefix + sumOf(dll).String(),
		"other hash":  ContentPrefix + sumOf([]byte("x")).String(),
		"upper case":  ContentPrefix + strings.ToUpper(lamp.Hash.String()),
		"short":       ContentPrefix + lamp.Hash.String()[:63],
		"path":        ContentPrefix + "Textures/Things/Lamp.png",
		"traversal":   ContentPrefix + "..%2f..%2fetc%2fpasswd",
		"other place": "/" + lamp.Hash.String(),
	} {
		if _, resp := fetchURL(t, "GET", h.srv.URL+path, ""); resp.StatusCode != 404 {
			t.Errorf("%s: %s", name, resp.Status)
		}
	}
	if _, resp := fetchURL(t, "POST", URL(h.srv.URL, lamp.Hash), ""); resp.StatusCode != 405 {
		t.Errorf("POST: %s", resp.Status)
	}
	// A file changed since it was published is not served (nor hashed).
	if err := os.WriteFile(filepath.Join(synth, "Textures/Things/Lamp.png"), []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, resp := fetchURL(t, "GET", URL(h.srv.URL, lamp.Hash), ""); resp.StatusCode != 410 {
		t.Errorf("changed file: %s", resp.Status)
	}
}

// TestHandlerGate: a refusing gate answers 503 and serves no byte; an
// open one is released once the file is served.
func TestHandlerGate(t *testing.T) {
	m := build(t, BuildOptions{}, synthMod(t, t.TempDir(), "test.synth"))
	h := serve(t, m)
	released := make(chan struct{}, 2)
	var open atomic.Bool
	h.Gate = func(*http.Request) (func(), bool) { return func() { released <- struct{}{} }, open.Load() }
	lamp := modFile(m, "test.synth", "Textures/Things/Lamp.png")
	if _, resp := fetchURL(t, "GET", URL(h.srv.URL, lamp.Hash), ""); resp.StatusCode != 503 || h.Sent.Load() != 0 {
		t.Errorf("closed gate: %s, %d bytes", resp.Status, h.Sent.Load())
	}
	open.Store(true)
	if _, resp := fetchURL(t, "GET", URL(h.srv.URL, lamp.Hash), ""); resp.StatusCode != 200 {
		t.Errorf("open gate: %s", resp.Status)
	}
	<-released
	if len(released) != 0 {
		t.Error("the gate was released twice")
	}
}

func fetchURL(t *testing.T, method, url, rng string) ([]byte, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body, resp
}

// TestCacheVerifyPrune: Verify finds and removes a cached file the disk
// changed; Prune keeps what it is told to and what is newer than the
// cutoff.
func TestCacheVerifyPrune(t *testing.T) {
	c := newCache(t)
	a, b := []byte("alpha"), []byte("beta")
	for _, d := range [][]byte{a, b} {
		if err := c.Insert(sumOf(d), int64(len(d)), strings.NewReader(string(d))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Insert(sumOf(a), 5, strings.NewReader("alphX")); err != nil {
		t.Fatal("inserting a file already held:", err)
	}
	if err := c.Insert(sumOf([]byte("gamma")), 5, strings.NewReader("gammX")); err == nil {
		t.Error("a file with a wrong hash was inserted")
	}
	list, err := c.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list %v, %v", list, err)
	}
	p := c.objectPath(sumOf(b))
	os.Chmod(p, 0o644)
	os.WriteFile(p, []byte("bete"), 0o644)
	bad, err := c.Verify()
	if err != nil || len(bad) != 1 || bad[0] != sumOf(b) || c.Has(sumOf(b), 4) {
		t.Errorf("verify: %v, %v", bad, err)
	}
	if n, _, err := c.Prune(nil, time.Unix(0, 0)); err != nil || n != 0 {
		t.Errorf("prune of files older than 1970: %d, %v", n, err)
	}
	if n, _, err := c.Prune(map[Sum]bool{sumOf(a): true}, time.Time{}); err != nil || n != 0 || !c.Has(sumOf(a), 5) {
		t.Errorf("prune keeping alpha: %d, %v", n, err)
	}
	if n, freed, err := c.Prune(nil, time.Time{}); err != nil || n != 1 || freed != 5 || c.Has(sumOf(a), 5) {
		t.Errorf("prune all: %d, %d, %v", n, freed, err)
	}
}

// TestHandlerFollowsNoLinkOut: a shared file replaced after publishing
// by a link to a file outside its mod folder is not served, even with
// the size the manifest recorded.
func TestHandlerFollowsNoLinkOut(t *testing.T) {
	dir := t.TempDir()
	synth := synthMod(t, dir, "test.synth")
	m := build(t, BuildOptions{}, synth)
	h := serve(t, m)
	lamp := modFile(m, "test.synth", "Textures/Things/Lamp.png")
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("s", int(lamp.Size))), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(synth, "Textures/Things/Lamp.png")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, p); err != nil {
		t.Fatal(err)
	}
	body, resp := fetchURL(t, "GET", URL(h.srv.URL, lamp.Hash), "")
	if resp.StatusCode == 200 || strings.Contains(string(body), "sss") {
		t.Errorf("a link out of the mod was followed: %s", resp.Status)
	}
}

// TestHandlerCompresses: a whole def file is sent gzip-compressed to a
// client that accepts it, and as is to one that does not; a range never
// is; a texture in PNG never is.
func TestHandlerCompresses(t *testing.T) {
	m := build(t, BuildOptions{}, allowTool, synthMod(t, t.TempDir(), "test.synth"))
	h := serve(t, m)
	xml := modFile(m, "UnlimitedHugs.AllowTool", "Defs/JobDefs/AllowToolJobs.xml")
	png := modFile(m, "test.synth", "Textures/Things/Lamp.png")
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(f *File, enc, rng string) *http.Response {
		req, _ := http.NewRequest("GET", URL(h.srv.URL, f.Hash), nil)
		req.Header.Set("Accept-Encoding", enc)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, c := range []struct {
		f        *File
		enc, rng string
		gzip     bool
	}{
		{xml, "gzip", "", true},
		{xml, "deflate, gzip;q=0.5", "", true},
		{xml, "gzip;q=0", "", false},
		{xml, "identity", "", false},
		{xml, "gzip", "bytes=10-", false},
		{png, "gzip", "", false},
	} {
		resp := get(c.f, c.enc, c.rng)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gzip || resp.StatusCode/100 != 2 {
			t.Errorf("%s with %q, range %q: %s, Content-Encoding %q", c.f.Path, c.enc, c.rng, resp.Status, resp.Header.Get("Content-Encoding"))
		}
	}
}

// blockingWriter is a response writer whose first body write says so
// and then waits to be let go: a slow joiner holding a stream.
type blockingWriter struct {
	*httptest.ResponseRecorder
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() {
		close(b.started)
		<-b.release
	})
	return b.ResponseRecorder.Write(p)
}

// TestHandlerStreams: without a gate, a handler serves at most
// DefaultStreams files at once; the next request is answered 503, and a
// stream is free again once its response ends.
func TestHandlerStreams(t *testing.T) {
	m := build(t, BuildOptions{}, synthMod(t, t.TempDir(), "test.synth"))
	h, err := NewHandler(m)
	if err != nil {
		t.Fatal(err)
	}
	lamp := modFile(m, "test.synth", "Textures/Things/Lamp.png")
	req := httptest.NewRequest("GET", ContentPrefix+lamp.Hash.String(), nil)
	var slow []*blockingWriter
	var wg sync.WaitGroup
	for range DefaultStreams {
		bw := &blockingWriter{ResponseRecorder: httptest.NewRecorder(), started: make(chan struct{}), release: make(chan struct{})}
		slow = append(slow, bw)
		wg.Go(func() { h.ServeHTTP(bw, req) })
		<-bw.started
	}
	busy := httptest.NewRecorder()
	h.ServeHTTP(busy, req)
	if busy.Code != http.StatusServiceUnavailable {
		t.Errorf("request %d: %d, want 503", DefaultStreams+1, busy.Code)
	}
	for _, bw := range slow {
		close(bw.release)
	}
	wg.Wait()
	ok := httptest.NewRecorder()
	h.ServeHTTP(ok, req)
	if ok.Code != http.StatusOK || ok.Body.Len() != int(lamp.Size) {
		t.Errorf("after the slow ones: %d, %d bytes", ok.Code, ok.Body.Len())
	}
}
