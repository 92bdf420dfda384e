package join

import (
	"maps"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// A session goes through four phases, as the host's side of it does:
// the handshake (handshake.go), the download of the world
// (download.go), the catch-up to the host's tick (catchup.go) and play
// (play.go). Each phase has one dispatch table, built once when the
// phase begins, that says what it does with every packet it takes; a
// packet a phase has no entry for is a protocol error naming it. The
// packets every phase after the handshake takes (notices, the player
// list, the session token, desync events, chat) come from one table,
// anyPhase, and the reader answers clock rounds and keepalives itself
// (echoes), in every phase.

// handler takes one packet of the type its table entry is for.
type handler func(wire.Packet) error

// phase is one phase's dispatch table.
type phase struct {
	// unexpected is the error format for a packet the phase does not
	// take; %s is its ID.
	unexpected string
	on         map[wire.ID]handler
}

// on adapts a handler of one packet type to a table entry.
func on[P wire.Packet](h func(P) error) handler {
	return func(p wire.Packet) error { return h(p.(P)) }
}

// handle hands p to the phase's handler for it.
func (ph *phase) handle(p wire.Packet) error {
	h, ok := ph.on[p.ID()]
	if !ok {
		return protoErr(ph.unexpected, p.ID())
	}
	return h(p)
}

// afterHandshake returns a phase that takes the packets of anyPhase and
// those of own.
func (s *Session) afterHandshake(unexpected string, own map[wire.ID]handler) *phase {
	on := s.anyPhase()
	maps.Copy(on, own)
	return &phase{unexpected: unexpected, on: on}
}

// anyPhase is the table of the packets every phase after the handshake
// takes.
func (s *Session) anyPhase() map[wire.ID]handler {
	return map[wire.ID]handler{
		wire.IDServerNotice:     on(s.notice),
		wire.IDServerPlayerList: on(s.applyPlayers),
		wire.IDServerSession:    on(s.admitted),
		wire.IDServerDesync:     on(s.desync),
		wire.IDServerChat:       on(s.chatFrom),
	}
}

// echoes is the table of the packets the reader answers itself, at once,
// from its own goroutine, so the host measures the network and not this
// client's load.
func (s *Session) echoes() map[wire.ID]handler {
	return map[wire.ID]handler{
		wire.IDServerClock: on(s.answerClock),
		wire.IDServerKeepalive: on(func(k *wire.ServerKeepalive) error {
			return s.write(&wire.ClientKeepalive{Seq: k.Seq, HostTime: k.HostTime})
		}),
	}
}

// answerClock echoes a clock-sync round.
func (s *Session) answerClock(c *wire.ServerClock) error {
	return s.write(&wire.ClientClock{Nonce: c.Nonce, ClientTime: time.Now().UnixMicro()})
}

func (s *Session) notice(n *wire.ServerNotice) error {
	if n.Kind == wire.NoticeQueued && !s.ready {
		report(s.cfg, PhaseQueued, uint64(n.Place), 0) // 0 from a host that does not send the place
	}
	if s.cfg.Notice != nil {
		s.cfg.Notice(n.Text)
	}
	return nil
}

// admitted takes the session token (and the checkpoint interval) the
// host sends on admission; before WorldReady a Resume keeps the token
// for a retry.
func (s *Session) admitted(p *wire.ServerSession) error {
	grace := time.Duration(p.GraceMs) * time.Millisecond
	s.tok.set(p.Token, grace)
	s.tokenMu.Lock()
	s.info.PlayerID = p.PlayerID
	s.tokenMu.Unlock()
	if s.cfg.Resume != nil && !s.ready {
		s.cfg.Resume.setToken(p.Token, grace)
	}
	s.hashEvery = uint64(p.HashEvery)
	if !s.ready {
		s.timings.Rejoin, s.timings.RejoinWhy = p.Rejoin, p.Why
		s.replayTo = p.Granted
		if p.Rejoin == wire.RejoinHeld {
			return s.takeReplay(p)
		}
	}
	return nil
}

func (s *Session) desync(d *wire.ServerDesync) error {
	if s.cfg.Desync != nil {
		s.cfg.Desync(desyncEventOf(d))
	}
	return nil
}
