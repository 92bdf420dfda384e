package play

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// TestWasmInflatedOnce: HEAD and a range-less conditional request do not
// inflate the player; many concurrent GETs that take no gzip inflate it
// once between them.
func TestWasmInflatedOnce(t *testing.T) {
	f := newWasmFile(Wasm())
	serve := func(method string) int {
		r := httptest.NewRequest(method, "/play/lockhost.wasm", nil)
		w := httptest.NewRecorder()
		f.ServeHTTP(w, r)
		return w.Code
	}
	for range 3 {
		if code := serve("HEAD"); code != http.StatusOK {
			t.Fatalf("HEAD: %d", code)
		}
	}
	if n := f.inflation.Load(); n != 0 {
		t.Fatalf("HEAD inflated the player %d times", n)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if code := serve("GET"); code != http.StatusOK {
				t.Errorf("GET: %d", code)
			}
		})
	}
	wg.Wait()
	if n := f.inflation.Load(); n != 1 {
		t.Fatalf("8 GETs inflated the player %d times, want 1", n)
	}
}
