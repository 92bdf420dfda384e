package join

import (
	"fmt"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// leaveWait bounds how long Leave waits for the host to hang up.
const leaveWait = 2 * time.Second

// Chat sends a line of chat to everyone in the session. The host removes
// control characters, may refuse the line if this player chats too fast
// (a notice says so) and relays it to everyone, this client included
// (Config.Chat). Safe from any goroutine.
func (s *Session) Chat(text string) error {
	if len(text) > wire.MaxChatBytes {
		return fmt.Errorf("a chat line is at most %d bytes; this one is %d", wire.MaxChatBytes, len(text))
	}
	return s.write(&wire.ClientChat{Text: text})
}

// Leave leaves the session on purpose: the host is told (so the others
// see this player left, not that its connection was lost), Leave waits
// up to two seconds for the host to hang up, then closes the session. why
// (at most wire.MaxLeaveWhyBytes) is for the host's log. Run leaves this
// way by itself when its context is done. Call it from the goroutine
// that ran Join or Run, not while Run runs on another.
func (s *Session) Leave(why string) error {
	defer s.Close()
	if len(why) > wire.MaxLeaveWhyBytes {
		why = why[:wire.MaxLeaveWhyBytes]
	}
	if err := s.write(&wire.ClientLeave{Why: why}); err != nil {
		return err
	}
	return s.awaitHangUp()
}

// LeaveNow leaves the session on purpose as Leave does, but closes the
// connection right after Client_Leave rather than wait for the host to
// hang up: for a client going away this instant, such as a browser page
// being unloaded, which gets no chance to wait. Over WebSocket the close
// is a closing handshake that follows the leave, so the host reads the
// leave first; over TCP, Leave is safer (docs/protocol.md, 6.5). Safe
// from any goroutine, also while Run runs, which then ends.
func (s *Session) LeaveNow(why string) error {
	defer s.Close()
	if len(why) > wire.MaxLeaveWhyBytes {
		why = why[:wire.MaxLeaveWhyBytes]
	}
	return s.write(&wire.ClientLeave{Why: why})
}

// awaitHangUp waits, up to leaveWait, for the host to close the
// connection after a leave, throwing away what arrives meanwhile. The
// host closes it when it reads the leave; closing first, with the host's
// packets unread, could reset the connection before the host reads the
// leave.
func (s *Session) awaitHangUp() error {
	t := time.NewTimer(leaveWait)
	defer t.Stop()
	for {
		select {
		case in := <-s.in:
			if in.err != nil {
				return nil // the host hung up
			}
		case <-t.C:
			return fmt.Errorf("the host did not close the connection within %v of the leave", leaveWait)
		case <-s.closed:
			return nil
		}
	}
}

// chatFrom hands a relayed chat line to Config.Chat.
func (s *Session) chatFrom(c *wire.ServerChat) error {
	if s.cfg.Chat != nil {
		s.cfg.Chat(chatLineOf(c))
	}
	return nil
}
