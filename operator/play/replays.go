package play

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lockhost/lockhost/replay"
)

// Config says what the player's routes serve beyond the page. The zero
// value serves the page alone.
type Config struct {
	// Replays is the folder of the host's recordings (package replay):
	// the segments in it are listed at /play/replays and served at
	// /play/replays/NAME for the page's viewer (/play?replay=NAME).
	// Empty, or a folder that does not exist, lists none.
	Replays string
}

// Bounds of the recordings served.
const (
	// maxReplayName is the longest recording name served; the host's
	// names (rec-STAMP-NNN.lhreplay) are far shorter.
	maxReplayName = 128
	// maxListed is the most recordings the list holds, the newest first.
	maxListed = 1000
)

// replayJSON is one recording in the list.
type replayJSON struct {
	Name     string `json:"name"`
	Bytes    int64  `json:"bytes"`
	Modified string `json:"modified"` // RFC 3339, UTC
}

// ValidReplayName reports whether name may name a recording to serve: a
// plain file name in the recordings folder, of letters, digits, '-', '_'
// and '.', starting with a letter or digit, ending in replay.Ext, with no
// "..". Nothing else is looked up: no path, no hidden file, no other kind
// of file.
func ValidReplayName(name string) bool {
	if len(name) > maxReplayName || len(name) <= len(replay.Ext) || !strings.HasSuffix(name, replay.Ext) || strings.Contains(name, "..") {
		return false
	}
	for i, c := range []byte(name) {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '-' && c != '_' && c != '.') {
			return false
		}
	}
	return true
}

// replays serves the recordings of one folder.
type replays struct{ dir string }

// list answers /play/replays: the recordings, newest first, as JSON.
func (rp replays) list(w http.ResponseWriter, _ *http.Request) {
	out := []replayJSON{}
	if rp.dir != "" {
		entries, err := os.ReadDir(rp.dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			http.Error(w, "the recordings cannot be listed", http.StatusInternalServerError)
			return
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !ValidReplayName(e.Name()) {
				continue // a link, a folder or a name never served
			}
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile (rotation)
			}
			out = append(out, replayJSON{Name: e.Name(), Bytes: info.Size(), Modified: info.ModTime().UTC().Format(time.RFC3339)})
		}
	}
	slices.SortFunc(out, func(a, b replayJSON) int {
		if c := strings.Compare(b.Modified, a.Modified); c != 0 {
			return c
		}
		return strings.Compare(b.Name, a.Name)
	})
	if len(out) > maxListed {
		out = out[:maxListed]
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"replays": out})
}

// file answers /play/replays/NAME: the recording's bytes, ranges and HEAD
// by http.ServeContent. The name is checked first, then opened through an
// os.Root of the folder, so neither a name nor a link leads out of it.
func (rp replays) file(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if rp.dir == "" || !ValidReplayName(name) {
		http.Error(w, "no such recording", http.StatusNotFound)
		return
	}
	root, err := os.OpenRoot(rp.dir)
	if err != nil {
		http.Error(w, "no such recording", http.StatusNotFound)
		return
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		http.Error(w, "no such recording", http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		http.Error(w, "no such recording", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, name, st.ModTime(), f)
}
