package wire

import "fmt"

// RejoinResult is Server_Session's answer to a held-world rejoin
// (Client_Username's Held): whether the host replays the commands the
// player missed, or why it sends the world instead (docs/protocol.md,
// section 6.6).
type RejoinResult uint8

// Rejoin results.
const (
	// RejoinNone: no held world was named (the key is left out).
	RejoinNone RejoinResult = 0
	// RejoinHeld: the host replays the commands since the held position
	// in Server_Tick packets, up to Server_Session's Granted; no world
	// follows.
	RejoinHeld RejoinResult = 1
	// RejoinWindow: the host no longer holds every command since the
	// held tick (its rejoin window passed, or it never had them).
	RejoinWindow RejoinResult = 2
	// RejoinAhead: the held position is past the host's own: the
	// client's tick is wrong, or the host went back to an older save.
	RejoinAhead RejoinResult = 3
	// RejoinUnchecked: the host accepted no hash report of this player
	// it could hold the world to (none compared yet, hashes off, or a
	// host that restarted and kept no record).
	RejoinUnchecked RejoinResult = 4
	// RejoinHashes: the named reports do not include the last one the
	// host accepted with the same world hash.
	RejoinHashes RejoinResult = 5
	// RejoinRepair: the player was found desynced and not repaired when
	// it dropped.
	RejoinRepair RejoinResult = 6
	// RejoinTooLarge: the commands to replay are more than the host
	// sends in place of a world.
	RejoinTooLarge RejoinResult = 7
	// RejoinNotPlaying: the token's player was not past WorldReady (its
	// join resumes instead), or is a spectator or the arbiter of a new
	// relay session.
	RejoinNotPlaying RejoinResult = 8
)

var rejoinNames = [...]string{
	RejoinNone:       "none",
	RejoinHeld:       "held",
	RejoinWindow:     "window",
	RejoinAhead:      "ahead",
	RejoinUnchecked:  "unchecked",
	RejoinHashes:     "hashes",
	RejoinRepair:     "repair",
	RejoinTooLarge:   "too_large",
	RejoinNotPlaying: "not_playing",
}

var rejoinSentences = [...]string{
	RejoinNone:       "",
	RejoinHeld:       "The host replays the commands you missed.",
	RejoinWindow:     "The host no longer holds every command since your tick; it sends the world.",
	RejoinAhead:      "The tick you rejoin from is past the host's (your client's tick is wrong, or the host went back to an older save); it sends the world.",
	RejoinUnchecked:  "The host has no accepted hash report of your world to trust it by; it sends the world.",
	RejoinHashes:     "Your hash reports do not match the last one the host accepted; it sends the world.",
	RejoinRepair:     "Your world was being repaired when you dropped; the host sends the world.",
	RejoinTooLarge:   "The commands you missed are more than the host replays; it sends the world.",
	RejoinNotPlaying: "You were not playing when you dropped; the host sends the world.",
}

// Limits of a held-world rejoin's replay (Server_Session's Replay): its
// compressed bytes, within a client's 1 MiB frame with room to spare,
// and what they inflate to.
const (
	MaxReplayBytes = 768 << 10
	MaxReplayRaw   = 4 << 20
)

// RejoinResults is the number of rejoin results there are.
const RejoinResults = len(rejoinNames)

// String is the result's name, for logs and metrics.
func (r RejoinResult) String() string {
	if int(r) < len(rejoinNames) {
		return rejoinNames[r]
	}
	return fmt.Sprintf("RejoinResult(%d)", uint8(r))
}

// Sentence is the result's meaning for a person.
func (r RejoinResult) Sentence() string {
	if int(r) < len(rejoinSentences) {
		return rejoinSentences[r]
	}
	return "The host sends the world."
}

// Fallback reports whether the result sends the world: anything but
// RejoinNone and RejoinHeld. A client takes a result it does not know
// as one.
func (r RejoinResult) Fallback() bool { return r > RejoinHeld }
