package roster

import (
	"cmp"
	"fmt"
	"slices"
)

// Status is where a player is in the session.
type Status uint8

// Player statuses.
const (
	Joining Status = iota
	Downloading
	Playing
)

// String names the status.
func (s Status) String() string {
	switch s {
	case Joining:
		return "joining"
	case Downloading:
		return "downloading"
	case Playing:
		return "playing"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// DefaultFaction is the faction every player joins for now: the shared
// colony of a co-op session.
const DefaultFaction int32 = 1

// Player is one admitted player.
type Player struct {
	ID      int32
	Name    string
	Faction int32
	Status  Status
}

// Notice is something players should be told, produced by a roster change.
type Notice struct {
	Kind NoticeKind
	Text string
}

// NoticeKind classifies a notice.
type NoticeKind uint8

// Notice kinds.
const (
	NoticeJoined NoticeKind = iota + 1
	NoticeLeft
	NoticeFactionOnline
)

// Roster is the set of admitted players. Its zero value is not usable; call
// New.
type Roster struct {
	max     int
	players []*Player // ascending ID
	byName  map[string]*Player
}

// New returns an empty roster admitting at most max players.
func New(max int) *Roster {
	return &Roster{max: max, byName: make(map[string]*Player)}
}

// Len is the number of admitted players.
func (r *Roster) Len() int { return len(r.players) }

// Admit checks the rules in order (name rules, name online, session full)
// and adds the player in status Downloading on the default faction. The
// notices say who joined and, when the player is the first of the faction
// online, that the faction is online.
func (r *Roster) Admit(id int32, name string) (*Player, []Notice, error) {
	if err := ValidateName(name); err != nil {
		return nil, nil, err
	}
	if _, ok := r.byName[foldName(name)]; ok {
		return nil, nil, ErrNameTaken
	}
	if len(r.players) >= r.max {
		return nil, nil, ErrFull
	}
	if r.Get(id) != nil {
		return nil, nil, fmt.Errorf("player id %d already admitted", id)
	}
	p := &Player{ID: id, Name: name, Faction: DefaultFaction, Status: Downloading}
	i, _ := slices.BinarySearchFunc(r.players, id, func(p *Player, id int32) int { return cmp.Compare(p.ID, id) })
	r.players = slices.Insert(r.players, i, p)
	r.byName[foldName(name)] = p
	notices := []Notice{{Kind: NoticeJoined, Text: name + " joined the session."}}
	if r.FactionOnline(p.Faction) == 1 {
		notices = append(notices, Notice{Kind: NoticeFactionOnline, Text: fmt.Sprintf("Faction %d is now online.", p.Faction)})
	}
	return p, notices, nil
}

// Get returns the player with id, or nil.
func (r *Roster) Get(id int32) *Player {
	for _, p := range r.players {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// SetStatus changes a player's status.
func (r *Roster) SetStatus(id int32, s Status) error {
	p := r.Get(id)
	if p == nil {
		return ErrUnknownPlayer
	}
	p.Status = s
	return nil
}

// Remove takes a player out and returns the notice to send, if the player
// was admitted.
func (r *Roster) Remove(id int32, why string) (Notice, bool) {
	for i, p := range r.players {
		if p.ID == id {
			r.players = slices.Delete(r.players, i, i+1)
			delete(r.byName, foldName(p.Name))
			text := p.Name + " left the session."
			if why != "" {
				text = fmt.Sprintf("%s left the session (%s).", p.Name, why)
			}
			return Notice{Kind: NoticeLeft, Text: text}, true
		}
	}
	return Notice{}, false
}

// FactionOnline counts the players of a faction.
func (r *Roster) FactionOnline(f int32) int {
	n := 0
	for _, p := range r.players {
		if p.Faction == f {
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
