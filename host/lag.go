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
// disconnects whoever is past MaxLag. Only the players lagRule.lagOf
// counts hold time or are dropped: never a spectator, a joiner still
// catching up, a player the host has not heard from lately or one whose
// connection is closing.
func (s *session) applyLagPolicy(due int) int {
	now := s.auth.Sim().Tick()
	nowT := time.Now()
	rule := s.lagRule()
	var worst *member
	var behind uint64
	anyone := false // a playing member whose lag counts
	for _, id := range s.order {
		m := s.members[id]
		b, why := rule.lagOf(m, now, nowT)
		if why != m.lagWhy && why != lagCounts && why != lagNotPlaying && b > s.cfg.Lag.MaxLag {
			s.cfg.Logger.Info("not waiting for a player", "player", id, "name", m.name, "behind", b, "why", why.String())
		}
		m.lagWhy = why
		if why != lagCounts {
			continue
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
		attrs := []any{"holding", holding, "behind", behind}
		if holding {
			text = fmt.Sprintf("Waiting for %s (%d ticks behind).", worst.name, behind)
			attrs = append(attrs, "player", worst.id, "name", worst.name)
		}
		s.cfg.Logger.Info("lag", attrs...)
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

// lagWhy is why a member's lag counts for the lag policy, or why not.
type lagWhy uint8

const (
	lagCounts     lagWhy = iota // it may hold time (LagWait) or be dropped (LagDrop)
	lagNotPlaying               // a spectator, before WorldReady, or under repair
	lagCatchingUp               // past WorldReady, not yet within MaxLag of the host
	lagQuiet                    // nothing heard from it for lagRule.quiet
	lagClosing                  // its connection is closing: it is leaving
)

func (w lagWhy) String() string {
	switch w {
	case lagCounts:
		return "counts"
	case lagNotPlaying:
		return "not playing"
	case lagCatchingUp:
		return "catching up"
	case lagQuiet:
		return "silent"
	case lagClosing:
		return "connection closed"
	}
	return "unknown"
}

// lagRule decides whose lag counts: the part of the lag policy that
// looks at one member, apart so it can be tested on its own.
type lagRule struct {
	maxLag uint64
	// quiet is how long a player may go unheard before time is no longer
	// held for it: a socket that went silent (a tab closed without a
	// word, a machine gone) holds nobody while the Idle drop comes.
	quiet time.Duration
	// catchUp is how long after WorldReady a joiner may stay more than
	// maxLag behind without counting: it is catching up at its best
	// speed. One still that far behind after it counts as any player.
	catchUp time.Duration
}

func (s *session) lagRule() lagRule {
	return lagRule{maxLag: s.cfg.Lag.MaxLag, quiet: quietAfter(s.cfg.Timeouts.KeepaliveEvery, s.cfg.Lag.MaxLag, s.cfg.TickRate),
		catchUp: s.cfg.Timeouts.CatchUp}
}

// quietAfter is how long a player may go unheard before the lag policy
// stops waiting for it: three quarters of the time maxLag ticks take at
// speed 1, so that a silent socket is let go before the host would hold
// time for it, but never less than one and a half keepalive intervals
// (a client echoes every keepalive at once, docs/protocol.md 6.5, and
// reports its tick every 50 ms while it advances, so a live one is
// heard well within that) and never more than three.
func quietAfter(keepalive time.Duration, maxLag uint64, tickRate int) time.Duration {
	q := 3 * keepalive
	if maxLag > 0 && tickRate > 0 {
		held := time.Duration(maxLag) * time.Second / time.Duration(tickRate)
		q = min(q, max(held*3/4, keepalive*3/2))
	}
	return q
}

// lagOf is how far m is behind the host's tick, and whether that counts,
// at now. A player past WorldReady counts once it has been within maxLag
// of the host (it caught up; m.caughtUp remembers it) or catchUp after
// its WorldReady, whichever comes first, and then only while the host
// has heard from it within quiet and its connection is open.
func (r lagRule) lagOf(m *member, tick uint64, now time.Time) (uint64, lagWhy) {
	var behind uint64
	if a := m.acked.Load(); a < tick {
		behind = tick - a
	}
	switch {
	case !m.playing:
		return behind, lagNotPlaying
	case m.conn.isClosing():
		return behind, lagClosing
	case now.Sub(time.Unix(0, m.heard.Load())) > r.quiet:
		return behind, lagQuiet
	}
	if !m.caughtUp {
		if behind > r.maxLag && now.Sub(m.readyAt) < r.catchUp {
			return behind, lagCatchingUp
		}
		m.caughtUp = true
	}
	return behind, lagCounts
}
