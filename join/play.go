package join

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// The play phase, after WorldReady: Run applies the host's ticks as they
// are granted, reports how far it has simulated, sends the checkpoint
// hashes the host asks for and takes repairs in (resync.go).

// ackEvery is how often a playing client reports its tick.
const ackEvery = 50 * time.Millisecond

// playPhase is the play phase's dispatch table.
func (s *Session) playPhase() *phase {
	return s.afterHandshake("unexpected %s", map[wire.ID]handler{
		wire.IDServerTick:      on(s.applyTick),
		wire.IDServerResync:    on(s.startResync),
		wire.IDServerWorldData: on(s.resyncData),
		// A desync's explanation (explain.go).
		wire.IDServerExplainRequest: on(s.explainRequested),
		// Relay mode: the host's requests of its arbiter (arbiter.go).
		wire.IDServerUploadRequest: on(s.uploadRequested),
		wire.IDServerUploadResult:  on(s.uploadResult),
	})
}

// Run follows the session: it applies the host's ticks as they are granted
// until ctx is done (then it leaves, as Leave does, and returns nil) or the
// host ends the session (returning a *RejectedError, for example with
// reason ServerClosing) or the connection fails.
func (s *Session) Run(ctx context.Context) error {
	defer s.Close()
	ph := s.playPhase()
	var timer *time.Timer
	for {
		// A tick not yet reported is reported when ackEvery has passed,
		// even if nothing else arrives (the host may be holding time for
		// exactly this report).
		var wake <-chan time.Time
		if s.simulatedTick() != s.acked {
			if timer == nil {
				timer = time.NewTimer(ackEvery)
			} else {
				timer.Reset(max(0, ackEvery-time.Since(s.ackedAt)))
			}
			wake = timer.C
		}
		select {
		case in := <-s.in:
			if err := s.take(in, ph); err != nil {
				return err
			}
			if err := s.drain(ph); err != nil {
				return err
			}
			if !s.cfg.Light {
				if err := s.simulate(); err != nil {
					return err
				}
			}
		case fn := <-s.do:
			fn(s.follower.Sim())
		case <-wake:
		case <-ctx.Done():
			if err := s.Leave("the client was stopped"); err != nil {
				s.cfg.Logger.Debug("leave", "err", err)
			}
			return nil
		case <-s.closed:
			return net.ErrClosed
		}
		if err := s.reportTick(); err != nil {
			return err
		}
	}
}

// simulate runs the follower up to the grant (or a repair's hold point),
// swaps a finished repair in and runs on, and sends the hash reports
// taken on the way.
func (s *Session) simulate() error {
	for {
		if _, err := s.follower.Run(1 << 30); errors.Is(err, lockstep.ErrRefused) && s.hashEvery > 0 && !s.opt.NoHashReports {
			// Diverged: the host's hash check finds it and repairs the
			// state; the session goes on meanwhile.
			s.cfg.Logger.Warn("desync", "err", err)
			continue
		} else if err != nil {
			return err
		}
		if err := s.flushHashes(); err != nil {
			return err
		}
		if released, err := s.finishUpload(); err != nil {
			return err
		} else if released {
			continue // the arbiter's upload is cut: run on
		}
		held := s.resync != nil
		if err := s.finishResync(); err != nil {
			return err
		}
		if !held || s.resync != nil {
			return nil // nothing swapped in: nothing more to run now
		}
	}
}

// reportTick tells the host how far this client has simulated, at most
// every ackEvery, for the host's lag policy.
func (s *Session) reportTick() error {
	tick := s.simulatedTick()
	if tick == s.acked || time.Since(s.ackedAt) < ackEvery {
		return nil
	}
	s.acked, s.ackedAt = tick, time.Now()
	return s.write(&wire.ClientTickAck{Tick: tick})
}

// simulatedTick is the tick this client has reached (the grant, in Light
// mode).
func (s *Session) simulatedTick() uint64 {
	if s.cfg.Light {
		return s.lightTick
	}
	return s.follower.Sim().Tick()
}

// Do runs fn on the goroutine that owns the simulation (inside Run), for
// reading its state safely, for example to build a valid command. It waits
// while the queue of such calls is full and returns false once the session
// has ended.
func (s *Session) Do(fn func(sim lockstep.Sim)) bool {
	select {
	case s.do <- fn:
		return true
	case <-s.closed:
		return false
	}
}
