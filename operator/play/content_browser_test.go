package play_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/testing/browsertest"
)

// realAllowTool is a real public mod the defs tests read, beside the
// repository (absent from a bare clone: a made-up mod stands in).
var realAllowTool = filepath.Join("..", "..", "..", "shared", "testdata", "real-mods", "AllowTool@cc168e8")

// moddedContent is a host's content: the repository's default content as
// a folder (the base the page has built in), a real public mod (or, where
// it is absent, a made-up one), and a mod with a texture and an assembly
// (code, which is never shared).
func moddedContent(t *testing.T) []string {
	t.Helper()
	core := filepath.Join("..", "..", "game", "colony", "content", "Core")
	dir := t.TempDir()
	second := realAllowTool
	if _, err := os.Stat(second); err != nil {
		t.Logf("no real mod at %s: a made-up one stands in", second)
		second = writeMod(t, filepath.Join(dir, "Tools"), map[string]string{
			"About/About.xml":      "<ModMetaData><packageId>test.tools</packageId><name>Tools</name></ModMetaData>",
			"Defs/Designators.xml": "<Defs><DesignationCategoryDef><defName>Tools</defName><label>tools</label></DesignationCategoryDef></Defs>",
			"1.6/Defs/Jobs.xml":    "<Defs><JobDef><defName>ToolsJob</defName><reportString>tooling</reportString></JobDef></Defs>",
		})
	}
	lamp := writeMod(t, filepath.Join(dir, "LampMod"), map[string]string{
		"About/About.xml":     "<ModMetaData><packageId>test.lamps</packageId><name>Lamps</name><modVersion>1.0</modVersion></ModMetaData>",
		"Defs/Lamps.xml":      "<Defs><JobDefX><defName>LightLamp</defName><label>light a lamp</label></JobDefX></Defs>",
		"Textures/Lamp.png":   "\x89PNG\r\n\x1a\n" + strings.Repeat("lamp pixels ", 2000),
		"Assemblies/Lamp.dll": "MZ\x90\x00 an assembly, never shared",
	})
	return []string{core, second, lamp}
}

// writeMod writes files under root and returns root.
func writeMod(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// contentCounter counts the file requests (GET /content/<sha256>) a
// handler answered, by status.
type contentCounter struct {
	mu       sync.Mutex
	byStatus map[int]int
	hashes   []string
}

func (c *contentCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		h.ServeHTTP(rec, r)
		if r.URL.Path == modsync.ManifestPath {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.byStatus[rec.status]++
		c.hashes = append(c.hashes, strings.TrimPrefix(r.URL.Path, modsync.ContentPrefix))
	})
}

func (c *contentCounter) take() (map[int]int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	by, h := c.byStatus, c.hashes
	c.byStatus, c.hashes = map[int]int{}, nil
	return by, h
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// hostSharesContent says whether host serve shares its content itself
// (--share-content, modsync.Handler under /content/ on --http). Until it
// does, the test serves modsync.Handler for the same content beside the
// host; once it does, set this to true: the host is started with
// --share-content and the test's origin passes /content/ to it as well.
const hostSharesContent = true

// frontHost is the origin the page is loaded from: it passes /play, /ws
// and /api to the host's --http listener at hostHTTP, and counts the
// content file requests it answers under /content/: from
// modsync.Handler for dirs (built here) or, with hostSharesContent, the
// host's. It returns the origin and the manifest the page is served.
func frontHost(t *testing.T, hostHTTP string, dirs []string, count *contentCounter) (string, *modsync.Manifest) {
	t.Helper()
	target, err := url.Parse(hostHTTP)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var content http.Handler = proxy
	var m *modsync.Manifest
	if hostSharesContent {
		m, _, err = modsync.HTTPSource{Base: hostHTTP}.Manifest(context.Background(), modsync.DefaultLimits)
	} else {
		m, content, err = buildShare(dirs)
	}
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(modsync.ContentPrefix, count.wrap(content))
	mux.Handle("/", proxy)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, m
}

// buildShare is what host serve --share-content serves for dirs.
func buildShare(dirs []string) (*modsync.Manifest, http.Handler, error) {
	set, err := defs.ScanDirs(dirs, defs.Options{GameVersion: defs.DefaultGameVersion, ActiveComplete: true})
	if err != nil {
		return nil, nil, err
	}
	m, err := modsync.Build(set, modsync.BuildOptions{})
	if err != nil {
		return nil, nil, err
	}
	h, err := modsync.NewHandler(m)
	return m, h, err
}

// TestBrowserModdedHost: the page joins a host running mods on the
// default base content. It fetches the host's content manifest, takes
// the base's files from its built-in content, fetches only the mods'
// shared files by hash into Cache Storage (checked by SHA-256), loads
// them with the join code compiled to WebAssembly, and reaches
// WorldReady, its def databases matching the host's; the assembly never
// travels. A second visit fetches nothing.
//
// Until host serve --share-content is wired in, the content is served
// beside the host (hostSharesContent).
func TestBrowserModdedHost(t *testing.T) {
	hostBin, _ := tools(t)
	bctx := browser(t)
	dirs := moddedContent(t)
	args := []string{"serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--maps", "1", "--map-size", "64",
		"--conn-rate", "-1", "--data-dir", t.TempDir()}
	for _, d := range dirs {
		args = append(args, "--content", d)
	}
	if hostSharesContent {
		args = append(args, "--share-content")
	}
	hostLog, _ := start(t, hostBin, `msg=hosting addr=(\S+)`, args...)
	m := regexp.MustCompile(`msg="players may join from a browser" url=(http://\S+)/play`).FindStringSubmatch(hostLog.String())
	if m == nil {
		t.Fatalf("the host logs no /play URL:\n%s", hostLog.String())
	}
	count := &contentCounter{byStatus: map[int]int{}}
	origin, manifest := frontHost(t, m[1], dirs, count)
	ctx, cancel := context.WithTimeout(bctx, 5*time.Minute)
	defer cancel()

	type contentState struct {
		Shared       bool    `json:"shared"`
		Mods         int     `json:"mods"`
		Files        int     `json:"files"`
		Bytes        int64   `json:"bytes"`
		BuiltIn      int     `json:"built_in"`
		Stored       int     `json:"stored"`
		Fetched      int     `json:"fetched"`
		FetchedBytes int64   `json:"fetched_bytes"`
		Skipped      int     `json:"skipped"`
		SkippedBytes int64   `json:"skipped_bytes"`
		Kept         bool    `json:"kept"`
		Ms           float64 `json:"ms"` // the content's getting, before the connect
	}
	visit := func(ctx context.Context, name string) (contentState, map[int]int, []string, time.Duration) {
		t.Helper()
		begin := time.Now()
		if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/play?name="+name)); err != nil {
			t.Fatal(err)
		}
		browsertest.Poll(t, ctx, name+"'s WorldReady", `window.lockhostPage && ["ready", "error"].includes(lockhostPage.state().phase)`, 4*time.Minute)
		if e := browsertest.Eval[string](t, ctx, `lockhostPage.state().error || ""`); e != "" {
			t.Fatalf("%s: %s\nhost log:\n%s", name, e, hostLog.String())
		}
		took := time.Since(begin)
		st := browsertest.Eval[contentState](t, ctx, `lockhostPage.state().content`)
		wire := browsertest.Eval[float64](t, ctx, `performance.getEntriesByType("resource").filter(e => /\/content\/[0-9a-f]{64}$/.test(e.name)).reduce((n, e) => n + e.transferSize, 0)`)
		t.Logf("%s: %.0f bytes on the wire for content files (headers included)", name, wire)
		line := fmt.Sprintf("content: %d files, %d bytes fetched (%d from cache", st.Fetched, st.FetchedBytes, st.Stored)
		browsertest.Poll(t, ctx, name+"'s content line in the page's log", `document.getElementById("log").textContent.includes(`+strconv.Quote(line)+`)`, time.Minute)
		by, hashes := count.take()
		if !regexp.MustCompile(`msg="player ready" player=\d+ name=` + name + ` `).MatchString(hostLog.String()) {
			t.Errorf("the host logs no %s ready:\n%s", name, hostLog.String())
		}
		return st, by, hashes, took
	}

	first, by, hashes, took := visit(ctx, "Modder")
	shared := map[string]bool{}
	var modFiles int
	for i, d := range manifest.Mods {
		for _, f := range d.Files {
			shared[f.Hash.String()] = true
			if i > 0 {
				modFiles++
			}
		}
	}
	t.Logf("first visit: WorldReady %v after navigating; content %+v; file requests by status %v", took.Round(time.Millisecond), first, by)
	if !first.Shared || first.Mods != 3 || first.Fetched == 0 || first.Fetched+first.BuiltIn != first.Files || first.Stored != 0 || !first.Kept {
		t.Errorf("first visit's content %+v: want the base built in and every other file fetched and kept", first)
	}
	if first.BuiltIn < len(manifest.Mods[0].Files) || first.Fetched > modFiles {
		t.Errorf("first visit fetched %d files, the mods have %d; %d built in, the base has %d", first.Fetched, modFiles, first.BuiltIn, len(manifest.Mods[0].Files))
	}
	if by[http.StatusOK] != first.Fetched || len(by) != 1 {
		t.Errorf("the host answered file requests %v, the page says it fetched %d", by, first.Fetched)
	}
	for _, h := range hashes {
		if !shared[h] {
			t.Errorf("the page asked for %s, which the manifest does not share", h)
		}
	}
	d := manifest.Mod("test.lamps")
	if d == nil || len(d.NotShared) != 1 || d.NotShared[0].Path != "Assemblies/Lamp.dll" {
		t.Fatalf("the assembly is not listed as not shared: %+v", d)
	}
	// The page draws no textures: it leaves them on the host.
	for _, f := range d.Files {
		if f.Kind == modsync.KindTexture && slices.Contains(hashes, f.Hash.String()) {
			t.Errorf("the page fetched the texture %s", f.Path)
		}
	}
	if first.Skipped == 0 {
		t.Errorf("the page skipped no file: %+v", first)
	}

	// The first page leaves; the second visit is in a new tab of the same
	// browser (the same Cache Storage).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	tab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	second, by, _, took := visit(tab, "Again")
	t.Logf("second visit: WorldReady %v after navigating; content %+v; file requests by status %v", took.Round(time.Millisecond), second, by)
	if second.Fetched != 0 || second.FetchedBytes != 0 || second.Stored != first.Fetched || len(by) != 0 {
		t.Errorf("second visit's content %+v, file requests %v: want nothing fetched, %d files from Cache Storage", second, by, first.Fetched)
	}
}
