package play_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/lockhost/lockhost/operator/play"
)

// plainRequest asks for the player as a client that takes no gzip.
func plainRequest(method string, header map[string]string) *http.Request {
	r := httptest.NewRequest(method, "/play/lockhost.wasm", nil)
	r.Header.Set("Accept-Encoding", "identity")
	for k, v := range header {
		r.Header.Set(k, v)
	}
	return r
}

// TestWasmPlainHeadAndRange: to a client that takes no gzip, HEAD
// answers the inflated size with no body, and a Range request gets the
// bytes asked for (206), as http.ServeContent serves them.
func TestWasmPlainHeadAndRange(t *testing.T) {
	h := play.Handler(play.Config{})
	size := int(play.RawSize(play.Wasm()))
	head := httptest.NewRecorder()
	h.ServeHTTP(head, plainRequest("HEAD", nil))
	if head.Code != 200 || head.Header().Get("Content-Length") != strconv.Itoa(size) || head.Body.Len() != 0 ||
		head.Header().Get("Content-Encoding") != "" {
		t.Fatalf("HEAD: %d, Content-Length %q (want %d), %d bytes of body, headers %v",
			head.Code, head.Header().Get("Content-Length"), size, head.Body.Len(), head.Header())
	}
	last := strconv.Itoa(size-8) + "-" + strconv.Itoa(size-1)
	for _, tc := range []struct {
		rng, contentRange string
		want              []byte // nil: any bytes of the length
	}{
		{"bytes=0-3", "bytes 0-3/" + strconv.Itoa(size), []byte("\x00asm")},
		{"bytes=4-7", "bytes 4-7/" + strconv.Itoa(size), nil},
		{"bytes=-8", "bytes " + last + "/" + strconv.Itoa(size), nil},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, plainRequest("GET", map[string]string{"Range": tc.rng}))
		if w.Code != http.StatusPartialContent || w.Header().Get("Content-Range") != tc.contentRange || w.Body.Len() > 8 {
			t.Fatalf("Range %s: %d, Content-Range %q, %d bytes; want 206 %q", tc.rng, w.Code, w.Header().Get("Content-Range"), w.Body.Len(), tc.contentRange)
		}
		if tc.want != nil && !bytes.Equal(w.Body.Bytes(), tc.want) {
			t.Fatalf("Range %s: %q, want %q", tc.rng, w.Body.Bytes(), tc.want)
		}
	}
}

// BenchmarkWasmPlain serves the player to a client that takes no gzip:
// the host's CPU per such request.
func BenchmarkWasmPlain(b *testing.B) {
	h := play.Handler(play.Config{})
	for _, method := range []string{"GET", "HEAD"} {
		b.Run(method, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := &discard{h: http.Header{}}
				h.ServeHTTP(w, plainRequest(method, nil))
				if w.code != 200 {
					b.Fatalf("status %d", w.code)
				}
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing of the body.
type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
func (d *discard) Write(b []byte) (int, error) {
	d.WriteHeader(200)
	return io.Discard.Write(b)
}
