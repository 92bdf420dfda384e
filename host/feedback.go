package host

import (
	"fmt"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// announce tells everyone about the accepted commands that change the
// session for all, naming who sent them: "Speed set to 2 by Alice."
// Session goroutine only.
func (s *session) announce(accepted []lockstep.Command) {
	for _, c := range accepted {
		if c.Kind != lockstep.KindSetSpeed || len(c.Payload) != 1 || c.Player == 0 {
			continue // the admin commands announce the host's own (player 0) changes
		}
		by := fmt.Sprintf("player %d", c.Player)
		if p := s.roster.Get(c.Player); p != nil {
			by = p.Name
		}
		what := fmt.Sprintf("Speed set to %d by %s.", c.Payload[0], by)
		if c.Payload[0] == 0 {
			what = fmt.Sprintf("Paused by %s (speed 0).", by)
		}
		s.cfg.Logger.Info("speed set", "player", c.Player, "name", by, "speed", c.Payload[0])
		s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: what})
	}
}
