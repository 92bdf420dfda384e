package wire

import "fmt"

// Reason is why a connection ended. The first six keep the seed protocol's
// numbers.
type Reason uint8

// Disconnect reasons.
const (
	ReasonGeneric               Reason = 0
	ReasonProtocol              Reason = 1
	ReasonDefs                  Reason = 2
	ReasonUsernameLength        Reason = 3
	ReasonUsernameChars         Reason = 4
	ReasonUsernameAlreadyOnline Reason = 5
	ReasonServerFull            Reason = 6
	ReasonBadPassword           Reason = 7
	ReasonTimeout               Reason = 8
	ReasonBadPacket             Reason = 9
	ReasonServerClosing         Reason = 10
	ReasonSlowClient            Reason = 11
	ReasonKicked                Reason = 12
	ReasonClockSync             Reason = 13
	ReasonRateLimited           Reason = 14
	ReasonSpectatorsFull        Reason = 15
	ReasonLagging               Reason = 16
	ReasonBadToken              Reason = 17
	ReasonReplaced              Reason = 18
	ReasonDesync                Reason = 19
	ReasonBanned                Reason = 20
	// ReasonBadArbiterSecret: a relay host refused a client's proof of
	// the arbiter secret (docs/protocol.md, section 14).
	ReasonBadArbiterSecret Reason = 21
)

var reasonNames = [...]string{
	ReasonGeneric:               "Generic",
	ReasonProtocol:              "Protocol",
	ReasonDefs:                  "Defs",
	ReasonUsernameLength:        "UsernameLength",
	ReasonUsernameChars:         "UsernameChars",
	ReasonUsernameAlreadyOnline: "UsernameAlreadyOnline",
	ReasonServerFull:            "ServerFull",
	ReasonBadPassword:           "BadPassword",
	ReasonTimeout:               "Timeout",
	ReasonBadPacket:             "BadPacket",
	ReasonServerClosing:         "ServerClosing",
	ReasonSlowClient:            "SlowClient",
	ReasonKicked:                "Kicked",
	ReasonClockSync:             "ClockSync",
	ReasonRateLimited:           "RateLimited",
	ReasonSpectatorsFull:        "SpectatorsFull",
	ReasonLagging:               "Lagging",
	ReasonBadToken:              "BadToken",
	ReasonReplaced:              "Replaced",
	ReasonDesync:                "Desync",
	ReasonBanned:                "Banned",
	ReasonBadArbiterSecret:      "BadArbiterSecret",
}

// String returns the reason's protocol name.
func (r Reason) String() string {
	if int(r) < len(reasonNames) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

var reasonSentences = [...]string{
	ReasonGeneric:               "The host refused the connection.",
	ReasonProtocol:              "The host and this client speak different protocol versions.",
	ReasonDefs:                  "Your game content does not match the host's.",
	ReasonUsernameLength:        "Usernames must be 3 to 15 characters long.",
	ReasonUsernameChars:         "Usernames may only contain letters, digits and underscores.",
	ReasonUsernameAlreadyOnline: "A player with that username is already online.",
	ReasonServerFull:            "The session is full.",
	ReasonBadPassword:           "The password is wrong or missing.",
	ReasonTimeout:               "The connection timed out.",
	ReasonBadPacket:             "The host received a malformed or unexpected packet.",
	ReasonServerClosing:         "The host is shutting down.",
	ReasonSlowClient:            "The connection was too slow to keep up with the session.",
	ReasonKicked:                "You were removed from the session.",
	ReasonClockSync:             "The host could not synchronise clocks with this client: the connection is too slow or unsteady.",
	ReasonRateLimited:           "Too many connection attempts from your address; wait a few seconds and try again.",
	ReasonSpectatorsFull:        "The session has no room for more spectators.",
	ReasonLagging:               "Your game fell too far behind the session.",
	ReasonBadToken:              "Your session token is unknown or expired; join again without it.",
	ReasonReplaced:              "You rejoined from a new connection; this one is closed.",
	ReasonDesync:                "Your game kept diverging from the host's; join again to get a fresh copy of the world.",
	ReasonBanned:                "You are banned from this session.",
	ReasonBadArbiterSecret:      "The arbiter secret is wrong.",
}

// Sentence is the reason as one sentence for a user.
func (r Reason) Sentence() string {
	if int(r) < len(reasonSentences) && reasonSentences[r] != "" {
		return reasonSentences[r]
	}
	return fmt.Sprintf("The host closed the connection (reason %d).", uint8(r))
}
