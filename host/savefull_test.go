package host_test

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
)

// logRecords keeps every log record's level and message.
type logRecords struct {
	mu   sync.Mutex
	recs []string // "LEVEL message"
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.recs = append(l.recs, r.Level.String()+" "+r.Message)
	l.mu.Unlock()
	return nil
}

// count is how many records start with prefix.
func (l *logRecords) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.recs {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// noSpace is the error a write on a full disk returns.
func noSpace(path string) error {
	return fmt.Errorf("save %s: %w", path, &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC})
}

// serveLogged runs a host like serveFor, logging into logs, and returns
// the server after it stopped.
func serveLogged(t *testing.T, cfg host.Config, logs *logRecords, body func(srv *host.Server)) *host.Server {
	t.Helper()
	cfg.Logger, cfg.Admission.ConnRate = slog.New(logs), -1
	srv, err := host.New(cfg, host.Content{Databases: testDefs}, locksteptest.New(2, 256))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0") }()
	body(srv)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestFullDiskMakesRoom: a disk with room for two autosaves and the save
// keeps autosaving: each write that fails for space deletes the oldest
// autosave and succeeds on its retry; nothing fails.
func TestFullDiskMakesRoom(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "colony.lhsave")
	const room = 2 // autosaves the disk holds
	write := func(p string, meta saves.Meta, body *snapshot.Payload) error {
		autos, err := saves.Autosaves(path)
		if err != nil {
			return err
		}
		if p != path && len(autos) >= room {
			return noSpace(p)
		}
		return saves.Write(p, meta, body)
	}
	logs := &logRecords{}
	srv := serveLogged(t, host.Config{TickRate: 200, Save: host.SaveConfig{Path: path, Every: 20 * time.Millisecond, Keep: 5, Write: write}},
		logs, func(srv *host.Server) {
			testkit.WaitFor(t, "autosaves past the disk's room", func() bool { return srv.Overview().Stats.Saves >= room+3 })
		})
	st := srv.Overview().Stats
	if st.SaveErrors != 0 {
		t.Fatalf("%d saves failed (%s); every one should have made room", st.SaveErrors, st.LastSaveError)
	}
	if n := logs.count("WARN disk full: deleted the oldest autosave"); n < 2 {
		t.Fatalf("%d autosaves deleted to make room, want at least 2", n)
	}
	autos, _ := saves.Autosaves(path)
	if len(autos) > room || len(autos) == 0 {
		t.Fatalf("%d autosaves on a disk with room for %d", len(autos), room)
	}
	if _, err := saves.Read(autos[0]); err != nil {
		t.Fatalf("newest autosave: %v", err)
	}
	if rec := srv.FinalSave(); rec == nil || rec.Err != "" {
		t.Fatalf("final save: %+v", rec)
	}
}

// TestFullDiskLogsOnce: while nothing can be written, a failing autosave
// is logged as an error once, not every time; when the disk has room
// again that is said once; a failing final save is reported by
// FinalSave.
func TestFullDiskLogsOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "colony.lhsave")
	var full atomic.Bool
	write := func(p string, meta saves.Meta, body *snapshot.Payload) error {
		if full.Load() {
			return noSpace(p)
		}
		return saves.Write(p, meta, body)
	}
	logs := &logRecords{}
	full.Store(true)
	srv := serveLogged(t, host.Config{TickRate: 200, Save: host.SaveConfig{Path: path, Every: 20 * time.Millisecond, Keep: 2, Write: write}},
		logs, func(srv *host.Server) {
			testkit.WaitFor(t, "several failed autosaves", func() bool { return srv.Overview().Stats.SaveErrors >= 4 })
			if n := logs.count("ERROR"); n != 1 {
				t.Errorf("%d error lines for one repeated failure, want 1", n)
			}
			if n := logs.count("DEBUG autosave failed again"); n < 3 {
				t.Errorf("%d repeats at debug level, want at least 3", n)
			}
			full.Store(false)
			testkit.WaitFor(t, "autosaves again", func() bool { return srv.Overview().Stats.Saves >= 2 })
			if n := logs.count("INFO saving works again"); n != 1 {
				t.Errorf("%d lines saying saving works again, want 1", n)
			}
			full.Store(true)
			// A new failure after a success is said again.
			errs := srv.Overview().Stats.SaveErrors
			// Two more failures: the first of them is logged by then.
			testkit.WaitFor(t, "failures after the recovery", func() bool { return srv.Overview().Stats.SaveErrors > errs+1 })
			if n := logs.count("ERROR"); n != 2 {
				t.Errorf("%d error lines after fail, work, fail; want 2", n)
			}
		})
	rec := srv.FinalSave()
	if rec == nil || !rec.Final || rec.Path != path || !strings.Contains(rec.Err, "no space left") {
		t.Fatalf("final save %+v: want its failure", rec)
	}
	if n := logs.count("ERROR final save failed"); n != 1 {
		t.Fatalf("%d lines for the failed final save, want 1", n)
	}
}
