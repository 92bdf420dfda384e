package host

import "time"

// noteLeave logs a member's leave or drop, once, with its name and ID,
// and counts it. Session goroutine only.
func (s *session) noteLeave(m *member, r leaveReq) {
	online := time.Since(m.since).Round(time.Second)
	if r.left {
		s.stats.update(func(st *Stats) { st.Leaves++ })
		s.cfg.Logger.Info("player left", "player", m.id, "name", m.name, "online", online)
		return
	}
	why := r.why
	if why == "" {
		why = "connection closed"
	}
	s.stats.update(func(st *Stats) { st.Drops++ })
	s.cfg.Logger.Info("player dropped", "player", m.id, "name", m.name, "why", why, "online", online)
}
