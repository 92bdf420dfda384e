package play

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// Handler serves the page and its files at Path and under it, and the
// recordings cfg names; mount it for both ("GET /play" and "GET /play/").
func Handler(cfg Config) http.Handler {
	mux := http.NewServeMux()
	rp := replays{dir: cfg.Replays}
	mux.HandleFunc("GET "+Path+"/replays", rp.list)
	mux.HandleFunc("GET "+Path+"/replays/{name}", rp.file)
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
	return newWasmFile(Wasm())
}

// wasmFile is the player served from its gzipped bytes. The inflated
// bytes are made once, by the first request that reads them (HEAD and
// conditional requests do not: the size is in the gzip trailer), and
// kept.
type wasmFile struct {
	gz      []byte
	etag    string
	rawSize int64

	once      sync.Once
	raw       []byte
	rawErr    error
	inflation atomic.Int32 // how many times the bytes were inflated: at most once
}

func newWasmFile(gz []byte) *wasmFile {
	sum := sha256.Sum256(gz)
	return &wasmFile{gz: gz, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, rawSize: int64(RawSize(gz))}
}

func (f *wasmFile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/wasm")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Uncompressed-Length", strconv.FormatInt(f.rawSize, 10)) // for the page's progress bar
	if r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(f.gz)))
		if r.Method != http.MethodHead {
			_, _ = w.Write(f.gz)
		}
		return
	}
	// ServeContent answers HEAD and ranges; it reads (and so inflates)
	// only for a body.
	http.ServeContent(w, r, "lockhost.wasm", time.Time{}, &lazyReader{size: f.rawSize, load: f.inflated})
}

// inflated returns the inflated player, inflating it on the first call.
func (f *wasmFile) inflated() ([]byte, error) {
	f.once.Do(func() {
		f.inflation.Add(1)
		zr, err := gzip.NewReader(bytes.NewReader(f.gz))
		if err != nil {
			f.rawErr = fmt.Errorf("the embedded player is damaged: %w", err)
			return
		}
		raw := make([]byte, 0, f.rawSize) // the trailer's size, of bytes we embedded
		buf := bytes.NewBuffer(raw)
		if _, err := io.Copy(buf, zr); err != nil {
			f.rawErr = fmt.Errorf("the embedded player is damaged: %w", err)
			return
		}
		f.raw = buf.Bytes()
	})
	return f.raw, f.rawErr
}

// lazyReader is an io.ReadSeeker over bytes of a known size that load
// makes at the first Read; Seek alone does not make them.
type lazyReader struct {
	size int64
	load func() ([]byte, error)
	off  int64
}

func (l *lazyReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += l.off
	case io.SeekEnd:
		offset += l.size
	default:
		return 0, errors.New("lazyReader: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("lazyReader: negative position")
	}
	l.off = offset
	return offset, nil
}

func (l *lazyReader) Read(p []byte) (int, error) {
	b, err := l.load()
	if err != nil {
		return 0, err
	}
	if int64(len(b)) != l.size {
		return 0, fmt.Errorf("the embedded player inflates to %d bytes, not the %d its trailer says", len(b), l.size)
	}
	if l.off >= l.size {
		return 0, io.EOF
	}
	n := copy(p, b[l.off:])
	l.off += int64(n)
	return n, nil
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
