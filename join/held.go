package join

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// A held-world rejoin (docs/protocol.md, section 6.6): a Reconnector
// keeps the simulation of a session that was past WorldReady when its
// connection dropped, and rejoins with it. It names where the simulation
// stands and the hash reports it sent last; a host that still holds every
// command since then sends those instead of the world, and the
// simulation catches up on them. A host that does not (or does not know
// the key) sends the world, and the kept simulation is let go.

// heldWorld is a simulation kept over a dropped connection, with the hash
// reports it sent.
type heldWorld struct {
	follower *lockstep.Follower
	checks   *checkLog
}

// checkLog is the hash reports a session sent last (tick and world hash),
// oldest first, at most wire.MaxHeldChecks. Written from the goroutine
// that sends reports, read by a rejoin: safe for concurrent use.
type checkLog struct {
	mu     sync.Mutex
	checks []wire.HeldCheck
}

// sent records a report that went out.
func (l *checkLog) sent(r *wire.ClientHashes) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.checks) == wire.MaxHeldChecks {
		l.checks = append(l.checks[:0], l.checks[1:]...)
	}
	l.checks = append(l.checks, wire.HeldCheck{Tick: r.Tick, World: r.World})
}

// list is a copy of the reports recorded.
func (l *checkLog) list() []wire.HeldCheck {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wire.HeldCheck(nil), l.checks...)
}

// sendReport sends a hash report and records it for a held-world rejoin.
func (s *Session) sendReport(r *wire.ClientHashes) error {
	if err := s.write(r); err != nil {
		return err
	}
	s.checks.sent(r)
	return nil
}

// held is what a Reconnector keeps of s when its connection drops: its
// simulation, when it was past WorldReady, simulating, and not in the
// middle of a repair or an upload; else nil.
func (s *Session) held() *heldWorld {
	if !s.ready || s.cfg.Light || s.follower == nil || s.resync != nil || len(s.uploads) > 0 {
		return nil
	}
	return &heldWorld{follower: s.follower, checks: s.checks}
}

// claim is what a rejoin with h names: where the simulation stands, the
// commands received past it dropped (the host sends them again).
func (h *heldWorld) claim() *wire.HeldWorld {
	h.follower.DropPending()
	tick, applied := h.follower.Position()
	return &wire.HeldWorld{Tick: tick, Applied: applied, Checks: h.checks.list()}
}

// errReplayed ends the download phase of a rejoin the host answered with
// the commands missed instead of a world.
var errReplayed = errors.New("the host replays the commands missed")

// replayedRejoin reports whether the host took this session's held world.
func (s *Session) replayedRejoin() bool {
	return s.cfg.held != nil && s.timings.Rejoin == wire.RejoinHeld
}

// takeReplay inflates the commands a held-world rejoin missed, which
// Server_Session carries laid out as a replay (wire.DecodeReplay), bounded
// by wire.MaxReplayRaw, and keeps them as the ticks to apply: one per tick
// with commands, then a pure grant of Server_Session's Granted.
func (s *Session) takeReplay(p *wire.ServerSession) error {
	if s.cfg.held == nil {
		return protoErr("Server_Session replays commands to a join that named no held world")
	}
	raw, err := snapshot.Inflate(snapshot.Codec(p.ReplayCodec), p.Replay, wire.MaxReplayRaw)
	if err != nil {
		return protoErr("Server_Session's replay: %w", err)
	}
	cmds, speed, err := wire.DecodeReplay(raw)
	if err != nil {
		return protoErr("Server_Session's replay: %w", err)
	}
	if n := len(cmds); n > 0 && cmds[n-1].Tick > p.Granted {
		return protoErr("Server_Session's replay goes past its grant %d to tick %d", p.Granted, cmds[n-1].Tick)
	}
	s.replay = wire.ReplayTicks(cmds, p.Granted, speed)
	for _, t := range s.replay {
		if err := t.Validate(); err != nil {
			return protoErr("Server_Session's replay: %w", err)
		}
	}
	return nil
}

// catchUpHeld is the catch-up of a rejoin from the held world: the
// commands the host replays, then the live ticks, are applied to the kept
// simulation up to the grant the host gave at the admission, and
// WorldReady goes out.
func (s *Session) catchUpHeld(ctx context.Context, start time.Time) error {
	f := s.cfg.held.follower
	f.OnStep(s.stepped)
	f.OnApply(s.applied)
	s.follower = f
	s.timings.SnapshotTick = f.Sim().Tick()
	ph := s.afterHandshake("unexpected %s while catching up", map[wire.ID]handler{
		wire.IDServerTick: on(s.applyTick),
	})
	for _, t := range s.replay {
		if err := s.applyTick(t); err != nil {
			return err
		}
	}
	s.replay = nil
	cu := time.Now()
	for {
		if err := s.drain(ph); err != nil {
			return err
		}
		n, err := f.Run(catchUpBatch)
		if err != nil {
			return err
		}
		s.timings.CatchUpTicks += uint64(n)
		if f.Granted() >= s.replayTo && f.Behind() == 0 {
			break
		}
		if n > 0 {
			continue
		}
		p, err := s.recv(ctx) // caught up with what came: wait for more
		if err != nil {
			return err
		}
		if err := ph.handle(p); err != nil {
			return err
		}
	}
	s.timings.CatchUp = time.Since(cu)
	if err := s.worldReady(); err != nil {
		return err
	}
	s.timings.Total = time.Since(start)
	return nil
}
