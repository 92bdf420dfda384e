package join

import (
	"time"

	"github.com/lockhost/lockhost/wire"
)

// ChatLine is a line of chat the host relays (Config.Chat).
type ChatLine struct {
	// From is the speaker's name; empty for a line of the host's own
	// (its operator's).
	From string
	// PlayerID is the speaker's player ID (0 for the host).
	PlayerID int32
	Text     string
}

// FromHost reports whether the line is the host's own, not a player's.
func (c ChatLine) FromHost() bool { return c.From == "" }

// Player is one player of the session, as the host lists them
// (Config.Players, Session.Players).
type Player struct {
	ID      int32
	Name    string
	Faction int32
	// Status is the player's status, named: "joining", "downloading",
	// "playing", "spectating" or "desynced" (docs/protocol.md, 5.4).
	Status    string
	Spectator bool
	// Latency is the round trip the host measured (0 until measured).
	Latency time.Duration
}

// DesyncKind says what a DesyncEvent reports.
type DesyncKind uint8

// Desync event kinds.
const (
	// DesyncDetected: the player's state diverged from the reference at
	// Tick; a repair is under way.
	DesyncDetected DesyncKind = iota
	// DesyncRepaired: the player's state matches the reference again.
	DesyncRepaired
	// DesyncDropped: the player kept diverging and was disconnected.
	DesyncDropped
)

// String names the kind: "detected", "repaired" or "dropped".
func (k DesyncKind) String() string {
	switch k {
	case DesyncDetected:
		return "detected"
	case DesyncRepaired:
		return "repaired"
	case DesyncDropped:
		return "dropped"
	}
	return "unknown"
}

// DesyncEvent is one of the host's desync events (Config.Desync), about
// this client or another player.
type DesyncEvent struct {
	Kind     DesyncKind
	PlayerID int32
	Name     string
	// Tick is the checkpoint the divergence was found at.
	Tick uint64
	// Maps are the maps that diverged; World is set when the world state
	// outside the maps did (Maps may then be empty).
	Maps  []int32
	World bool
	// Repair is how long the repair took (DesyncRepaired only).
	Repair time.Duration
}

// chatLineOf is the wire packet as a ChatLine.
func chatLineOf(c *wire.ServerChat) ChatLine {
	return ChatLine{From: c.Name, PlayerID: c.PlayerID, Text: c.Text}
}

// playersOf is the wire list as Players.
func playersOf(list []wire.PlayerInfo) []Player {
	out := make([]Player, len(list))
	for i, p := range list {
		out[i] = Player{ID: p.ID, Name: p.Name, Faction: p.Faction, Status: p.Status.String(), Spectator: p.Spectator,
			Latency: time.Duration(p.LatencyMs) * time.Millisecond}
	}
	return out
}

// desyncEventOf is the wire packet as a DesyncEvent; a state this client
// does not know is passed on as a DesyncKind of that number.
func desyncEventOf(d *wire.ServerDesync) DesyncEvent {
	kind := DesyncKind(d.State)
	switch d.State {
	case wire.DesyncDetected:
		kind = DesyncDetected
	case wire.DesyncRepaired:
		kind = DesyncRepaired
	case wire.DesyncDropped:
		kind = DesyncDropped
	}
	return DesyncEvent{Kind: kind, PlayerID: d.PlayerID, Name: d.Name, Tick: d.Tick, Maps: d.Maps, World: d.World,
		Repair: time.Duration(d.RepairMs) * time.Millisecond}
}
