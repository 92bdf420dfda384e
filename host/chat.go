package host

import (
	"errors"
	"time"
	"unicode/utf8"

	"github.com/lockhost/lockhost/internal/ratelimit"
	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/lockhost/lockhost/wire"
)

// ChatRecord is one chat line in an Overview.
type ChatRecord struct {
	At time.Time
	// PlayerID and Name are the speaker's; both are zero for a line the
	// host's operator said (Server.Say), which By then names.
	PlayerID int32
	Name     string
	By       string
	Text     string
}

// errLeft ends a connection whose client sent Client_Leave.
var errLeft = errors.New("the client left")

// anyPhase handles the packets a member may send in every phase after
// admission: keepalive echoes, chat and a leave. It reports whether id
// was one of them; the error ends the connection (errLeft for a leave).
func (p *peer) anyPhase(id wire.ID, body []byte) (bool, error) {
	if id == wire.IDClientUpload {
		return true, p.upload(body) // relay mode's (relaypeer.go); refused from anyone but the arbiter
	}
	switch id {
	case wire.IDClientKeepalive, wire.IDClientChat, wire.IDClientLeave:
	default:
		return false, nil
	}
	pkt, err := wire.Decode(id, body)
	if err != nil {
		return true, refuse(wire.ReasonBadPacket, "%s", err)
	}
	switch pkt := pkt.(type) {
	case *wire.ClientKeepalive:
		p.keepalive(pkt)
	case *wire.ClientChat:
		text := chatText(pkt.Text)
		if text == "" {
			return true, nil // nothing left to say
		}
		sess, conn, pid := p.srv.sess, p.conn, p.id
		if !sess.call(func() { sess.chat(pid, conn, text) }) {
			return true, errLeft
		}
	case *wire.ClientLeave:
		p.log.Debug("client leaving", "why", termsafe.Strip(pkt.Why))
		return true, errLeft
	}
	return true, nil
}

// chatText is a chat line as others see it: control characters removed,
// spaces trimmed, at most wire.MaxChatBytes (cut at a character). Kick
// and ban reasons, which others see too, are cleaned the same way.
func chatText(s string) string {
	s = trimSpace(termsafe.Strip(s))
	if len(s) <= wire.MaxChatBytes {
		return s
	}
	cut := wire.MaxChatBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// trimSpace trims ASCII spaces: Strip has already turned the other
// blanks that matter into them.
func trimSpace(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

// call runs fn on the session goroutine. It reports false when the
// session has ended.
func (s *session) call(fn func()) bool {
	select {
	case s.calls <- fn:
		return true
	case <-s.done:
		return false
	}
}

// chat relays a member's line to everyone, within the member's chat
// rate. Session goroutine only.
func (s *session) chat(id int32, c *conn, text string) {
	m := s.members[id]
	if m == nil || m.conn != c {
		return // it left, or a rejoin replaced this connection
	}
	now := time.Now()
	if !m.conduct.chat.Take(now, s.cfg.ChatRate, float64(s.cfg.ChatBurst)) {
		s.stats.update(func(st *Stats) { st.ChatsRefused++ })
		if now.Sub(m.conduct.chatRefused) >= time.Second {
			m.conduct.chatRefused = now
			c.sendPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: "Chat refused: you are chatting too fast; wait a moment."})
		}
		return
	}
	s.relayChat(ChatRecord{At: now, PlayerID: id, Name: m.name, Text: text})
}

// relayChat sends a chat line to everyone, logs it and keeps it for the
// status page. Session goroutine only.
func (s *session) relayChat(r ChatRecord) {
	s.broadcastPacket(&wire.ServerChat{Name: r.Name, PlayerID: r.PlayerID, Text: r.Text})
	s.stats.update(func(st *Stats) { st.Chats++ })
	if r.Name == "" {
		s.cfg.Logger.Info("chat", "from", "host", "by", r.By, "text", r.Text)
	} else {
		s.cfg.Logger.Info("chat", "player", r.PlayerID, "name", r.Name, "text", r.Text)
	}
	s.pub.history.chatted(r)
}

// Say sends a chat line from the host itself to every player (a
// Server_Chat with no speaker; the join tool shows "chat: [host] text"),
// as the admin say command does; by names who said it, for the log and
// the status page. Tabs and line ends become spaces, other control
// characters are dropped and the line is cut at MaxSayText bytes; an
// empty line is an error. It is an admin action: logged with who did
// it, and counted.
func (s *Server) Say(by, text string) error {
	text = chatText(text)
	if text == "" {
		return errors.New("nothing to say")
	}
	by = termsafe.Strip(by)
	err := s.onSession(func() { s.sess.relayChat(ChatRecord{At: time.Now(), By: by, Text: text}) })
	if err == nil {
		s.logAdmin(by, "say", "text", text)
	}
	return err
}

// chatLimit is a player's chat budget, kept in its conduct across
// rejoins.
type chatLimit = ratelimit.Bucket
