package wire

import "fmt"

// MaxChatBytes bounds a chat line on the wire, in both directions: 256
// bytes is two full terminal lines of text, enough for a sentence or a
// short paste, and keeps one broadcast small (a line to MaxPlayers
// clients is at most a quarter MiB of queued frames).
const MaxChatBytes = 256

// MaxLeaveWhyBytes bounds the reason a client gives for leaving.
const MaxLeaveWhyBytes = 64

// ClientLeave says the client is leaving on purpose (Ctrl-C, a script
// done), so the others are told it left rather than that its connection
// was lost. The host closes the connection on it; Why is for the host's
// log only.
type ClientLeave struct {
	Why string `codec:"w"`
}

// ID implements Packet.
func (*ClientLeave) ID() ID { return IDClientLeave }

// Validate implements Packet.
func (p *ClientLeave) Validate() error {
	if len(p.Why) > MaxLeaveWhyBytes {
		return fmt.Errorf("leave reason of %d bytes exceeds %d", len(p.Why), MaxLeaveWhyBytes)
	}
	return nil
}

// ClientChat is a line of chat from a player (or a spectator) for
// everyone in the session.
type ClientChat struct {
	Text string `codec:"t"`
}

// ID implements Packet.
func (*ClientChat) ID() ID { return IDClientChat }

// Validate implements Packet.
func (p *ClientChat) Validate() error {
	if len(p.Text) > MaxChatBytes {
		return fmt.Errorf("chat line of %d bytes exceeds %d", len(p.Text), MaxChatBytes)
	}
	return nil
}

// ServerChat is a line of chat as the host relays it to everyone: who
// said it and what, control characters already removed. A line from the
// host itself (its operator) has an empty Name and PlayerID 0.
type ServerChat struct {
	Name     string `codec:"n"`
	PlayerID int32  `codec:"p"`
	Text     string `codec:"t"`
}

// ID implements Packet.
func (*ServerChat) ID() ID { return IDServerChat }

// FromHost reports whether the line is the host's own, not a player's.
func (p *ServerChat) FromHost() bool { return p.Name == "" }

// Validate implements Packet.
func (p *ServerChat) Validate() error {
	if len(p.Name) > MaxNameBytes {
		return fmt.Errorf("chat speaker name of %d bytes", len(p.Name))
	}
	if len(p.Text) > MaxChatBytes {
		return fmt.Errorf("chat line of %d bytes exceeds %d", len(p.Text), MaxChatBytes)
	}
	return nil
}
