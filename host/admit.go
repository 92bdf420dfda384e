package host

import (
	"errors"
	"fmt"
	"time"

	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/wire"
)

// errBadPassword is the password rule, checked after the name's form and
// before the roster's.
var errBadPassword = errors.New("wrong password")

// admission is one joiner on its way through admit: the request, with
// the name, ID and spectating its token restores on a rejoin.
type admission struct {
	r  joinReq
	rj *rejoin // the rejoin its token names; nil for a first join
}

// rejoined reports whether the joiner came back with a token.
func (a *admission) rejoined() bool { return a.rj != nil }

// admitRule is one admission rule: nil lets the joiner on to the next.
type admitRule func(s *session, a *admission) error

// admitRules are the admission rules in the order they are checked: the
// mode's check of kept def databases, the token, the name's form, the
// password, the mode's arbiter rule, bans, the cooling-off of a player
// who was refused, then the roster's (name online, room). A refusal names
// the first rule broken, so nobody without the password learns who is
// online or whether there is room.
var admitRules = []admitRule{
	func(s *session, a *admission) error { return s.mode.defsRule(a.r) },
	(*session).tokenRule,
	func(_ *session, a *admission) error { return roster.ValidateName(a.r.name) },
	func(_ *session, a *admission) error { return passwordRule(a.r) },
	func(s *session, a *admission) error { return s.mode.arbiterRule(a.r) },
	func(s *session, a *admission) error { return s.admin.banned(a.r.name, a.r.addr) },
	func(s *session, a *admission) error {
		if !a.rejoined() {
			return nil
		}
		return s.conducts.cooling(a.r.id, time.Now())
	},
	(*session).rosterRule,
}

// rosterRule is the roster's rules (name online, room). A name held by a
// connection the host has already closed is free: that player's leave is
// taken now rather than when its connection's goroutine gets to it, so a
// player told to go who joins again at once is not refused as online.
func (s *session) rosterRule(a *admission) error {
	if p := s.roster.Named(a.r.name); p != nil {
		if m := s.members[p.ID]; m != nil && m.conn.isClosing() {
			s.leave(leaveReq{id: m.id, conn: m.conn, why: m.conn.why, left: m.conn.left.Load()})
		}
	}
	return s.roster.Check(a.r.name, a.r.spectator)
}

func passwordRule(r joinReq) error {
	if !r.passwordOK {
		return errBadPassword
	}
	return nil
}

// tokenRule looks up a rejoin's token: the joiner comes back as the
// player it names (its ID, name and spectating), and a connection of that
// player that still lingers goes. Any empty form of the token (absent,
// nil, an empty bin or str) means no token: only its length tells a
// rejoin from a first join.
func (s *session) tokenRule(a *admission) error {
	if len(a.r.token) == 0 {
		return nil
	}
	rj := s.rejoins.lookup(a.r.token)
	if rj == nil {
		return errBadToken
	}
	if rj.online {
		// The old connection lingers (it has not timed out yet): it goes,
		// and the player comes back on the new one. The roster rules hold
		// for the player it replaces (its own name, its own place), so
		// only the password can refuse this rejoin: it is checked before
		// the old connection is touched.
		if err := passwordRule(a.r); err != nil {
			return err
		}
		s.replaceLingering(rj)
	}
	a.r.id, a.r.name, a.r.spectator = rj.id, rj.name, rj.spectator
	a.rj = rj
	return nil
}

// replaceLingering closes the connection a rejoining player left behind
// and takes the player off the roster, to come back on the new one.
func (s *session) replaceLingering(rj *rejoin) {
	if m := s.members[rj.id]; m != nil {
		m.conn.close(wire.ReasonReplaced, "")
		rj.held = heldOf(m)
	}
	s.dropMember(rj.id)
	s.roster.Remove(rj.id, "")
	s.broadcastPacket(&wire.ServerPlayerList{Action: wire.PlayerListRemove, Players: []wire.PlayerInfo{{ID: rj.id}}})
	rj.online, rj.left = false, time.Now() // the old connection is gone: the grace runs from now
}

// admit runs a joiner through the admission rules and, admitted, makes
// it a member: on the roster, with a rejoin token, announced to everyone,
// and given its join point (or the upload of a new relay session's
// world), or, rejoining from the world it held, the commands it missed.
// It returns false, and no reply, when the rejoin waits for its replay
// to be built: nothing of the admission happened then, and it is run
// again once the replay is there (replays.go).
func (s *session) admit(r joinReq) (joinReply, bool) {
	a := &admission{r: r}
	for _, rule := range admitRules {
		if err := rule(s, a); err != nil {
			return joinReply{err: err}, true
		}
	}
	if err := heldStalled(a); err != nil {
		return joinReply{err: err}, true
	}
	d, wait := s.decideHeld(a)
	if wait {
		s.replays.park(d.key, r)
		return joinReply{}, false
	}
	jp, held, err := s.rejoins.startJoin(a.rj, a.r.resume)
	if err != nil {
		return joinReply{err: err}, true
	}
	if !a.rejoined() {
		// A first join's ID, given here and not at Server_DefsOK: the
		// refused never use one up. A rejoin has its own (tokenRule).
		a.r.id = s.lastID.Add(1)
	}
	p, notices, err := s.roster.Admit(a.r.id, a.r.name, a.r.spectator)
	if err != nil {
		return joinReply{err: err}, true
	}
	if a.rejoined() {
		// A token is good for one rejoin and is used up only once the
		// rejoin is admitted; the new one is issued below, at admission,
		// before the world is sent.
		s.rejoins.use(a.r.token)
		notices = []roster.Notice{{Kind: wire.NoticeJoined, Text: a.r.name + " is back."}}
	}
	s.countRejoin(a, d)
	if d.result == wire.RejoinHeld {
		return s.admitHeld(a, p, jp, notices, d), true
	}
	s.issueToken(a.r, p, jp, d)
	m := s.addMember(a.r, notices)
	point, uploader, err := s.mode.joinPoint(a.r, m, held)
	if err != nil {
		s.cfg.Logger.Error("cut join point", "err", err)
		s.leave(leaveReq{id: a.r.id, why: "the host could not prepare the world"})
		return joinReply{err: fmt.Errorf("cut join point: %w", err)}, true
	}
	s.points.hand(point)
	m.point = point
	return joinReply{id: a.r.id, member: m, point: point, faction: p.Faction, granted: s.auth.Sim().Tick(),
		cmds: s.queuedCommands(), join: jp, retries: jp.retries, held: held, uploader: uploader}, true
}

// admitHeld admits a rejoin from the world it held: no join point; the
// commands it missed went in its Server_Session, before any later tick,
// and those stamped after the replay's end (one kept from an earlier
// rejoin) follow the admission's packets as the ticks that carried them.
// Its token rejoins as a player that left (it has nothing to resume), and
// the member keeps the last report the host accepted of that world.
func (s *session) admitHeld(a *admission, p *roster.Player, jp *joinProgress, notices []roster.Notice, d heldDecision) joinReply {
	s.issueToken(a.r, p, nil, d)
	m := s.addMember(a.r, notices)
	if tick := s.auth.Sim().Tick(); len(d.tail) > 0 || d.granted < tick {
		for _, t := range wire.ReplayTicks(d.tail, tick, s.auth.Speed()) {
			a.r.conn.sendPacket(t)
		}
	}
	m.good, m.checked = d.record.good, d.record.checked
	m.heldRun = d.record.run + 1
	return joinReply{id: a.r.id, member: m, faction: p.Faction, granted: d.granted, join: jp, retries: jp.retries, replayed: true}
}

// issueToken sends the token to come back as this player after a dropped
// connection, before the world, so the joiner knows its lasting player
// ID, with the answer to a held world if it named one.
func (s *session) issueToken(r joinReq, p *roster.Player, jp *joinProgress, d heldDecision) {
	if token := s.rejoins.issue(r.id, p.Name, p.Spectator, jp); token != nil {
		r.conn.sendPacket(s.sessionPacket(token, r.id, d))
	}
}

// addMember makes the admitted joiner a member: everyone else gets it as
// a delta of the player list, it gets the whole list, and everyone the
// roster's notices.
func (s *session) addMember(r joinReq, notices []roster.Notice) *member {
	s.broadcastPacket(s.playerDelta(wire.PlayerListAdd, r.id))
	s.conducts.sweep(time.Now(), func(id int32) bool { return s.members[id] != nil })
	m := &member{id: r.id, name: r.name, conn: r.conn, spectator: r.spectator, since: time.Now(), conduct: s.conducts.of(r.id)}
	m.conduct.last = time.Now()
	m.heard.Store(time.Now().UnixNano())
	s.members[r.id] = m
	s.order = append(s.order, r.id)
	r.conn.sendPacket(s.playerList())
	for _, n := range notices {
		s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeKind(n.Kind), Text: n.Text})
	}
	return m
}
