package host

import (
	"log/slog"
	"time"

	"github.com/lockhost/lockhost/saves"
)

// tokenFile writes the session tokens beside the save (saves.TokensPath)
// whenever they change, so a host restarted from its save, after a clean
// stop or a crash (kill -9 included), lets its players rejoin as
// themselves. The session goroutine hands it the newest table (put) and
// never waits for the disk: its own goroutine (run) writes, and a table
// not yet written is replaced by a newer one.
type tokenFile struct {
	path    string
	log     *slog.Logger
	next    chan saves.Tokens // one slot: the newest table not yet written
	done    chan struct{}
	failing string // the last write's error, logged once until it changes
}

func newTokenFile(path string, log *slog.Logger) *tokenFile {
	return &tokenFile{path: path, log: log, next: make(chan saves.Tokens, 1), done: make(chan struct{})}
}

// put hands the writer t, in place of a table it has not taken yet. Only
// the session goroutine calls it, so the slot it empties stays empty.
func (f *tokenFile) put(t saves.Tokens) {
	select {
	case f.next <- t:
		return
	default:
	}
	select {
	case <-f.next:
	default:
	}
	f.next <- t
}

// run writes the tables put until close.
func (f *tokenFile) run() {
	defer close(f.done)
	for t := range f.next {
		err := saves.WriteTokens(f.path, t)
		switch {
		case err != nil && err.Error() != f.failing:
			f.failing = err.Error()
			f.log.Warn("the session tokens could not be kept beside the save; after a restart players join afresh", "err", err)
		case err == nil && f.failing != "":
			f.failing = ""
			f.log.Info("the session tokens are kept again", "path", f.path)
		}
	}
}

// close writes what was put last and stops the writer.
func (f *tokenFile) close() {
	close(f.next)
	<-f.done
}

// restoreTokens restores the tokens kept beside the save when the world
// was loaded from it, and marks them to be written (an empty table when
// the world is new: another world's tokens are no one's here). It returns
// the highest player ID handed out before.
func (s *session) restoreTokens(now time.Time) int32 {
	if s.tokenFile == nil {
		return 0
	}
	s.rejoins.dirty = true
	if !s.cfg.Save.Resumed {
		return 0
	}
	t, err := saves.ReadTokens(s.tokenFile.path)
	if err != nil {
		s.cfg.Logger.Warn("the session tokens kept beside the save cannot be read; players join afresh", "err", err)
		return 0
	}
	s.rejoins.restore(t, now)
	s.cfg.Logger.Info("session tokens restored", "path", s.tokenFile.path, "tokens", len(s.rejoins.tokens), "last_player_id", t.LastID)
	return t.LastID
}

// persistTokens hands the tokens file the tokens if they changed.
// Session goroutine only.
func (s *session) persistTokens() {
	if s.tokenFile == nil || !s.rejoins.dirty {
		return
	}
	s.tokenFile.put(s.rejoins.snapshot(s.lastID.Load()))
}
