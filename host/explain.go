package host

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/desync/explain"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/resim"
	"github.com/lockhost/lockhost/wire"
)

// Explaining a desync (docs/protocol.md section 10.1). For a simulation
// that can clone itself, the session keeps a copy of its state at its
// last few checkpoints (desyncTracker.kept). When a player's report
// differs and the player matched at an earlier checkpoint still kept,
// the session goroutine only gathers the two copies and the commands of
// the window and hands them to a goroutine (explainDesync), which
// re-simulates the window, asks the player for its side
// (Server_ExplainRequest), waits a bounded time for the answer (read by
// the player's reader into a bounded buffer, explainWait), combines the
// two, writes the desync report with the explanation, and hands the
// summary back to the session goroutine for the status page and the
// notice. A player that does not answer, answers late or answers wrong
// only loses its explanation: the report goes out without it.

const (
	// explainKeep is how many checkpoints' copies the host keeps.
	explainKeep = 4
	// explainTimeout bounds the wait for a player's answer.
	explainTimeout = 10 * time.Second
	// maxExplaining bounds the explanations worked out at once.
	maxExplaining = 2
	// explainLimit is the most bytes of an answer the host takes.
	explainLimit = 16 << 20
)

// keptState is the host's copy of its state at a checkpoint tick.
type keptState struct {
	tick uint64
	sim  lockstep.Cloner
}

// keepCheckpoint keeps a copy of the state at a checkpoint, for
// explanations, when the simulation can clone itself.
func (d *desyncTracker) keepCheckpoint(sim lockstep.Sim, every int) {
	c, ok := sim.(lockstep.Cloner)
	if !ok || every <= 0 || every > wire.MaxExplainTicks {
		return
	}
	cl, ok := c.Clone().(lockstep.Cloner)
	if !ok {
		return
	}
	d.kept[d.keptNext] = keptState{tick: sim.Tick(), sim: cl}
	d.keptNext = (d.keptNext + 1) % explainKeep
}

// keptAt is the copy kept at tick, or nil.
func (d *desyncTracker) keptAt(tick uint64) lockstep.Cloner {
	for _, k := range d.kept {
		if k.sim != nil && k.tick == tick {
			return k.sim
		}
	}
	return nil
}

// explainJob is a desync handed off to be explained.
type explainJob struct {
	in       explain.Input
	report   *desync.Report
	detected time.Time
	conn     *conn
	id       int32
	name     string
}

// startExplain hands the desync off to be explained, when it can be, and
// reports whether it did; the explaining goroutine then writes report.
// It runs on the session goroutine and only gathers references: the kept
// copies are never changed, and the commands are copied.
func (s *session) startExplain(m *member, to uint64, differ []int32, report *desync.Report, detected time.Time) bool {
	d := s.desync
	if !m.checked || m.explaining || d.explaining >= maxExplaining {
		return false
	}
	from := m.good.tick
	if from >= to || to-from > wire.MaxExplainTicks || from < m.lastCut {
		return false
	}
	start, end := d.keptAt(from), d.keptAt(to)
	if start == nil || end == nil {
		return false
	}
	live := d.liveRecent()
	if len(live) > 0 && live[0].Tick > from {
		return false // the commands of the window are no longer all kept
	}
	cmds := append([]lockstep.Command(nil), live[firstAt(live, from):firstAt(live, to)]...)
	maps := differ[:min(len(differ), wire.MaxExplainMaps)]
	job := &explainJob{
		in: explain.Input{From: from, To: to, Maps: maps, Host: resim.Side{
			Start: func() (lockstep.Sim, error) {
				d.keptClone.Lock()
				defer d.keptClone.Unlock()
				return start.Clone(), nil
			},
			Commands: cmds, End: end.(lockstep.Sim),
		}},
		report: report, detected: detected, conn: m.conn, id: m.id, name: m.name,
	}
	m.explaining = true
	d.explaining++
	d.reports.Add(1)
	go s.explainDesync(job)
	return true
}

// explainDesync works an explanation out off the session goroutine,
// writes the report, and hands the result back to the session.
func (s *session) explainDesync(job *explainJob) {
	defer s.desync.reports.Done()
	ex, err := s.explainWithPlayer(job)
	took := time.Since(job.detected)
	log := s.cfg.Logger.With("player", job.id, "name", job.name, "from", job.in.From, "to", job.in.To)
	if err != nil {
		log.Info("desync not explained", "err", err, "took_ms", took.Milliseconds())
	} else {
		job.report.Explanation = ex
		log.Info("desync explained", "first_tick", ex.FirstTick, "kind", ex.Kind, "differences", len(ex.Differences)+ex.Omitted,
			"summary", ex.Summary(), "explain_ms", float64(took.Microseconds())/1000)
	}
	s.desync.writeReportNow(job.report)
	done := func() { s.explained(job, ex, took) }
	select {
	case s.calls <- done:
	case <-s.stopping:
	}
}

// explainWithPlayer re-simulates the host's side, asks the player for
// its side and combines the two.
func (s *session) explainWithPlayer(job *explainJob) (*desync.Explanation, error) {
	hr, err := explain.HostRun(job.in)
	if err != nil {
		return nil, err
	}
	w := &explainWait{q: job.conn.explainSeq.Add(1), limit: explainLimit, done: make(chan struct{})}
	job.conn.explain.Store(w)
	defer job.conn.explain.CompareAndSwap(w, nil)
	flat := resim.FlatHashes(hr)
	req := &wire.ServerExplainRequest{Request: w.q, From: job.in.From, To: job.in.To, Maps: job.in.Maps, Hashes: flat, Limit: w.limit}
	if !job.conn.sendPacket(req) {
		return nil, errors.New("the player's connection is closing")
	}
	timer := time.NewTimer(explainTimeout)
	defer timer.Stop()
	select {
	case <-w.done:
	case <-timer.C:
		return nil, fmt.Errorf("the player did not answer within %v", explainTimeout)
	case <-job.conn.closing:
		return nil, errors.New("the player left before answering")
	case <-s.stopping:
		return nil, errors.New("the host is stopping")
	}
	if w.errText != "" {
		return nil, fmt.Errorf("the player could not answer: %s", w.errText)
	}
	r, err := resim.RequestFromWire(job.in.From, job.in.To, job.in.Maps, flat)
	if err != nil {
		return nil, err
	}
	rep, err := resim.DecodeReply(w.buf, r)
	if err != nil {
		return nil, err
	}
	return explain.Combine(job.in, hr, rep)
}

// explained takes an explanation's result on the session goroutine: the
// status page's history and a notice to everyone.
func (s *session) explained(job *explainJob, ex *desync.Explanation, took time.Duration) {
	s.desync.explaining--
	if m := s.members[job.id]; m != nil && m.conn == job.conn {
		m.explaining = false
	}
	if ex == nil {
		return
	}
	s.stats.update(func(st *Stats) { st.Explained++; st.LastExplain = took })
	s.pub.history.desync(DesyncRecord{At: time.Now(), Player: job.id, Name: job.name, Event: DesyncExplained,
		Tick: job.report.Tick, Maps: job.in.Maps, Explanation: ex.Summary(), Explain: took})
	text := fmt.Sprintf("%s's desync explained: %s", job.name, ex.Summary())
	if len(text) > wire.MaxTextBytes {
		text = text[:wire.MaxTextBytes]
	}
	s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: text})
}

// explainWait is the host's wait for one answer: the player's reader
// fills it, chunk by chunk, up to limit bytes.
type explainWait struct {
	q     uint32
	limit uint64
	done  chan struct{}

	mu       sync.Mutex
	buf      []byte
	total    uint64
	started  bool
	finished bool
	errText  string
}

// add takes one chunk, on the player's reader. A chunk for another
// request is dropped (the host gave up on it); a chunk that breaks the
// rules is an error, which ends the connection.
func (w *explainWait) add(p *wire.ClientExplainReply) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished {
		return nil
	}
	if p.Error != "" || (!w.started && p.Total == 0) {
		w.errText, w.finished = p.Error, true
		if w.errText == "" {
			w.errText = "an empty answer"
		}
		close(w.done)
		return nil
	}
	if !w.started {
		if p.Total > w.limit {
			return fmt.Errorf("explain answer of %d bytes, more than the %d asked for", p.Total, w.limit)
		}
		w.total, w.started = p.Total, true
	}
	if p.Total != w.total || p.Offset != uint64(len(w.buf)) {
		return fmt.Errorf("explain answer chunk at %d of total %d, want %d of %d", p.Offset, p.Total, len(w.buf), w.total)
	}
	w.buf = append(w.buf, p.Data...) // grows with what arrived, never past total
	if uint64(len(w.buf)) == w.total {
		w.finished = true
		close(w.done)
	}
	return nil
}
