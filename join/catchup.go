package join

import (
	"context"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// The catch-up phase: the loaded world is simulated, as fast as it
// goes, toward the host's grant, which moves on meanwhile; new ticks are
// taken in between batches. Once the simulation has reached the grant,
// Client_WorldReady goes out and the session is live.

// catchUpBatch is how many ticks the catch-up simulates between looks
// at what arrived.
const catchUpBatch = 256

// catchUp runs the catch-up phase on the world the download loaded and
// reports WorldReady.
func (s *Session) catchUp(ctx context.Context, w *loaded) error {
	if err := s.follow(w); err != nil {
		return err
	}
	s.timings.Load = time.Since(w.start)
	s.timings.SnapshotTick = w.header.Tick

	ph := s.afterHandshake("unexpected %s while catching up", map[wire.ID]handler{
		wire.IDServerTick: on(s.applyTick),
	})
	f, from := s.follower, w.header.Tick
	cu := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Run(catchUpBatch)
		if err != nil {
			return err
		}
		s.timings.CatchUpTicks += uint64(n)
		report(s.cfg, PhaseCatchUp, f.Sim().Tick()-from, f.Granted()-from)
		if err := s.drain(ph); err != nil {
			return err
		}
		if f.Behind() == 0 {
			break
		}
	}
	s.timings.CatchUp = time.Since(cu)
	return s.worldReady()
}

// follow sets up the follower of the loaded world: the commands the join
// point had queued, the grant it was cut under, and the ticks that
// arrived during the download.
func (s *Session) follow(w *loaded) error {
	var queued []lockstep.Command
	for _, mc := range w.header.Commands {
		queued = append(queued, mc.Commands...)
	}
	f, err := lockstep.NewFollower(w.sim, queued)
	if err != nil {
		return protoErr("queued commands: %w", err)
	}
	f.OnStep(s.stepped)
	f.OnApply(s.applied)
	f.Grant(w.header.Granted)
	s.follower = f
	for _, t := range w.ticks {
		if err := s.applyTick(t); err != nil {
			return err
		}
	}
	return nil
}

// worldReady tells the host this client has caught up, and makes the
// session live.
func (s *Session) worldReady() error {
	sim := s.follower.Sim()
	s.timings.ReadyTick = sim.Tick()
	if err := s.write(&wire.ClientWorldReady{Tick: sim.Tick(), WorldHash: sim.WorldHash()}); err != nil {
		return err
	}
	s.ready, s.acked, s.ackedAt, s.lightTick = true, sim.Tick(), time.Now(), sim.Tick()
	if s.cfg.Resume != nil {
		s.cfg.Resume.ready()
	}
	s.live.Store(true)
	// The reader may be blocked under the join's longer deadline until the
	// next packet comes: a host silent from now on must be noticed after
	// HostTimeout, not ReadyTimeout.
	_ = s.nc.SetReadDeadline(deadline(s.cfg.HostTimeout))
	return nil
}

// applyTick takes a tick's commands and grant into the follower.
func (s *Session) applyTick(t *wire.ServerTick) error {
	if s.cfg.Light && s.ready {
		// Light mode: the commands count as applied on arrival and the
		// grant as simulated; nothing is simulated.
		if s.cfg.OnApply != nil {
			for _, c := range t.Commands {
				s.cfg.OnApply(c)
			}
		}
		s.lightTick = max(s.lightTick, t.Granted)
		return nil
	}
	if err := s.follower.Add(t.Commands...); err != nil {
		return protoErr("%w", err)
	}
	s.follower.Grant(t.Granted)
	return nil
}
