package modsync

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
)

// ContentPrefix is the URL path under which a host serves shared files:
// GET ContentPrefix + hex SHA-256. ManifestPath serves the manifest.
const (
	ContentPrefix = "/content/"
	ManifestPath  = "/content/manifest"
)

// Handler serves a manifest built by Build and the files it lists:
//
//	GET|HEAD /content/manifest  the encoded manifest
//	GET|HEAD /content/<sha256>  a shared file, with Range (206) and If-Range
//
// Any other hash, one of a held-back mod or a file not shared, is 404:
// only what the manifest publishes can be read. A file is opened by the
// path Build found it at, inside its mod folder (no link leads out), and
// its size checked against the manifest's; it is not hashed again.
type Handler struct {
	manifest []byte
	etag     string
	files    map[Sum]source
	// Gate, when set, is asked before a file is served; it returns a
	// function to call when the response is done, or false to refuse
	// with 503 (upload slots and pacing shared with world transfer).
	// Without one, at most DefaultStreams files are served at once.
	Gate func(r *http.Request) (release func(), ok bool)
	// streams holds a token per file being served when Gate is nil.
	streams chan struct{}
	// Pace, when set, is called before each piece of at most PaceChunk
	// bytes of a response body is written, and returns once it may go
	// (the host's upload cap, shared with world transfer).
	Pace func(n int)
	// Sent counts the bytes of file bodies written.
	Sent atomic.Int64
	// budget is the bytes of the manifest and of every shared file.
	budget int64
}

// PaceChunk is the most a paced Handler writes at once.
const PaceChunk = 16 << 10

// ErrNotPublished is the error of a hash the manifest does not share.
var ErrNotPublished = errors.New("not a file the host shares")

// NewHandler returns the handler for a manifest made by Build. A
// manifest that was decoded rather than built has no files to serve.
func NewHandler(m *Manifest) (*Handler, error) {
	b, err := m.Encode()
	if err != nil {
		return nil, err
	}
	h := &Handler{manifest: b, files: map[Sum]source{}, streams: make(chan struct{}, DefaultStreams)}
	sum, _ := m.Hash()
	h.etag = `"` + sum.String() + `"`
	h.budget = int64(len(b))
	for _, d := range m.Mods {
		for _, f := range d.Files {
			if src, ok := m.sources[f.Hash]; ok {
				if _, dup := h.files[f.Hash]; !dup {
					h.budget += src.size
				}
				h.files[f.Hash] = src
			}
		}
	}
	return h, nil
}

// Manifest is the encoded manifest the handler publishes.
func (h *Handler) Manifest() []byte { return h.manifest }

// ManifestHash is the SHA-256 of Manifest.
func (h *Handler) ManifestHash() Sum { return sha256.Sum256(h.manifest) }

// Bytes is the size of the manifest and of every distinct shared file,
// all together: what one joiner may need at most.
func (h *Handler) Bytes() int64 { return h.budget }

// Open opens a shared file by its hash, as GET /content/<sha256> does:
// only a file the manifest publishes, inside its mod folder, whose size
// is still the manifest's (else ErrNotPublished, or an error saying it
// changed). It says whether the file is worth compressing (text, and
// image and sound formats not compressed themselves).
func (h *Handler) Open(s Sum) (f *os.File, size int64, compress bool, err error) {
	src, ok := h.files[s]
	if !ok {
		return nil, 0, false, ErrNotPublished
	}
	f, err = os.OpenInRoot(src.root, src.rel)
	if err != nil {
		return nil, 0, false, fmt.Errorf("shared file %s: %w", src.rel, err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() != src.size {
		f.Close()
		return nil, 0, false, fmt.Errorf("shared file %s changed since it was published", src.rel)
	}
	return f, src.size, compressible(src.rel), nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Path == ManifestPath {
		w.Header().Set("ETag", h.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.manifest))
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, ContentPrefix)
	sum, err := ParseSum(name)
	src, published := h.files[sum]
	if !ok || err != nil || !published {
		http.NotFound(w, r)
		return
	}
	gate := h.Gate
	if gate == nil {
		gate = h.stream
	}
	release, ok := gate(r)
	if !ok {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	defer release()
	f, err := os.OpenInRoot(src.root, src.rel)
	if err != nil {
		http.Error(w, "shared file unavailable", http.StatusGone)
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() != src.size {
		http.Error(w, "shared file changed since it was published", http.StatusGone)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	cw := &countingWriter{ResponseWriter: w, n: &h.Sent, pace: h.Pace}
	if compressible(src.rel) {
		w.Header().Set("Vary", "Accept-Encoding")
		if r.Header.Get("Range") == "" && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			serveGzip(cw, r, f)
			return
		}
	}
	w.Header().Set("ETag", `"`+name+`"`)
	http.ServeContent(cw, r, "", time.Time{}, f)
}

// compressibleExts are the extensions of files sent gzip-compressed to a
// joiner that asks for it: text, and image and sound formats that are
// not compressed themselves.
var compressibleExts = map[string]bool{
	".xml": true, ".txt": true, ".json": true, ".csv": true, ".md": true,
	".dds": true, ".tga": true, ".bmp": true, ".psd": true, ".wav": true,
}

func compressible(p string) bool { return compressibleExts[strings.ToLower(path.Ext(p))] }

// acceptsGzip reports whether an Accept-Encoding header accepts gzip.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		token, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(token), "gzip") {
			continue
		}
		q := strings.TrimSpace(params)
		return !strings.HasPrefix(q, "q=0") || strings.Trim(strings.TrimPrefix(q, "q=0"), ".0") != ""
	}
	return false
}

// serveGzip sends a whole file gzip-compressed (no Content-Length: its
// compressed size is not known ahead).
func serveGzip(w http.ResponseWriter, r *http.Request, f io.Reader) {
	w.Header().Set("Content-Encoding", "gzip")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if _, err := io.Copy(zw, f); err != nil {
		panic(http.ErrAbortHandler)
	}
	if err := zw.Close(); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// DefaultStreams is how many files a Handler without a Gate serves at
// once; more requests are answered 503.
const DefaultStreams = 4

// stream is the gate of a Handler without one: a slot of DefaultStreams.
func (h *Handler) stream(*http.Request) (func(), bool) {
	select {
	case h.streams <- struct{}{}:
		return func() { <-h.streams }, true
	default:
		return nil, false
	}
}

// countingWriter counts body bytes written, paced when pace is set.
type countingWriter struct {
	http.ResponseWriter
	n    *atomic.Int64
	pace func(n int)
}

// Write counts what the response took, PaceChunk at a time when paced.
func (c *countingWriter) Write(b []byte) (int, error) {
	if c.pace == nil {
		n, err := c.ResponseWriter.Write(b)
		c.n.Add(int64(n))
		return n, err
	}
	done := 0
	for done < len(b) {
		piece := b[done:min(len(b), done+PaceChunk)]
		c.pace(len(piece))
		n, err := c.ResponseWriter.Write(piece)
		c.n.Add(int64(n))
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// URL is the address of the file with hash s on a host whose HTTP
// listener is base ("http://host:port").
func URL(base string, s Sum) string {
	return fmt.Sprintf("%s%s%s", strings.TrimRight(base, "/"), ContentPrefix, s)
}
