package host

import (
	"time"

	"github.com/lockhost/lockhost/wire"
)

// liveness paces the keepalive and the broadcast of round trips. The
// session goroutine owns it and runs the liveness pass (checkLiveness)
// from its tick; the members' heard and rtt, which the pass reads, are
// written by their readers.
type liveness struct {
	every        time.Duration // Config.Timeouts.KeepaliveEvery
	seq          uint32        // the last keepalive's sequence number
	lastAlive    time.Time     // when the last keepalive went out
	lastRTTShown time.Time     // when latencies were last broadcast
}

// start sets the first keepalive one interval after now, as every later
// one goes: nobody is there to hear one sent at once.
func (l *liveness) start(now time.Time) {
	l.lastAlive, l.lastRTTShown = now, now
}

// keepalive reports whether a keepalive is due at now and, if so, counts
// it and returns its sequence number.
func (l *liveness) keepalive(now time.Time) (uint32, bool) {
	if now.Sub(l.lastAlive) < l.every {
		return 0, false
	}
	l.lastAlive = now
	l.seq++
	return l.seq, true
}

// showRTT reports whether round trips are due to be broadcast at now
// (every fifth keepalive interval).
func (l *liveness) showRTT(now time.Time) bool {
	if now.Sub(l.lastRTTShown) < 5*l.every {
		return false
	}
	l.lastRTTShown = now
	return true
}

// checkLiveness sends the keepalive, drops members heard from too long
// ago, and broadcasts round trips that changed noticeably.
func (s *session) checkLiveness(now time.Time) {
	seq, due := s.alive.keepalive(now)
	if !due {
		return
	}
	s.checkResyncs(now)
	s.broadcastPacket(&wire.ServerKeepalive{Seq: seq, HostTime: now.UnixMicro()})
	s.rejoins.expire(now)
	for _, id := range s.order {
		m := s.members[id]
		if silent := now.Sub(time.Unix(0, m.heard.Load())); silent > s.cfg.Timeouts.Idle {
			s.cfg.Logger.Info("client silent; dropping it", "player", id, "name", m.name, "silent", silent.Round(time.Millisecond))
			m.conn.close(wire.ReasonTimeout, "timed out")
		}
	}
	if !s.alive.showRTT(now) {
		return
	}
	var changed []wire.PlayerInfo
	for _, id := range s.order {
		m := s.members[id]
		rtt := m.rtt.Load()
		if rtt == 0 || abs(rtt-m.shownRTT)*10 < max(m.shownRTT, 1000) { // under 10% (or 0.1 ms) of change
			continue
		}
		m.shownRTT = rtt
		if p := s.roster.Get(id); p == nil || p.LatencyMs == int32(rtt/1000) {
			continue // the list shows milliseconds: nothing visible changed
		}
		if s.roster.SetLatency(id, int32(rtt/1000)) == nil {
			changed = append(changed, playerInfo(s.roster.Get(id)))
		}
	}
	if len(changed) > 0 {
		s.broadcastPacket(&wire.ServerPlayerList{Action: wire.PlayerListLatencies, Players: changed})
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
