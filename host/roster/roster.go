package roster

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/lockhost/lockhost/wire"
)

// A player's status (wire.PlayerStatus) and a notice's kind
// (wire.NoticeKind) are the protocol's types, used here as they are: the
// protocol owns their values, and a roster player or notice goes into a
// packet without conversion. A player enters the roster
// wire.StatusDownloading (Admit); wire.StatusJoining is never a roster
// player's.

// FactionMode says how players are put into factions.
type FactionMode uint8

// Faction modes.
const (
	// FactionsShared puts every player in DefaultFaction: one colony.
	FactionsShared FactionMode = iota
	// FactionsPerPlayer gives each player a faction of their own.
	FactionsPerPlayer
)

// String is the mode's name, as ParseFactionMode reads it.
func (m FactionMode) String() string {
	switch m {
	case FactionsShared:
		return "shared"
	case FactionsPerPlayer:
		return "per-player"
	}
	return fmt.Sprintf("FactionMode(%d)", uint8(m))
}

// ParseFactionMode reads "shared" or "per-player".
func ParseFactionMode(s string) (FactionMode, error) {
	switch s {
	case "shared", "":
		return FactionsShared, nil
	case "per-player":
		return FactionsPerPlayer, nil
	}
	return 0, fmt.Errorf("faction mode %q: use shared or per-player", s)
}

// DefaultFaction is the faction of every player in FactionsShared mode.
const DefaultFaction int32 = 1

// NoFaction is the faction of spectators.
const NoFaction int32 = 0

// Player is one admitted player or spectator.
type Player struct {
	ID        int32
	Name      string
	Faction   int32
	Status    wire.PlayerStatus
	Spectator bool
	// LatencyMs is the last measured round trip in milliseconds.
	LatencyMs int32
}

// Notice is something players should be told, produced by a roster change.
type Notice struct {
	Kind wire.NoticeKind
	Text string
}

// Config sets the roster's limits. MaxPlayers 0 admits no players.
type Config struct {
	MaxPlayers    int
	MaxSpectators int
	Factions      FactionMode
}

// Roster is the set of admitted players and spectators. Use New.
type Roster struct {
	cfg     Config
	players []*Player // ascending ID
	byName  map[string]*Player
}

// New returns an empty roster.
func New(cfg Config) *Roster {
	return &Roster{cfg: cfg, byName: make(map[string]*Player)}
}

// Len is the number of admitted players and spectators.
func (r *Roster) Len() int { return len(r.players) }

// Count returns how many players and how many spectators are admitted.
func (r *Roster) Count() (players, spectators int) {
	for _, p := range r.players {
		if p.Spectator {
			spectators++
		} else {
			players++
		}
	}
	return players, spectators
}

// Check applies the admission rules in order without admitting anyone:
// name length and characters, name online (case-insensitive), then room
// (players and spectators are counted separately).
func (r *Roster) Check(name string, spectator bool) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if _, ok := r.byName[foldName(name)]; ok {
		return ErrNameTaken
	}
	players, spectators := r.Count()
	if spectator && spectators >= r.cfg.MaxSpectators {
		return ErrSpectatorsFull
	}
	if !spectator && players >= r.cfg.MaxPlayers {
		return ErrFull
	}
	return nil
}

// Admit checks the rules and adds the player in status wire.StatusDownloading. The
// notices say who joined and, when the player is the first of its faction
// online, that the faction is online.
func (r *Roster) Admit(id int32, name string, spectator bool) (*Player, []Notice, error) {
	if err := r.Check(name, spectator); err != nil {
		return nil, nil, err
	}
	if r.Get(id) != nil {
		return nil, nil, fmt.Errorf("player id %d already admitted", id)
	}
	p := &Player{ID: id, Name: name, Status: wire.StatusDownloading, Spectator: spectator}
	switch {
	case spectator:
		p.Faction = NoFaction
	case r.cfg.Factions == FactionsPerPlayer:
		p.Faction = DefaultFaction + id
	default:
		p.Faction = DefaultFaction
	}
	i, _ := slices.BinarySearchFunc(r.players, id, func(p *Player, id int32) int { return cmp.Compare(p.ID, id) })
	r.players = slices.Insert(r.players, i, p)
	r.byName[foldName(name)] = p
	what := "joined the session."
	if spectator {
		what = "is watching the session."
	}
	notices := []Notice{{Kind: wire.NoticeJoined, Text: name + " " + what}}
	if !spectator && r.FactionOnline(p.Faction) == 1 {
		notices = append(notices, Notice{Kind: wire.NoticeFactionOnline, Text: fmt.Sprintf("Faction %d is now online.", p.Faction)})
	}
	return p, notices, nil
}

// Get returns the player with id, or nil.
func (r *Roster) Get(id int32) *Player {
	i, ok := slices.BinarySearchFunc(r.players, id, func(p *Player, id int32) int { return cmp.Compare(p.ID, id) })
	if !ok {
		return nil
	}
	return r.players[i]
}

// Named returns the player online under name (case-insensitive), or nil.
func (r *Roster) Named(name string) *Player { return r.byName[foldName(name)] }

// SetStatus changes a player's status.
func (r *Roster) SetStatus(id int32, s wire.PlayerStatus) error {
	p := r.Get(id)
	if p == nil {
		return ErrUnknownPlayer
	}
	p.Status = s
	return nil
}

// SetLatency records a player's measured round trip.
func (r *Roster) SetLatency(id int32, ms int32) error {
	p := r.Get(id)
	if p == nil {
		return ErrUnknownPlayer
	}
	p.LatencyMs = ms
	return nil
}

// Remove takes a player out. It returns the notices to send (left, and
// faction offline when the last player of a faction left) and whether the
// player was admitted.
func (r *Roster) Remove(id int32, why string) ([]Notice, bool) {
	i, ok := slices.BinarySearchFunc(r.players, id, func(p *Player, id int32) int { return cmp.Compare(p.ID, id) })
	if !ok {
		return nil, false
	}
	p := r.players[i]
	r.players = slices.Delete(r.players, i, i+1)
	delete(r.byName, foldName(p.Name))
	text := p.Name + " left the session."
	if why != "" {
		text = fmt.Sprintf("%s left the session (%s).", p.Name, why)
	}
	notices := []Notice{{Kind: wire.NoticeLeft, Text: text}}
	if !p.Spectator && r.FactionOnline(p.Faction) == 0 {
		notices = append(notices, Notice{Kind: wire.NoticeFactionOffline, Text: fmt.Sprintf("Faction %d is now offline.", p.Faction)})
	}
	return notices, true
}

// FactionOnline counts the players (not spectators) of a faction.
func (r *Roster) FactionOnline(f int32) int {
	n := 0
	for _, p := range r.players {
		if p.Faction == f && !p.Spectator {
			n++
		}
	}
	return n
}

// List returns a copy of the players in ID order.
func (r *Roster) List() []Player {
	out := make([]Player, len(r.players))
	for i, p := range r.players {
		out[i] = *p
	}
	return out
}
