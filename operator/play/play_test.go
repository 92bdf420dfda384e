package play_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/operator/web"
)

func get(t *testing.T, h http.Handler, path string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestWasmServed: the player goes out gzipped to a client that takes
// gzip, inflated to one that does not (a real WebAssembly module of the
// size the page is told), and not again to one that holds it.
func TestWasmServed(t *testing.T) {
	h := play.Handler(play.Config{})
	gz := get(t, h, "/play/lockhost.wasm", map[string]string{"Accept-Encoding": "gzip, deflate, br"})
	if gz.Code != 200 || gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("Content-Type") != "application/wasm" ||
		!bytes.Equal(gz.Body.Bytes(), play.Wasm()) {
		t.Fatalf("gzip: %d %v, %d bytes", gz.Code, gz.Header(), gz.Body.Len())
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	for _, ae := range []string{"", "identity", "gzip;q=0, br"} {
		plain := get(t, h, "/play/lockhost.wasm", map[string]string{"Accept-Encoding": ae})
		if plain.Code != 200 || plain.Header().Get("Content-Encoding") != "" || !bytes.Equal(plain.Body.Bytes(), raw) {
			t.Fatalf("Accept-Encoding %q: %d %v, %d bytes, want %d", ae, plain.Code, plain.Header(), plain.Body.Len(), len(raw))
		}
	}
	if !bytes.HasPrefix(raw, []byte("\x00asm")) || gz.Header().Get("X-Uncompressed-Length") != strconv.Itoa(len(raw)) ||
		int(play.RawSize(play.Wasm())) != len(raw) {
		t.Fatalf("not a wasm module of %d bytes: %q, header %q", len(raw), raw[:4], gz.Header().Get("X-Uncompressed-Length"))
	}
	again := get(t, h, "/play/lockhost.wasm", map[string]string{"If-None-Match": gz.Header().Get("ETag")})
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Fatalf("with the ETag: %d, %d bytes", again.Code, again.Body.Len())
	}
}

// TestPageFiles: the page, its script and style, and Go's wasm_exec.js
// (with its license header) are served, the page under a policy that
// lets it run only its own script and WebAssembly.
func TestPageFiles(t *testing.T) {
	h := play.Handler(play.Config{})
	for path, want := range map[string]string{
		"/play":              `<canvas id="map"`,
		"/play/play.js":      "lockhost.join(opts)",
		"/play/play.css":     "canvas",
		"/play/wasm_exec.js": "// Copyright 2018 The Go Authors. All rights reserved.\n// Use of this source code is governed by a BSD-style",
	} {
		w := get(t, h, path, nil)
		if w.Code != 200 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: %d, no %q", path, w.Code, want)
		}
	}
	csp := get(t, h, "/play", nil).Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self' 'wasm-unsafe-eval'") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("page CSP %q", csp)
	}
	if w := get(t, h, "/play/nothing", nil); w.Code != 404 {
		t.Errorf("/play/nothing: %d", w.Code)
	}
}

type overviewSource struct{}

func (overviewSource) Overview() host.Overview { return host.Overview{} }

// TestStatusTokenGuardsPlay: mounted on the status routes, /play and its
// files, and the recordings, ask for the status token when one is set,
// like the status page.
func TestStatusTokenGuardsPlay(t *testing.T) {
	dir, _ := replayDir(t)
	h := web.Handler(overviewSource{}, web.Config{Token: "s3cret", Play: play.Handler(play.Config{Replays: dir})})
	for _, path := range []string{"/play", "/play/lockhost.wasm", "/play/play.js", "/play/replays", "/play/replays/rec-new-001.lhreplay"} {
		if w := get(t, h, path, nil); w.Code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d", path, w.Code)
		}
		r := httptest.NewRequest("GET", path, nil)
		r.SetBasicAuth("friend", "s3cret")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Errorf("%s with the token: %d", path, w.Code)
		}
	}
	open := web.Handler(overviewSource{}, web.Config{Play: play.Handler(play.Config{})})
	if w := get(t, open, "/play", nil); w.Code != 200 {
		t.Errorf("/play with no token set: %d", w.Code)
	}
}

// TestPlayerIsTheJoinLibrary: the WebAssembly player links the join
// library and the WebSocket dialer (it is the joining side, not a second
// client) and the typed commands the join tool reads, the replay package
// its viewer plays recordings with (the reader and checks host replay
// verify runs, and package saves for a recording's start save), and
// nothing of the host's side.
func TestPlayerIsTheJoinLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go tool")
	}
	const module = "github.com/lockhost/lockhost/"
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, want := range []string{"join", "transport/ws", "game/colony", "game/colonycmd", "replay", "syscall/js"} {
		if !slices.Contains(deps, want) && !slices.Contains(deps, module+want) {
			t.Errorf("the player does not link %s", want)
		}
	}
	for _, d := range deps {
		rel, ok := strings.CutPrefix(d, module)
		if ok && (rel == "host" || strings.HasPrefix(rel, "host/") || strings.HasPrefix(rel, "operator/web") || rel == "operator/play") {
			t.Errorf("the player links the host side's %s", rel)
		}
	}
}
