package host

import (
	"sync"
	"sync/atomic"
	"time"
)

// autosave paces the saves (save.go writes them) and remembers how they
// went. The session goroutine owns it: it decides when a save is due and
// freezes what it needs. The one save at a time being written runs on its
// own goroutine, which clears busy (hence an atomic) and is counted by
// writing, so the final save can wait for it; state is behind a lock
// because that goroutine and FinalSave's caller both use it.
type autosave struct {
	path  string        // Config.Save.Path ("" saves nothing)
	every time.Duration // Config.Save.Every (0 or less: no autosaves)

	busy    atomic.Bool    // an autosave is being written
	writing sync.WaitGroup // the autosave being written, if any
	state   saveState      // how the last saves went
	last    time.Time      // when the last autosave was due
}

// due reports whether an autosave is due at now. The first call only
// starts the clock.
func (a *autosave) due(now time.Time) bool {
	if a.path == "" || a.every <= 0 {
		return false
	}
	if a.last.IsZero() {
		a.last = now
		return false
	}
	if now.Sub(a.last) < a.every {
		return false
	}
	a.last = now
	return true
}
