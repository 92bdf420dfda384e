package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// The admin API: what a host operator can do to a running session, from
// the console, over RCON or from a Go program. Every method takes by, who
// asks ("console", "rcon 127.0.0.1:50123", "api"), and logs the action
// with it. The methods that touch the session run on its goroutine and
// wait for Serve to run it.

// ErrSessionOver is returned by the admin methods once the session has
// ended.
var ErrSessionOver = errors.New("the session has ended")

// MaxSayText bounds the text of Say, in bytes: a chat line's limit.
const MaxSayText = wire.MaxChatBytes

// AdminPlayer is one online player as the admin commands list it.
type AdminPlayer struct {
	ID        int32
	Name      string
	Spectator bool
	// Status is the roster status: joining, downloading, playing, ...
	Status string
	// Latency is the round trip shown in the player list (0 until measured).
	Latency time.Duration
	// Addr is the address the player connects from (IP and port).
	Addr  string
	Since time.Time
}

// adminState is the session's part of the admin API. resume belongs to
// the session goroutine, which runs the admin actions (see onSession);
// the ban list is safe for any goroutine (admission reads it, the admin
// methods change it); stop and quit are for Shutdown's callers, under mu.
type adminState struct {
	bans   *banList
	resume uint8 // the speed Resume restores

	mu   sync.Mutex
	stop context.CancelFunc // ends Serve; nil until it runs
	quit *time.Timer        // a delayed shutdown
}

// onSession runs f on the session goroutine, over the same calls channel
// chat uses, and waits for it. It fails if the session ends before f ran.
func (s *Server) onSession(f func()) error {
	done := make(chan struct{})
	if !s.sess.call(func() { defer close(done); f() }) {
		return ErrSessionOver
	}
	select {
	case <-done:
		return nil
	case <-s.sess.done:
		// f runs inside the session's loop, so if it ran, done closed first.
		select {
		case <-done:
			return nil
		default:
			return ErrSessionOver
		}
	}
}

// logAdmin logs one admin action with who did it, and counts it.
func (s *Server) logAdmin(by, action string, attrs ...any) {
	s.sess.stats.update(func(st *Stats) { st.AdminActions++ })
	s.cfg.Logger.Info("admin action", append([]any{"by", by, "action", action}, attrs...)...)
}

// Players lists who is online, in admission order.
func (s *Server) Players() ([]AdminPlayer, error) {
	var out []AdminPlayer
	err := s.onSession(func() {
		for _, id := range s.sess.order {
			m := s.sess.members[id]
			p := s.sess.roster.Get(id)
			if p == nil {
				continue
			}
			out = append(out, AdminPlayer{ID: id, Name: p.Name, Spectator: p.Spectator, Status: p.Status.String(),
				Latency: time.Duration(p.LatencyMs) * time.Millisecond, Addr: m.conn.nc.RemoteAddr().String(), Since: m.since})
		}
	})
	return out, err
}

// findMember returns the member online under name (any letter case).
func (s *session) findMember(name string) *member {
	for _, id := range s.order {
		if m := s.members[id]; strings.EqualFold(m.name, name) {
			return m
		}
	}
	return nil
}

// expel disconnects m with reason r and message msg; revoke also
// revokes its rejoin token so it cannot come back on it (a ban keeps the
// token, whose rejoin the ban refuses with its own reason).
func (s *session) expel(m *member, r wire.Reason, msg, why string, revoke bool) {
	m.conn.closeWith(&wire.ServerDisconnect{Reason: r, Message: msg}, why)
	m.playing = false // it holds nobody while it leaves
	if revoke {
		s.rejoins.revoke(m.id)
	}
}

// revoke forgets player id's tokens.
func (r *rejoins) revoke(id int32) {
	for tok, rj := range r.tokens {
		if rj.id == id {
			delete(r.tokens, tok)
			r.dirty = true
		}
	}
}

// withReason ends a sentence with ": reason." when there is one.
func withReason(sentence, reason string) string {
	if reason == "" {
		return sentence + "."
	}
	return sentence + ": " + reason + "."
}

// why is what the other players are told of an expulsion, inside the
// leave notice's parentheses.
func why(what, reason string) string {
	if reason == "" {
		return what + " by the host"
	}
	return what + " by the host: " + reason
}

// Kick disconnects the player online as name with reason Kicked, showing
// it reason; it may join again.
func (s *Server) Kick(by, name, reason string) (AdminPlayer, error) {
	reason = chatText(reason)
	var found *AdminPlayer
	err := s.onSession(func() {
		m := s.sess.findMember(name)
		if m == nil {
			return
		}
		found = &AdminPlayer{ID: m.id, Name: m.name, Spectator: m.spectator, Addr: m.conn.nc.RemoteAddr().String()}
		s.sess.expel(m, wire.ReasonKicked, withReason("You were kicked from the session", reason), why("kicked", reason), true)
	})
	if err != nil {
		return AdminPlayer{}, err
	}
	if found == nil {
		return AdminPlayer{}, fmt.Errorf("no player named %q is online", name)
	}
	s.logAdmin(by, "kick", "player", found.ID, "name", found.Name, "addr", found.Addr, "reason", reason)
	return *found, nil
}

// Ban bans target, a username or an IP address (an IPv6 address bans its
// /64), for d (0: for good), and disconnects everyone online it covers
// with reason Banned; their joins and rejoins are refused with Banned
// until it ends or Unban lifts it. The ban list is saved before Ban
// returns. It returns the ban and the names of the players disconnected.
func (s *Server) Ban(by, target string, d time.Duration, reason string) (Ban, []string, error) {
	name, addr, err := parseBanTarget(target)
	if err != nil {
		return Ban{}, nil, err
	}
	if d < 0 {
		return Ban{}, nil, fmt.Errorf("ban duration %v: give a positive duration, or none for good", d)
	}
	now := time.Now()
	b := Ban{Name: name, Addr: addr, Reason: chatText(reason), By: by, At: now.UTC()}
	if d > 0 {
		b.Until = now.Add(d).UTC()
	}
	if err := s.sess.admin.bans.add(b, now); err != nil {
		return Ban{}, nil, err
	}
	var kicked []string
	err = s.onSession(func() {
		for _, id := range append([]int32(nil), s.sess.order...) {
			m := s.sess.members[id]
			if b.matches(m.name, addrKey(remoteIP(m.conn.nc))) {
				kicked = append(kicked, m.name)
				s.sess.expel(m, wire.ReasonBanned, (&bannedError{ban: b}).Error(), why("banned", b.Reason), false)
			}
		}
	})
	s.logAdmin(by, "ban", "target", b.Target(), "until", b.Until, "reason", b.Reason, "disconnected", kicked)
	if errors.Is(err, ErrSessionOver) {
		err = nil // the ban is saved; nobody is online to disconnect
	}
	return b, kicked, err
}

// Unban lifts the bans of target (a username or an IP address) and
// returns them; none is an error.
func (s *Server) Unban(by, target string) ([]Ban, error) {
	gone, err := s.sess.admin.bans.remove(target)
	if err != nil {
		return nil, err
	}
	if len(gone) == 0 {
		return nil, fmt.Errorf("%q is not banned", target)
	}
	s.logAdmin(by, "unban", "target", target)
	return gone, nil
}

// Bans lists the bans in force, oldest first.
func (s *Server) Bans() []Ban { return s.sess.admin.bans.list(time.Now()) }

// SaveNow writes the session now to the save file the host was started
// with, or, given a name, to NAME.lhsave in that file's folder (see
// SavePath: a path is refused, and so is a file there that is not a valid
// save), and returns the record of the write. Autosaves go on as before;
// one being written makes SaveNow fail.
func (s *Server) SaveNow(by, name string) (SaveRecord, error) {
	path, err := s.SavePath(name)
	if err != nil {
		s.logAdmin(by, "save", "name", name, "err", err)
		return SaveRecord{}, err
	}
	var job saveJob
	var prepErr error
	err = s.onSession(func() {
		if !s.sess.autosave.busy.CompareAndSwap(false, true) {
			prepErr = errors.New("a save is being written; try again in a moment")
			return
		}
		point, err := s.sess.points.ensure(s.sess.auth)
		if err != nil {
			s.sess.autosave.busy.Store(false)
			prepErr = fmt.Errorf("cut the world: %w", err)
			return
		}
		s.sess.autosave.writing.Add(1)
		job = saveJob{point: point, granted: s.sess.auth.Sim().Tick(), cmds: s.sess.queuedCommands(), path: path, manual: true}
	})
	if err == nil {
		err = prepErr
	}
	if err != nil {
		return SaveRecord{}, err
	}
	defer s.sess.autosave.writing.Done()
	defer s.sess.autosave.busy.Store(false)
	err = s.sess.writeSave(job)
	s.logAdmin(by, "save", "path", path, "tick", job.granted, "err", err)
	if err != nil {
		return SaveRecord{Path: path, Tick: job.granted, Err: err.Error()}, fmt.Errorf("save %s: %w", path, err)
	}
	return s.sess.pub.history.lastSave(), nil
}

// SetSpeed sets the game speed (0 pauses, 1 is normal, up to
// lockstep.MaxSpeed) from the next tick on and tells every player.
func (s *Server) SetSpeed(by string, speed uint8) error {
	if speed > lockstep.MaxSpeed {
		return fmt.Errorf("speed %d: give 0 to %d", speed, lockstep.MaxSpeed)
	}
	err := s.onSession(func() { s.sess.setSpeed(speed) })
	if err == nil {
		s.logAdmin(by, "speed", "speed", speed)
	}
	return err
}

func (s *session) setSpeed(speed uint8) {
	if cur := s.auth.Speed(); cur > 0 {
		s.admin.resume = cur
	}
	c := lockstep.SetSpeed(speed)
	c.Player = 0 // the host itself
	s.auth.Submit(c)
	text := fmt.Sprintf("The host set the speed to %d.", speed)
	if speed == 0 {
		text = "The host paused the game."
	}
	s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: text})
}

// Pause stops the game's time (speed 0); Resume restores the speed it had.
func (s *Server) Pause(by string) error {
	err := s.onSession(func() { s.sess.setSpeed(0) })
	if err == nil {
		s.logAdmin(by, "pause")
	}
	return err
}

// Resume restores the speed the game had before Pause (1 if none) and
// returns it.
func (s *Server) Resume(by string) (uint8, error) {
	var speed uint8
	err := s.onSession(func() {
		speed = max(s.sess.admin.resume, 1)
		s.sess.setSpeed(speed)
	})
	if err == nil {
		s.logAdmin(by, "resume", "speed", speed)
	}
	return speed, err
}

// Shutdown ends Serve after delay (at once for 0), as a cancelled context
// does: every player is told the host is closing and the final save is
// written. A delay is announced to the players; a later Shutdown replaces
// an earlier one still waiting.
func (s *Server) Shutdown(by string, delay time.Duration) error {
	a := &s.sess.admin
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stop == nil {
		return errors.New("the host is not serving")
	}
	if a.quit != nil {
		a.quit.Stop()
	}
	s.logAdmin(by, "shutdown", "delay", delay)
	if delay <= 0 {
		a.stop()
		return nil
	}
	text := fmt.Sprintf("The host shuts down in %v.", delay.Round(time.Second))
	if err := s.onSession(func() {
		s.sess.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: text})
	}); err != nil {
		return err
	}
	a.quit = time.AfterFunc(delay, a.stop)
	return nil
}

// serving records how to end Serve, for Shutdown.
func (a *adminState) serving(stop context.CancelFunc) {
	a.mu.Lock()
	a.stop = stop
	a.mu.Unlock()
}

// banned is the admission rule for bans: the player named name from the
// address key addr (a join, or a rejoin with its token's name).
func (a *adminState) banned(name, addr string) error {
	if b := a.bans.match(name, addr, time.Now()); b != nil {
		return &bannedError{ban: *b}
	}
	return nil
}

// lastSave is the record of the latest save attempt (writeSave keeps it).
func (h *history) lastSave() SaveRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.save == nil {
		return SaveRecord{}
	}
	return *h.save
}
