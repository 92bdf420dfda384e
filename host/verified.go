package host

import (
	"fmt"

	"github.com/lockhost/lockhost/wire"
)

// unverifiedIntervals is how many hash intervals past MaxLag a playing
// client may go without a hash report before it is shown as unverified.
const unverifiedIntervals = 2

// unverifiedAfter is how many ticks past the later of its WorldReady tick
// and its last reported checkpoint a playing client may go without a hash
// report: intervals hash intervals, plus MaxLag, since a client may trail
// the host by that much and report each checkpoint late.
func unverifiedAfter(intervals int, every int, maxLag uint64) uint64 {
	return uint64(intervals)*uint64(every) + maxLag
}

// checkVerified marks each playing client that has not reported its state
// hashes for unverifiedIntervals intervals as unverified, and drops one
// past Config.Desync.DropUnverified intervals when that is set. Spectators,
// joiners and players under repair are never checked, and nothing is when
// the host asks for no hashes. It runs on the session goroutine.
func (s *session) checkVerified() {
	every := s.cfg.Desync.HashEvery
	if every <= 0 {
		return
	}
	now := s.auth.Sim().Tick()
	for _, id := range s.order {
		m := s.members[id]
		if !m.playing || m.resync != nil {
			m.unverified = false
			continue
		}
		since := max(m.readyTick, m.hashedTick)
		silent := uint64(0)
		if now > since {
			silent = now - since
		}
		m.unverified = silent > unverifiedAfter(unverifiedIntervals, every, s.cfg.Lag.MaxLag)
		if n := s.cfg.Desync.DropUnverified; n > 0 && silent > unverifiedAfter(n, every, s.cfg.Lag.MaxLag) {
			s.cfg.Logger.Info("dropping a player that reports no state hashes", "player", id, "name", m.name,
				"silent_ticks", silent, "last_report", m.hashedTick)
			m.conn.close(wire.ReasonDesync, fmt.Sprintf("No state hashes reported for %d ticks: the host cannot check this client's game.", silent))
			m.playing = false // it holds nobody, and is not dropped again, while it leaves
			s.stats.update(func(st *Stats) { st.UnverifiedDrops++ })
		}
	}
}
