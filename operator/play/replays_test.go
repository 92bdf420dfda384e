package play_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/operator/play"
)

func TestValidReplayName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"rec-20260101-120000-001.lhreplay", true},
		{"a.lhreplay", true},
		{"A_b-c.1.lhreplay", true},
		{".lhreplay", false},
		{".hidden.lhreplay", false},
		{"-a.lhreplay", false},
		{"a..b.lhreplay", false},
		{"../a.lhreplay", false},
		{"a/b.lhreplay", false},
		{`a\b.lhreplay`, false},
		{"a b.lhreplay", false},
		{"a%2fb.lhreplay", false},
		{"a.lhsave", false},
		{"a.lhreplay.tmp", false},
		{"a\x00.lhreplay", false},
		{string(bytes.Repeat([]byte("a"), 120)) + ".lhreplay", false},
		{"", false},
	} {
		if got := play.ValidReplayName(tc.name); got != tc.ok {
			t.Errorf("ValidReplayName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// replayDir makes a recordings folder: two recordings, a file of another
// kind, a hidden one, a folder, a link out of it, and a secret beside it.
func replayDir(t *testing.T) (string, []byte) {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "replays")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 5000)
	for i := range body {
		body[i] = byte(i * 7)
	}
	write := func(path string, b []byte, at time.Time) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	write(filepath.Join(dir, "rec-old-001.lhreplay"), []byte("old"), old)
	write(filepath.Join(dir, "rec-new-001.lhreplay"), body, old.Add(time.Hour))
	write(filepath.Join(dir, "notes.txt"), []byte("x"), old)
	write(filepath.Join(dir, ".hidden.lhreplay"), []byte("x"), old)
	write(filepath.Join(top, "secret.lhreplay"), []byte("secret"), old)
	if err := os.Mkdir(filepath.Join(dir, "sub.lhreplay"), 0o755); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(filepath.Join(top, "secret.lhreplay"), filepath.Join(dir, "link.lhreplay")); err != nil {
			t.Fatal(err)
		}
	}
	return dir, body
}

// TestReplaysList: the list holds the recordings alone, newest first.
func TestReplaysList(t *testing.T) {
	dir, body := replayDir(t)
	for _, tc := range []struct {
		name, dir string
		want      []string
	}{
		{"a folder", dir, []string{"rec-new-001.lhreplay", "rec-old-001.lhreplay"}},
		{"no folder yet", filepath.Join(dir, "none"), nil},
		{"none configured", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, play.Handler(play.Config{Replays: tc.dir}), "/play/replays", nil)
			if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("%d %v: %s", w.Code, w.Header(), w.Body)
			}
			var got struct {
				Replays []struct {
					Name     string `json:"name"`
					Bytes    int64  `json:"bytes"`
					Modified string `json:"modified"`
				} `json:"replays"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Replays == nil {
				t.Fatalf("%v: %s", err, w.Body)
			}
			if len(got.Replays) != len(tc.want) {
				t.Fatalf("listed %+v, want %v", got.Replays, tc.want)
			}
			for i, r := range got.Replays {
				if r.Name != tc.want[i] {
					t.Fatalf("listed %+v, want %v", got.Replays, tc.want)
				}
			}
			if len(tc.want) > 0 && (got.Replays[0].Bytes != int64(len(body)) || got.Replays[0].Modified != "2026-01-02T04:04:05Z") {
				t.Fatalf("first: %+v", got.Replays[0])
			}
		})
	}
}

// TestReplaysServed: a recording is served whole, by range and to HEAD;
// every name that is not a recording's in the folder is refused, links
// and paths out of it included.
func TestReplaysServed(t *testing.T) {
	dir, body := replayDir(t)
	h := play.Handler(play.Config{Replays: dir})
	whole := get(t, h, "/play/replays/rec-new-001.lhreplay", nil)
	if whole.Code != 200 || !bytes.Equal(whole.Body.Bytes(), body) || whole.Header().Get("Content-Type") != "application/octet-stream" ||
		whole.Header().Get("Accept-Ranges") != "bytes" {
		t.Fatalf("whole: %d %v, %d bytes", whole.Code, whole.Header(), whole.Body.Len())
	}
	part := get(t, h, "/play/replays/rec-new-001.lhreplay", map[string]string{"Range": "bytes=100-199"})
	if part.Code != http.StatusPartialContent || !bytes.Equal(part.Body.Bytes(), body[100:200]) ||
		part.Header().Get("Content-Range") != "bytes 100-199/5000" {
		t.Fatalf("range: %d %v, %d bytes", part.Code, part.Header(), part.Body.Len())
	}
	tail := get(t, h, "/play/replays/rec-new-001.lhreplay", map[string]string{"Range": "bytes=-10"})
	if tail.Code != http.StatusPartialContent || !bytes.Equal(tail.Body.Bytes(), body[len(body)-10:]) {
		t.Fatalf("suffix range: %d, %d bytes", tail.Code, tail.Body.Len())
	}
	if bad := get(t, h, "/play/replays/rec-new-001.lhreplay", map[string]string{"Range": "bytes=6000-"}); bad.Code != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("range past the end: %d", bad.Code)
	}
	r := httptest.NewRequest("HEAD", "/play/replays/rec-new-001.lhreplay", nil)
	head := httptest.NewRecorder()
	h.ServeHTTP(head, r)
	if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") != "5000" {
		t.Fatalf("HEAD: %d %v, %d bytes", head.Code, head.Header(), head.Body.Len())
	}
	for _, path := range []string{
		"/play/replays/none.lhreplay",
		"/play/replays/notes.txt",
		"/play/replays/.hidden.lhreplay",
		"/play/replays/sub.lhreplay",
		"/play/replays/link.lhreplay",
		"/play/replays/..%2fsecret.lhreplay",
		"/play/replays/%2e%2e%2fsecret.lhreplay",
		"/play/replays/..%5csecret.lhreplay",
		"/play/replays/%2fetc%2fpasswd",
		"/play/replays/../secret.lhreplay",
		"/play/replays/rec-new-001.lhreplay%00",
	} {
		w := get(t, h, path, nil)
		if w.Code/100 == 3 { // the mux cleans a path with ".." by a redirect: to outside the recordings
			if loc := w.Header().Get("Location"); strings.HasPrefix(loc, "/play/replays/") {
				t.Errorf("%s: redirected to %s", path, loc)
			}
			continue
		}
		if w.Code == 200 || w.Code == http.StatusPartialContent || bytes.Contains(w.Body.Bytes(), []byte("secret")) {
			t.Errorf("%s: %d, %q", path, w.Code, w.Body.Bytes())
		}
	}
	if w := get(t, play.Handler(play.Config{}), "/play/replays/rec-new-001.lhreplay", nil); w.Code != http.StatusNotFound {
		t.Fatalf("no folder configured: %d", w.Code)
	}
}
