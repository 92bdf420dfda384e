package join

import (
	"cmp"
	"slices"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// The player list and the session token, as the host sends them in any
// phase after the handshake; read from any goroutine.

// Token is the session token the host gave on admission (nil before it
// arrives) and how long after a drop it stays good: pass it in
// Config.Token to rejoin as the same player. Safe from any goroutine.
func (s *Session) Token() ([]byte, time.Duration) {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	return s.token, s.grace
}

// applyPlayers applies a player list or delta to the list this client
// holds.
func (s *Session) applyPlayers(p *wire.ServerPlayerList) error {
	s.tokenMu.Lock()
	find := func(id int32) (int, bool) {
		return slices.BinarySearchFunc(s.players, id, func(pi wire.PlayerInfo, id int32) int { return cmp.Compare(pi.ID, id) })
	}
	switch p.Action {
	case wire.PlayerListFull:
		s.players = slices.Clone(p.Players)
		slices.SortFunc(s.players, func(a, b wire.PlayerInfo) int { return cmp.Compare(a.ID, b.ID) })
	case wire.PlayerListAdd:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players[i] = pi
			} else {
				s.players = slices.Insert(s.players, i, pi)
			}
		}
	case wire.PlayerListRemove:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players = slices.Delete(s.players, i, i+1)
			}
		}
	case wire.PlayerListStatus:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players[i].Status = pi.Status
			}
		}
	case wire.PlayerListLatencies:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players[i].LatencyMs = pi.LatencyMs
			}
		}
	}
	list := slices.Clone(s.players)
	s.tokenMu.Unlock()
	if s.cfg.Players != nil {
		s.cfg.Players(list)
	}
	return nil
}

// Players is the player list as this client holds it. Safe from any
// goroutine.
func (s *Session) Players() []wire.PlayerInfo {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	return slices.Clone(s.players)
}
