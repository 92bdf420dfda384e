package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/atomicfile"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
)

// SaveConfig says where and how often the session is saved. The zero value
// saves nothing.
type SaveConfig struct {
	// Path is the save file; autosaves go beside it. Empty disables saving.
	// The session tokens are kept beside it too (saves.TokensPath), as
	// they change, so players rejoin as themselves after a restart.
	Path string
	// Resumed says the world was loaded from Path (or its autosaves): the
	// session tokens kept beside it are restored. Otherwise they belong
	// to another world and are discarded.
	Resumed bool
	// Every is the autosave interval (default 5 min; negative disables
	// autosaves but keeps the final save).
	Every time.Duration
	// Keep is how many autosaves are kept (default 5).
	Keep int
	// Meta returns the static part of a save's description (game name,
	// version, mods, def databases); the host fills in tick and time.
	Meta func() saves.Meta
	// Write writes one save (default saves.Write). Tests and tools replace
	// it to see what a full disk does.
	Write func(path string, meta saves.Meta, body *snapshot.Payload) error
}

// saveJob is one save to write, prepared on the session goroutine.
type saveJob struct {
	point   *joinPoint
	granted uint64
	cmds    []snapshot.MapCommands
	path    string
	final   bool
	manual  bool // asked for (admin save): leaves the autosaves alone
}

// startSave freezes what a save needs on the session goroutine (the
// current join point, or a new one, and the commands since it) and writes
// it on another goroutine, unless a save is already being written. The
// final save waits for any save in progress and is written before return.
func (s *session) startSave(final bool) {
	sc := s.cfg.Save
	if sc.Path == "" || !s.mode.saves() {
		return
	}
	if final {
		s.autosave.writing.Wait()
	} else if !s.autosave.busy.CompareAndSwap(false, true) {
		return
	}
	point, err := s.points.ensure(s.auth)
	if err != nil {
		s.saveFailed(SaveRecord{Path: sc.Path, Tick: s.auth.Sim().Tick(), Final: final}, fmt.Errorf("cut: %w", err))
		s.autosave.busy.Store(false)
		return
	}
	job := saveJob{point: point, granted: s.auth.Sim().Tick(), cmds: s.queuedCommands(), path: sc.Path, final: final}
	if !final {
		job.path = saves.AutosavePath(sc.Path, job.granted)
	}
	if final {
		s.writeSave(job)
		return
	}
	s.autosave.writing.Add(1)
	go func() {
		defer s.autosave.writing.Done()
		defer s.autosave.busy.Store(false)
		s.writeSave(job)
	}()
}

// writeSave builds the join point if needed and writes the file. Errors
// are reported (and returned) and the session goes on.
func (s *session) writeSave(job saveJob) error {
	start := time.Now()
	rec := SaveRecord{Path: job.path, Tick: job.granted, Final: job.final}
	body, meta, err := s.saveBody(job)
	if err != nil {
		s.saveFailed(rec, err)
		return err
	}
	err = s.cfg.Save.Write(job.path, meta, body)
	if err != nil && atomicfile.IsNoSpace(err) {
		// A full disk: the oldest autosave makes room (never the newest
		// valid one), and the save is tried once more.
		removed, perr := saves.MakeRoom(s.cfg.Save.Path)
		switch {
		case perr != nil:
			s.cfg.Logger.Warn("disk full, and no room could be made", "err", perr)
		case removed != "":
			s.cfg.Logger.Warn("disk full: deleted the oldest autosave to make room, saving again", "deleted", removed)
			err = s.cfg.Save.Write(job.path, meta, body)
		}
	}
	if err != nil {
		s.saveFailed(rec, err)
		return err
	}
	if !job.final && !job.manual {
		if err := saves.PruneAutosaves(s.cfg.Save.Path, s.cfg.Save.Keep); err != nil {
			s.cfg.Logger.Warn("prune autosaves", "err", err)
		}
	}
	d := time.Since(start)
	s.stats.saved(d)
	rec.At, rec.Bytes, rec.D = time.Now(), body.Total(), d
	s.pub.history.saved(rec)
	s.autosave.state.finished(rec)
	if s.autosave.state.recovered() {
		s.cfg.Logger.Info("saving works again", "path", job.path, "tick", job.granted)
	}
	s.cfg.Logger.Info("saved", "path", job.path, "tick", job.granted, "bytes", body.Total(), "ms", d.Milliseconds(), "final", job.final)
	return nil
}

// saveBody builds what a save of job holds: its join point compressed
// and laid out with the commands since it, and the meta. It runs off the
// session goroutine (Save.Meta must allow that).
func (s *session) saveBody(job saveJob) (*snapshot.Payload, saves.Meta, error) {
	var meta saves.Meta
	point, err := job.point.compressed(job.point.comp.Codec)
	if err != nil {
		return nil, meta, fmt.Errorf("build: %w", err)
	}
	body, err := snapshot.NewPayload(point, 0, job.granted, job.cmds)
	if err != nil {
		return nil, meta, fmt.Errorf("lay out: %w", err)
	}
	if s.cfg.Save.Meta != nil {
		meta = s.cfg.Save.Meta()
	}
	s.mode.saveMeta(&meta)
	meta.Tick, meta.Created = job.granted, time.Now().Unix()
	return body, meta, nil
}

func (s *session) saveFailed(rec SaveRecord, err error) {
	s.stats.saveFailed(err)
	rec.At, rec.Err = time.Now(), err.Error()
	s.pub.history.saved(rec)
	s.autosave.state.finished(rec)
	level, msg := slog.LevelError, "save failed; the session goes on and the previous save is untouched"
	switch {
	case rec.Final:
		msg = "final save failed; the previous saves are untouched"
	case !s.autosave.state.failedNew(err):
		// The same failure as last time: said once, not every autosave.
		level, msg = slog.LevelDebug, "autosave failed again"
	default:
		msg += fmt.Sprintf("; autosaves go on every %s, and this is logged again only when it changes", s.cfg.Save.Every)
	}
	s.cfg.Logger.Log(context.Background(), level, msg, "path", rec.Path, "err", err)
}

// saveState remembers how the last saves went, so a failure that repeats
// is logged once, and the final save's outcome can be asked for.
type saveState struct {
	mu      sync.Mutex
	failing string // the cause of the failure in force, "" when saving works
	wasBad  bool   // a failure was in force before the last success
	final   *SaveRecord
}

func (st *saveState) finished(rec SaveRecord) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if rec.Final {
		st.final = &rec
	}
	if rec.Err == "" {
		st.wasBad, st.failing = st.failing != "", ""
	}
}

// recovered reports whether the last success ended a failure.
func (st *saveState) recovered() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	bad := st.wasBad
	st.wasBad = false
	return bad
}

// failedNew records a failure and reports whether its cause differs from
// the one in force.
func (st *saveState) failedNew(err error) bool {
	cause := rootCause(err).Error()
	st.mu.Lock()
	defer st.mu.Unlock()
	changed := cause != st.failing
	st.failing = cause
	return changed
}

// rootCause is the innermost error of a chain (the errno of a path
// error): it stays the same from one autosave to the next while file
// names change.
func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// FinalSave is the outcome of the save written when the session ended,
// or nil if none was attempted (no save path, or the session still runs).
func (s *Server) FinalSave() *SaveRecord {
	s.sess.autosave.state.mu.Lock()
	defer s.sess.autosave.state.mu.Unlock()
	if s.sess.autosave.state.final == nil {
		return nil
	}
	rec := *s.sess.autosave.state.final
	return &rec
}
