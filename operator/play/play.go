package play

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

//go:embed static/index.html static/play.js static/play.css static/wasm_exec.js static/lockhost.wasm.gz
var static embed.FS

// Path is where the page is served.
const Path = "/play"

// pageCSP lets the page run its own script and WebAssembly, and talk only
// to its own host (the WebSocket at /ws included).
const pageCSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the page and its files at Path and under it; mount it
// for both ("GET /play" and "GET /play/").
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, file("index.html", "text/html; charset=utf-8"))
	mux.HandleFunc("GET "+Path+"/play.js", file("play.js", "text/javascript; charset=utf-8"))
	mux.HandleFunc("GET "+Path+"/play.css", file("play.css", "text/css; charset=utf-8"))
	mux.HandleFunc("GET "+Path+"/wasm_exec.js", file("wasm_exec.js", "text/javascript; charset=utf-8"))
	mux.Handle("GET "+Path+"/lockhost.wasm", wasmHandler())
	return mux
}

// file serves one embedded file.
func file(name, ctype string) http.HandlerFunc {
	b, err := static.ReadFile("static/" + name)
	if err != nil {
		panic("play: " + err.Error()) // embedded: cannot be missing
	}
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", ctype)
		h.Set("Cache-Control", "no-cache")
		if name == "index.html" {
			h.Set("Content-Security-Policy", pageCSP)
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	}
}

// Wasm returns the embedded player, gzipped.
func Wasm() []byte {
	b, _ := static.ReadFile("static/lockhost.wasm.gz")
	return b
}

// RawSize is the uncompressed size of a gzip stream under 4 GiB, from
// its trailer.
func RawSize(gz []byte) uint32 {
	if len(gz) < 18 {
		return 0
	}
	return binary.LittleEndian.Uint32(gz[len(gz)-4:])
}

// wasmHandler serves the gzipped player as it is to a client that takes
// gzip, and inflated to one that does not; an ETag of the bytes lets a
// browser keep it until the host serves another.
func wasmHandler() http.Handler {
	gz := Wasm()
	sum := sha256.Sum256(gz)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	raw := strconv.FormatUint(uint64(RawSize(gz)), 10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/wasm")
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", etag)
		h.Set("Vary", "Accept-Encoding")
		h.Set("X-Uncompressed-Length", raw) // for the page's progress bar
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			h.Set("Content-Length", strconv.Itoa(len(gz)))
			_, _ = w.Write(gz)
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			http.Error(w, "the embedded player is damaged", http.StatusInternalServerError)
			return
		}
		_, _ = io.Copy(w, zr)
	})
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip (and
// does not refuse it with q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}
