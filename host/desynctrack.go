package host

import (
	"cmp"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// desyncTracker is what desync detection keeps between ticks: the host's
// own checkpoints of the last hash window, the client reports waiting for
// a checkpoint still being hashed, the commands of the window (for
// reports), the last comparison of each map (for the Overview) and the
// report files being written. The session goroutine owns it and drives it
// (desync.go); the checkpointer hashes clones on its own goroutines and
// hands checkpoints back over cps, and report files are written on
// goroutines counted by reports.
type desyncTracker struct {
	window uint64 // Config.Desync.HashWindow
	dir    string // Config.Desync.Dir: where reports go ("" for none)
	log    *slog.Logger

	checkpointer *lockstep.Checkpointer // hashes clones off the session goroutine, reusing unchanged maps' hashes
	cps          chan lockstep.Checkpoint
	ring         *lockstep.HashRing     // checkpoints of the last HashWindow ticks
	pending      []hashReq              // reports for a checkpoint still being hashed
	recent       []lockstep.Command     // commands of the last HashWindow ticks from recentHead on, for desync reports
	recentHead   int                    // where the live part of recent starts; before it, commands past the window
	partNames    []string               // the simulation's map part names, if it has parts
	mapChecks    map[int32]mapCheck     // the last hash comparison of each map
	reports      sync.WaitGroup         // desync reports being written, and explanations being worked out
	kept         [explainKeep]keptState // copies of the state at the last checkpoints (explain.go)
	keptNext     int
	explaining   int // explanations under way
	// keptClone makes the explanations under way clone the kept copies
	// one at a time: two desyncs in one window start from the same copy,
	// and a game's Clone need not be safe to call at once.
	keptClone sync.Mutex
}

func newDesyncTracker(cfg Config, sim lockstep.Sim) *desyncTracker {
	d := &desyncTracker{window: cfg.Desync.HashWindow, dir: cfg.Desync.Dir, log: cfg.Logger,
		cps: make(chan lockstep.Checkpoint, 4), ring: lockstep.NewHashRing(cfg.Desync.HashWindow),
		mapChecks: make(map[int32]mapCheck)}
	if dg, ok := sim.(lockstep.MapDigester); ok {
		d.partNames = dg.MapPartNames()
	}
	return d
}

// mapCheck is the last hash comparison of one map.
type mapCheck struct {
	tick    uint64
	at      time.Time
	matched bool
}

// maxPending bounds the reports waiting for their checkpoint.
const maxPending = 256

// wait keeps a report until its checkpoint is hashed, and reports false
// when too many wait already.
func (d *desyncTracker) wait(r hashReq) bool {
	if len(d.pending) >= maxPending {
		return false
	}
	d.pending = append(d.pending, r)
	return true
}

// add records a checkpoint and returns the reports that were waiting for
// it, which are now due for comparison.
func (d *desyncTracker) add(cp lockstep.Checkpoint) []hashReq {
	d.ring.Add(cp)
	if len(d.pending) == 0 {
		return nil
	}
	var due []hashReq
	keep := d.pending[:0]
	for _, r := range d.pending {
		if r.r.Tick <= cp.Tick {
			due = append(due, r)
		} else {
			keep = append(keep, r)
		}
	}
	clear(d.pending[len(keep):])
	d.pending = keep
	return due
}

// remember keeps the commands of the last hash window for desync reports.
// Commands that fall out of the window are skipped by advancing
// recentHead, not by moving the window down every tick; the slice is
// compacted only once the skipped part passes half of it.
func (d *desyncTracker) remember(cmds []lockstep.Command, now uint64) {
	d.recent = append(d.recent, cmds...)
	live := d.liveRecent()
	if len(live) == 0 || live[0].Tick >= now || now-live[0].Tick <= d.window {
		return
	}
	n := firstAt(live, now-d.window)
	clear(live[:n]) // let go of the payloads now
	d.recentHead += n
	if d.recentHead > len(d.recent)/2 {
		kept := copy(d.recent, d.recent[d.recentHead:])
		clear(d.recent[kept:])
		d.recent = d.recent[:kept]
		d.recentHead = 0
	}
}

// liveRecent is the commands of the last hash window, in tick order.
func (d *desyncTracker) liveRecent() []lockstep.Command {
	return d.recent[d.recentHead:]
}

// firstAt is the index of the first command stamped tick or later in
// cmds, which are in tick order.
func firstAt(cmds []lockstep.Command, tick uint64) int {
	i, _ := slices.BinarySearchFunc(cmds, tick, func(c lockstep.Command, t uint64) int { return cmp.Compare(c.Tick, t) })
	return i // the first of equal ticks, or where tick would go
}

// noteChecks records which maps a compared report covered and whether they
// matched the host's.
func (d *desyncTracker) noteChecks(rep *wire.ClientHashes, differ []int32) {
	now := time.Now()
	for _, rm := range rep.Maps {
		matched := !slices.Contains(differ, rm.MapID)
		c, seen := d.mapChecks[rm.MapID]
		switch {
		case !seen || rep.Tick > c.tick:
			c = mapCheck{tick: rep.Tick, at: now, matched: matched}
		case rep.Tick == c.tick:
			c.matched = c.matched && matched
		default:
			continue // an older checkpoint than one already shown
		}
		d.mapChecks[rm.MapID] = c
	}
}

// writeReportNow writes a desync report on the calling goroutine (not the
// session's).
func (d *desyncTracker) writeReportNow(r *desync.Report) {
	if d.dir == "" {
		return
	}
	path, err := desync.Write(d.dir, r)
	if err != nil {
		d.log.Error("write desync report", "err", err)
		return
	}
	d.log.Info("desync report written", "path", path)
}

// writeReport writes a desync report off the session goroutine.
func (d *desyncTracker) writeReport(r *desync.Report) {
	if d.dir == "" {
		return
	}
	dir, log := d.dir, d.log
	d.reports.Add(1)
	go func() {
		defer d.reports.Done()
		path, err := desync.Write(dir, r)
		if err != nil {
			log.Error("write desync report", "err", err)
			return
		}
		log.Info("desync report written", "path", path)
	}()
}
