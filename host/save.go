package host

import (
	"fmt"
	"time"

	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
)

// SaveConfig says where and how often the session is saved. The zero value
// saves nothing.
type SaveConfig struct {
	// Path is the save file; autosaves go beside it. Empty disables saving.
	Path string
	// Every is the autosave interval (default 5 min; negative disables
	// autosaves but keeps the final save).
	Every time.Duration
	// Keep is how many autosaves are kept (default 5).
	Keep int
	// Meta returns the static part of a save's description (game name,
	// version, mods, def databases); the host fills in tick and time.
	Meta func() saves.Meta
}

func (c SaveConfig) withDefaults() SaveConfig {
	if c.Every == 0 {
		c.Every = 5 * time.Minute
	}
	if c.Keep == 0 {
		c.Keep = 5
	}
	return c
}

// saveJob is one save to write, prepared on the session goroutine.
type saveJob struct {
	point   *joinPoint
	granted uint64
	cmds    []snapshot.MapCommands
	path    string
	final   bool
}

// startSave freezes what a save needs on the session goroutine (the
// current join point, or a new one, and the commands since it) and writes
// it on another goroutine, unless a save is already being written. The
// final save waits for any save in progress and is written before return.
func (s *session) startSave(final bool) {
	sc := s.cfg.Save
	if sc.Path == "" {
		return
	}
	if final {
		s.saving.Wait()
	} else if !s.saveBusy.CompareAndSwap(false, true) {
		return
	}
	if s.point == nil {
		if err := s.cutJoinPoint(); err != nil {
			s.saveFailed(SaveRecord{Path: sc.Path, Tick: s.auth.Sim().Tick(), Final: final}, fmt.Errorf("cut: %w", err))
			s.saveBusy.Store(false)
			return
		}
	}
	job := saveJob{point: s.point, granted: s.auth.Sim().Tick(), cmds: s.queuedCommands(), path: sc.Path, final: final}
	if !final {
		job.path = saves.AutosavePath(sc.Path, job.granted)
	}
	if final {
		s.writeSave(job)
		return
	}
	s.saving.Add(1)
	go func() {
		defer s.saving.Done()
		defer s.saveBusy.Store(false)
		s.writeSave(job)
	}()
}

// writeSave builds the join point if needed and writes the file. Errors
// are reported and the session goes on.
func (s *session) writeSave(job saveJob) {
	start := time.Now()
	rec := SaveRecord{Path: job.path, Tick: job.granted, Final: job.final}
	point, err := job.point.compressed(s.cfg.GzipLevel)
	if err != nil {
		s.saveFailed(rec, fmt.Errorf("build: %w", err))
		return
	}
	body, err := snapshot.NewPayload(point, 0, job.granted, job.cmds)
	if err != nil {
		s.saveFailed(rec, fmt.Errorf("lay out: %w", err))
		return
	}
	var meta saves.Meta
	if s.cfg.Save.Meta != nil {
		meta = s.cfg.Save.Meta()
	}
	meta.Tick, meta.Created = job.granted, time.Now().Unix()
	if err := saves.Write(job.path, meta, body); err != nil {
		s.saveFailed(rec, err)
		return
	}
	if !job.final {
		if err := saves.PruneAutosaves(s.cfg.Save.Path, s.cfg.Save.Keep); err != nil {
			s.cfg.Logger.Warn("prune autosaves", "err", err)
		}
	}
	d := time.Since(start)
	s.stats.saved(d)
	rec.At, rec.Bytes, rec.D = time.Now(), body.Total(), d
	s.history.saved(rec)
	s.cfg.Logger.Info("saved", "path", job.path, "tick", job.granted, "bytes", body.Total(), "ms", d.Milliseconds(), "final", job.final)
}

func (s *session) saveFailed(rec SaveRecord, err error) {
	s.stats.saveFailed(err)
	rec.At, rec.Err = time.Now(), err.Error()
	s.history.saved(rec)
	s.cfg.Logger.Error("save failed; the session goes on and the previous save is untouched", "err", err)
}
