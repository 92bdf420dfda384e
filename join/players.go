package join

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// The player list and the session token, as the host sends them in any
// phase after the handshake; read from any goroutine.

// Token is the session token the host gave on admission (nil before it
// arrives) and how long after a drop it stays good: pass it in
// Config.Token to rejoin as the same player. Safe from any goroutine.
func (s *Session) Token() ([]byte, time.Duration) {
	token, grace, _ := s.tok.get()
	return token, grace
}

// sessionToken is a session's token as the host gave it and when the
// session ended: all a Reconnector keeps of a session (not the session,
// which holds the whole simulation). Safe for concurrent use.
type sessionToken struct {
	mu    sync.Mutex
	token []byte
	grace time.Duration // how long the token stays good after a drop
	ended time.Time     // when the session was closed (zero while it runs)
}

func (t *sessionToken) set(token []byte, grace time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.token, t.grace = token, grace
}

func (t *sessionToken) get() (token []byte, grace time.Duration, ended time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.token, t.grace, t.ended
}

// end notes that the session ended now.
func (t *sessionToken) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ended = time.Now()
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
	list := playersOf(s.players)
	s.tokenMu.Unlock()
	if s.cfg.Players != nil {
		s.cfg.Players(list)
	}
	return nil
}

// Players is the player list as this client holds it. Safe from any
// goroutine.
func (s *Session) Players() []Player {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	return playersOf(s.players)
}
