package join

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/resim"
	"github.com/lockhost/lockhost/wire"
)

// Explaining a desync, the client's side (docs/protocol.md section 10.1).
// While it reports hashes, a client whose simulation can copy itself
// keeps what the host needs to explain a desync: a trace of every tick of
// the last few checkpoint intervals (lockstep.TraceLog: the commands it
// applied and the game's cheap per-tick trace) and a copy of its state at
// its last few checkpoints. When the host asks (Server_ExplainRequest),
// it re-simulates the window from its copy with its own code, off the
// goroutine that owns the simulation, and sends the answer document in
// Client_ExplainReply chunks.

// explainKeep is how many checkpoints' copies a client keeps: the window
// starts at the one before the checkpoint that differed, and the host's
// request comes a round trip after the client reported that one, so
// perhaps after it has passed the next.
const explainKeep = 3

// explainLog is what a client keeps for explanations; the goroutine that
// owns the simulation feeds it.
type explainLog struct {
	trace *lockstep.TraceLog
	kept  [explainKeep]keptState // copies at checkpoints, the oldest overwritten
	next  int
	busy  atomic.Bool // an answer is being worked out
}

// keptState is a copy of the state at a checkpoint tick.
type keptState struct {
	tick uint64
	sim  lockstep.Sim
}

// applied runs after every command the follower applies.
func (s *Session) applied(c lockstep.Command) {
	if s.explain != nil {
		s.explain.trace.Applied(c)
	}
	if s.cfg.OnApply != nil {
		s.cfg.OnApply(c)
	}
}

// traceStep records the tick just simulated, before anything else sees
// the state after it (Config.OnStep may change it: a change there is a
// change outside a step, and shows at the next tick's trace).
func (s *Session) traceStep(sim lockstep.Sim) {
	if s.explain == nil {
		if !s.ready || s.hashEvery == 0 || s.opt.NoHashReports || s.hashEvery > wire.MaxExplainTicks {
			return
		}
		if _, ok := sim.(lockstep.Cloner); !ok {
			return
		}
		// Two intervals: the window, and one more for the host's request
		// to come in (a round trip and its re-simulation). A longer log
		// costs more than memory (see lockstep.NewTraceLog).
		s.explain = &explainLog{trace: lockstep.NewTraceLog(int(2 * s.hashEvery))}
	}
	s.explain.trace.Stepped(sim)
}

// keepCheckpoint keeps a copy of the state at a checkpoint tick.
func (s *Session) keepCheckpoint(sim lockstep.Sim) {
	l := s.explain
	if l == nil {
		return
	}
	c, ok := sim.(lockstep.Cloner)
	if !ok {
		return
	}
	l.kept[l.next] = keptState{tick: sim.Tick(), sim: c.Clone()}
	l.next = (l.next + 1) % explainKeep
}

// keptAt is the copy kept at tick, or nil.
func (l *explainLog) keptAt(tick uint64) lockstep.Sim {
	for _, k := range l.kept {
		if k.sim != nil && k.tick == tick {
			return k.sim
		}
	}
	return nil
}

// explainRequested answers a Server_ExplainRequest: it gathers its side
// of the window here and works the answer out on another goroutine.
func (s *Session) explainRequested(r *wire.ServerExplainRequest) error {
	if s.opt.SilentExplain {
		return nil
	}
	side, req, err := s.explainSide(r)
	if err != nil {
		s.cfg.Logger.Info("cannot explain the desync", "from", r.From, "to", r.To, "err", err)
		return s.write(&wire.ClientExplainReply{Request: r.Request, Error: err.Error()})
	}
	if !s.explain.busy.CompareAndSwap(false, true) {
		return s.write(&wire.ClientExplainReply{Request: r.Request, Error: "still answering the previous request"})
	}
	go func() {
		defer s.explain.busy.Store(false)
		if err := s.answerExplain(r, req, side); err != nil {
			s.cfg.Logger.Info("cannot explain the desync", "from", r.From, "to", r.To, "err", err)
			_ = s.write(&wire.ClientExplainReply{Request: r.Request, Error: err.Error()})
		}
	}()
	return nil
}

// explainSide is this client's side of the request's window, from what it
// kept.
func (s *Session) explainSide(r *wire.ServerExplainRequest) (resim.Side, resim.Request, error) {
	l := s.explain
	if l == nil {
		return resim.Side{}, resim.Request{}, errors.New("this client keeps nothing to explain desyncs with")
	}
	req, err := resim.RequestFromWire(r.From, r.To, r.Maps, r.Hashes)
	if err != nil {
		return resim.Side{}, resim.Request{}, err
	}
	start, end := l.keptAt(r.From), l.keptAt(r.To)
	if start == nil || end == nil {
		return resim.Side{}, resim.Request{}, fmt.Errorf("no copy of the state at tick %d or %d", r.From, r.To)
	}
	live := l.trace.Since(r.From)
	if len(live) == 0 || live[0].Tick != r.From {
		return resim.Side{}, resim.Request{}, fmt.Errorf("the trace no longer reaches back to tick %d", r.From)
	}
	for len(live) > 0 && live[len(live)-1].Tick >= r.To {
		live = live[:len(live)-1]
	}
	var cmds []lockstep.Command
	for _, c := range l.trace.Commands(r.From) {
		if c.Tick < r.To {
			cmds = append(cmds, c)
		}
	}
	copyOf := start.(lockstep.Cloner)
	side := resim.Side{
		Start:    func() (lockstep.Sim, error) { return copyOf.Clone(), nil },
		Commands: cmds, Live: live, End: end,
	}
	return side, req, nil
}

// answerExplain works the answer out and sends it in chunks.
func (s *Session) answerExplain(r *wire.ServerExplainRequest, req resim.Request, side resim.Side) error {
	rep, err := resim.Answer(req, side)
	if err != nil {
		return err
	}
	doc, err := resim.EncodeReply(rep)
	if err != nil {
		return err
	}
	if uint64(len(doc)) > r.Limit {
		return fmt.Errorf("the answer has %d bytes, more than the %d the host takes", len(doc), r.Limit)
	}
	s.cfg.Logger.Debug("explaining the desync", "from", r.From, "to", r.To, "differs_at", rep.DiffTick, "bytes", len(doc))
	for off := 0; off == 0 || off < len(doc); off += wire.MaxExplainChunk {
		end := min(off+wire.MaxExplainChunk, len(doc))
		if err := s.write(&wire.ClientExplainReply{Request: r.Request, Offset: uint64(off), Total: uint64(len(doc)), Data: doc[off:end]}); err != nil {
			return nil // the connection failed: the reader says so
		}
		if end == len(doc) {
			break
		}
	}
	return nil
}
