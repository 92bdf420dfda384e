package host

import (
	"fmt"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// lagPolicy is the state of the lag policy (Config.Lag.Policy): whether
// time is held for a laggard, and when the policy last ran, which is what
// a hold is charged by. The session goroutine owns it and runs the policy
// (applyLagPolicy) from its tick; the members' acked ticks, which the
// policy reads, are written by their readers.
type lagPolicy struct {
	holding   bool      // time is held for a laggard (LagWait)
	lastCheck time.Time // when applyLagPolicy last ran
}

// applyLagPolicy looks at how far the slowest playing client is behind.
// Under LagWait it halves the ticks owed past MaxLag/2, steps no further
// than MaxLag+1 ahead of the slowest player even with a backlog owed, and
// holds time past MaxLag, telling everyone whom the session waits for;
// under LagDrop it
// disconnects whoever is past MaxLag. Joiners still catching up and
// spectators never count.
func (s *session) applyLagPolicy(due int) int {
	now := s.auth.Sim().Tick()
	var worst *member
	var behind uint64
	anyone := false // a playing member whose lag counts
	for _, id := range s.order {
		m := s.members[id]
		if !m.playing {
			continue
		}
		b := uint64(0)
		if a := m.acked.Load(); a < now {
			b = now - a
		}
		if s.cfg.Lag.Policy == LagDrop && b > s.cfg.Lag.MaxLag {
			s.cfg.Logger.Info("dropping a lagging player", "player", id, "name", m.name, "behind", b)
			m.conn.close(wire.ReasonLagging, fmt.Sprintf("%d ticks behind", b))
			m.playing = false // it holds nobody, and is not dropped again, while it leaves
			continue
		}
		anyone = true
		if b > behind {
			worst, behind = m, b
		}
	}
	if s.cfg.Lag.Policy == LagDrop {
		return due
	}
	holding := behind > s.cfg.Lag.MaxLag
	// The time held is charged to the player held for, over its rejoins:
	// dropping and rejoining does not buy a fresh MaxHold.
	nowT := time.Now()
	since := nowT.Sub(s.lag.lastCheck)
	s.lag.lastCheck = nowT
	if holding && s.lag.holding && s.cfg.Lag.MaxHold > 0 && s.conducts.chargeHold(worst.conduct, nowT, since) {
		s.cfg.Logger.Info("dropping a player time was held for too long", "player", worst.id, "name", worst.name, "behind", behind,
			"held", worst.conduct.held.Round(time.Millisecond))
		worst.conn.close(wire.ReasonLagging, fmt.Sprintf("%d ticks behind for over %v", behind, s.cfg.Lag.MaxHold))
		worst.playing = false // it holds nobody while it leaves
		s.conducts.coolDown(worst.conduct, nowT, wire.ReasonLagging)
	}
	if holding != s.lag.holding {
		s.lag.holding = holding
		text := "The session is running again."
		if holding {
			text = fmt.Sprintf("Waiting for %s (%d ticks behind).", worst.name, behind)
		}
		s.cfg.Logger.Info("lag", "holding", holding, "behind", behind)
		s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: text})
	}
	switch {
	case holding:
		return 0
	case behind > s.cfg.Lag.MaxLag/2:
		due = (due + 1) / 2
	}
	if anyone {
		// A backlog of owed ticks is not stepped past the hold: the
		// slowest player ends at most MaxLag+1 behind, however late this
		// loop ran.
		due = min(due, int(s.cfg.Lag.MaxLag+1-behind))
	}
	return due
}
