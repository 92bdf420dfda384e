package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/replay"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/wire"
)

// RecordConfig says whether and where the session is recorded (package
// replay): a start save, then every command stamped and every checkpoint
// taken, in segments of bounded size. The zero value records nothing.
type RecordConfig struct {
	// Dir is the folder the segments are written to; empty records
	// nothing. A relay host begins recording once its arbiter has
	// uploaded the world, and records the arbiter's join points, the
	// commands and the arbiter's (or the players' majority) checkpoints:
	// the game replays such a recording itself (docs/protocol.md
	// section 16).
	Dir string
	// SegmentBytes is how many bytes of commands and checkpoints a
	// segment holds after its start save before the host begins a new
	// segment, from a new start save (default 64 MiB: at 100 commands a
	// second, about ten hours).
	SegmentBytes int64
	// Keep is how many segments stay in Dir, the oldest removed first
	// (default 24).
	Keep int
	// Version is the host's version, written in each segment's header.
	Version string
}

// defaultRecord is DefaultConfig's recording: off, and when on, segments
// of 64 MiB, 24 kept.
func defaultRecord() RecordConfig {
	return RecordConfig{SegmentBytes: 64 << 20, Keep: 24}
}

// recordQueue is how many events (a tick's commands, a checkpoint) may
// wait for the recorder's goroutine: over a minute of ticks. A disk so
// slow that it fills stops the recording, never the tick.
const recordQueue = 4096

// recorder writes the session's recording on a goroutine of its own.
// The session goroutine owns the recorder value and hands it events over
// a bounded channel; the goroutine alone touches the segment being
// written, and tells the session through an atomic when the segment is
// full (rotate) or the recording has failed (broken).
type recorder struct {
	cfg    RecordConfig
	header replay.Header // the fields every segment shares
	events chan recEvent
	done   chan struct{}
	rotate atomic.Bool // the segment is past SegmentBytes: cut a new start
	broken atomic.Bool // the recording stopped; nothing more is sent
	once   sync.Once
	// segment numbers the segments; written by the session goroutine
	// only (when it cuts a start).
	segment int
	stamp   string // the recording's start, in every segment's name
}

// recEvent is one thing to record: exactly one of its parts is set.
type recEvent struct {
	cmds    []lockstep.Command // stamped since the last event
	to      uint64             // the tick the session stood at
	speed   uint8
	cp      *lockstep.Checkpoint
	start   *recStart // a new segment from this save
	stopped bool      // the session stopped at tick to
}

// recStart is a new segment: the save it starts from, written by the
// recorder's goroutine.
type recStart struct {
	job  saveJob
	save func(path string) error // writes job's save to path
}

// startRecording starts the recorder, if the configuration asks for
// one, and its first segment once the session has a world (a relay
// session's comes with its arbiter's upload: see recordTick).
func (s *session) startRecording() {
	rc := s.cfg.Record
	if rc.Dir == "" {
		return
	}
	if err := os.MkdirAll(rc.Dir, 0o755); err != nil {
		s.cfg.Logger.Error("recording: cannot make its folder; the session is not recorded", "dir", rc.Dir, "err", err)
		return
	}
	s.rec = &recorder{
		cfg: rc,
		header: replay.Header{Game: s.cfg.GameName, Version: rc.Version, Protocol: wire.ProtocolVersion, TickRate: s.cfg.TickRate,
			Relay: s.relay != nil},
		events: make(chan recEvent, recordQueue),
		done:   make(chan struct{}),
		stamp:  time.Now().UTC().Format("20060102T150405Z"),
	}
	go s.rec.run(s)
	if s.mode.saves() {
		s.cutRecording()
	}
}

// cutRecording begins a segment at the session's current tick: the join
// point as it stands now and the commands since it, saved off the session
// goroutine by the recorder.
func (s *session) cutRecording() {
	r := s.rec
	point, err := s.points.ensure(s.auth)
	if err != nil {
		r.fail(s, fmt.Errorf("cut a start: %w", err))
		return
	}
	r.segment++
	job := saveJob{point: point, granted: s.auth.Sim().Tick(), cmds: s.queuedCommands()}
	r.rotate.Store(false)
	r.send(s, recEvent{start: &recStart{job: job, save: func(path string) error {
		body, meta, err := s.saveBody(job)
		if err != nil {
			return err
		}
		return saves.Write(path, meta, body)
	}}})
}

// recordTick hands the recorder a tick's stamped commands.
func (s *session) recordTick(res lockstep.TickResult) {
	if s.rec == nil || s.rec.broken.Load() {
		return
	}
	if s.rec.segment == 0 {
		// No world yet (a relay session before its arbiter's upload):
		// the first segment starts from the first state there is.
		if s.mode.saves() {
			s.cutRecording()
		}
		return
	}
	if len(res.Accepted) > 0 || res.Stepped {
		s.rec.send(s, recEvent{cmds: res.Accepted, to: s.auth.Sim().Tick(), speed: s.auth.Speed()})
	}
	// A new segment starts after this tick's commands, which the old one
	// holds, and from the state they and the step made.
	if res.Stepped && s.rec.rotate.Load() && !s.rec.broken.Load() {
		s.cutRecording()
	}
}

// recordCheckpoint hands the recorder a checkpoint.
func (s *session) recordCheckpoint(cp lockstep.Checkpoint) {
	if s.rec == nil || s.rec.broken.Load() || s.rec.segment == 0 {
		return
	}
	s.rec.send(s, recEvent{cp: &cp})
}

// stopRecording ends the segment at the session's tick and waits for the
// recorder to close it.
func (s *session) stopRecording() {
	if s.rec == nil {
		return
	}
	if !s.rec.broken.Load() {
		select {
		case s.rec.events <- recEvent{stopped: true, to: s.auth.Sim().Tick()}:
		case <-time.After(10 * time.Second):
			s.cfg.Logger.Warn("recording: the disk fell behind at shutdown; the last segment ends without its end frame")
		}
	}
	s.rec.once.Do(func() { close(s.rec.events) })
	<-s.rec.done
}

// send queues an event without ever blocking the session: a full queue
// stops the recording.
func (r *recorder) send(s *session, ev recEvent) {
	select {
	case r.events <- ev:
	default:
		r.fail(s, errors.New("the disk fell behind the session (the recorder's queue is full)"))
	}
}

// fail stops the recording for good: said once, in the log.
func (r *recorder) fail(s *session, err error) {
	if r.broken.CompareAndSwap(false, true) {
		s.cfg.Logger.Error("recording stopped; the segments written so far replay up to where they end", "err", err)
	}
}

// run is the recorder's goroutine: it writes events to the segment in
// hand, batching commands into a frame a second, until the session stops.
func (r *recorder) run(s *session) {
	defer close(r.done)
	var (
		w       *replay.Writer
		pending []lockstep.Command
		to      uint64
		speed   uint8
		dirty   bool // commands or ticks not yet in a frame
		asked   bool // a new segment was asked for since w began
	)
	flush := func() {
		if w != nil && dirty {
			if err := w.Commands(pending, to, speed); err != nil {
				r.fail(s, err)
			}
			pending, dirty = pending[:0], false
		}
	}
	for ev := range r.events {
		switch {
		case r.broken.Load():
			continue
		case ev.start != nil:
			flush()
			next, err := r.begin(ev.start, r.header)
			if w != nil {
				if cerr := w.Close(ev.start.job.granted, replay.EndRotated); cerr != nil && err == nil {
					err = cerr
				}
			}
			w, asked = next, false
			if err != nil {
				r.fail(s, err)
				continue
			}
			r.prune(s)
		case ev.cp != nil:
			flush()
			if w != nil {
				if err := w.Checkpoint(*ev.cp); err != nil {
					r.fail(s, err)
				}
			}
		case ev.stopped:
			to = max(to, ev.to)
			flush()
			if w != nil {
				if err := w.Close(to, replay.EndStopped); err != nil {
					r.fail(s, err)
				}
				w = nil
			}
		default:
			pending = append(pending, ev.cmds...)
			to, speed, dirty = ev.to, ev.speed, true
			if w != nil && (len(pending) >= 4096 || to-w.From() >= uint64(max(1, r.header.TickRate))) {
				flush()
			}
		}
		// Once per segment: the events queued before the new start still
		// go to this one.
		if w != nil && !asked && w.Recorded() > r.cfg.SegmentBytes {
			r.rotate.Store(true)
			asked = true
		}
	}
	if w != nil {
		flush()
		_ = w.Abort()
	}
}

// begin writes a segment's start save beside it and starts the segment
// file from it; the save is removed once copied in.
func (r *recorder) begin(st *recStart, h replay.Header) (*replay.Writer, error) {
	h.Segment, h.Started, h.StartTick = r.segment, time.Now().UnixMilli(), st.job.granted
	name := fmt.Sprintf("rec-%s-%03d%s", r.stamp, h.Segment, replay.Ext)
	save := filepath.Join(r.cfg.Dir, "."+name+".start"+saves.Ext)
	defer os.Remove(save)
	if err := st.save(save); err != nil {
		return nil, fmt.Errorf("start save: %w", err)
	}
	return replay.Create(filepath.Join(r.cfg.Dir, name), h, save)
}

// prune removes the oldest segments beyond Keep: only files named as the
// recorder names them.
func (r *recorder) prune(s *session) {
	entries, err := os.ReadDir(r.cfg.Dir)
	if err != nil {
		return
	}
	var segs []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "rec-") && strings.HasSuffix(n, replay.Ext) && e.Type().IsRegular() {
			segs = append(segs, n)
		}
	}
	slices.Sort(segs) // names sort by time, then segment
	for len(segs) > max(1, r.cfg.Keep) {
		if err := os.Remove(filepath.Join(r.cfg.Dir, segs[0])); err != nil {
			s.cfg.Logger.Warn("recording: could not remove an old segment", "file", segs[0], "err", err)
		}
		segs = segs[1:]
	}
}
