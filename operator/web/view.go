package web

import (
	"path/filepath"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/wire"
)

// The JSON of /api/overview and /events. Times are RFC 3339 in UTC (null
// when unknown), durations are float milliseconds, sizes are bytes. Lists
// are never null.

// overviewJSON is the whole session.
type overviewJSON struct {
	// ServedAt is the host's clock when this JSON was made: ages on the
	// page are measured from it, not from the browser's clock.
	ServedAt *time.Time `json:"served_at"`
	// At is when the session goroutine took the picture; AgeMs is ServedAt
	// minus At; Stale says the session has not published for too long.
	At             *time.Time   `json:"at"`
	AgeMs          float64      `json:"age_ms"`
	Stale          bool         `json:"stale"`
	Started        *time.Time   `json:"started"`
	UptimeMs       float64      `json:"uptime_ms"`
	Game           string       `json:"game"`
	Tick           uint64       `json:"tick"`
	TickRate       int          `json:"tick_rate"`
	Speed          int          `json:"speed"`
	TicksPerSecond float64      `json:"ticks_per_second"`
	Holding        bool         `json:"holding"`
	TLS            bool         `json:"tls"`
	Password       bool         `json:"password"`
	MaxPlayers     int          `json:"max_players"`
	HashEvery      int          `json:"hash_every"`
	MaxLag         uint64       `json:"max_lag"`
	JoinPhases     []string     `json:"join_phases"`
	Players        []playerJSON `json:"players"`
	Maps           []mapJSON    `json:"maps"`
	// MapPictures says /maps/ID.png draws the maps; NoMapPictures why
	// not when it does not (a relay host runs no world of its own).
	MapPictures   bool         `json:"map_pictures"`
	NoMapPictures string       `json:"no_map_pictures"`
	Joins         []joinJSON   `json:"joins"`
	Unnamed       uint64       `json:"unnamed"` // join attempts that ended before a name, not listed
	Desyncs       []desyncJSON `json:"desyncs"`
	Chat          []chatJSON   `json:"chat"`
	LastSave      *saveJSON    `json:"last_save"`
	Stats         statsJSON    `json:"stats"`
	// Window is the rejoin window: commands kept, their bytes, and the
	// tick from which every command is kept.
	Window  windowJSON  `json:"rejoin_window"`
	Uploads uploadsJSON `json:"uploads"`
	// Agones is what the host last told Agones; null outside Agones.
	Agones *agonesJSON `json:"agones"`
	// PortMapping is the router's forwarding of the game port; null when
	// the host does not say.
	PortMapping *portMappingJSON `json:"port_mapping"`
}

// portMappingJSON is the Internet card: the port mapping's state, the
// protocol the router answered, the external address and the line a
// friend types, or why there is none.
type portMappingJSON struct {
	State    string `json:"state"`
	Method   string `json:"method,omitempty"`
	External string `json:"external,omitempty"`
	Join     string `json:"join,omitempty"`
	Error    string `json:"error,omitempty"`
}

// agonesJSON is the Agones card: the GameServer state the host set, the
// size of the players List, and its health pings (LastPingAgoMs is
// ServedAt minus LastPing; both null before the first ping).
type agonesJSON struct {
	State         string     `json:"state"`
	Players       int        `json:"players"`
	HealthPings   int64      `json:"health_pings"`
	LastPing      *time.Time `json:"last_ping"`
	LastPingAgoMs *float64   `json:"last_ping_ago_ms"`
}

// agonesView is a's JSON as of now.
func agonesView(a Agones, now time.Time) *agonesJSON {
	v := &agonesJSON{State: a.State, Players: a.Players, HealthPings: a.HealthPings, LastPing: stamp(a.LastPing)}
	if !a.LastPing.IsZero() {
		ago := ms(now.Sub(a.LastPing))
		v.LastPingAgoMs = &ago
	}
	return v
}

type playerJSON struct {
	ID          int32   `json:"id"`
	Name        string  `json:"name"`
	Spectator   bool    `json:"spectator"`
	Status      string  `json:"status"`
	Faction     int32   `json:"faction"`
	LatencyMs   float64 `json:"latency_ms"`
	TicksBehind uint64  `json:"ticks_behind"`
	Repairing   bool    `json:"repairing"`
	Unverified  bool    `json:"unverified"`
	// AcceptedTick is the tick of the last state-hash report the host
	// compared and accepted from the player (0: none yet).
	AcceptedTick uint64     `json:"accepted_tick"`
	Since        *time.Time `json:"since"`
	// Path is the way the player's connection came: lan, direct,
	// punched, turn-udp, turn-tcp, turn-tls or turn.
	Path string `json:"path"`
}

// uploadsJSON is the world transfers: the cap on all of them together in
// bytes per second (0: none), the slots (0: no limit), the joins whose
// worlds are on their way and the names of those waiting, first in line
// first.
type uploadsJSON struct {
	Rate    float64        `json:"rate"`
	Slots   int            `json:"slots"`
	Sending []transferJSON `json:"sending"`
	Waiting []string       `json:"waiting"`
}

// transferJSON is one join's world on its way: bytes acknowledged of the
// total, since when, and the estimated time left (null: not known yet).
type transferJSON struct {
	Name    string     `json:"name"`
	Acked   uint64     `json:"acked"`
	Total   uint64     `json:"total"`
	Started *time.Time `json:"started"`
	EtaMs   *float64   `json:"eta_ms"`
}

// uploadsView is u's JSON.
func uploadsView(u host.UploadsView) uploadsJSON {
	v := uploadsJSON{Rate: u.Rate, Slots: u.Slots, Sending: make([]transferJSON, 0, len(u.Sending)), Waiting: append([]string{}, u.Waiting...)}
	for _, t := range u.Sending {
		tj := transferJSON{Name: t.Name, Acked: t.Acked, Total: t.Total, Started: stamp(t.Started)}
		if t.ETA > 0 {
			e := ms(t.ETA)
			tj.EtaMs = &e
		}
		v.Sending = append(v.Sending, tj)
	}
	return v
}

type mapJSON struct {
	ID int32 `json:"id"`
	// Width and Height are the map's size in cells (0 when unknown).
	Width       int        `json:"width"`
	Height      int        `json:"height"`
	RawBytes    uint64     `json:"raw_bytes"`
	Bytes       uint64     `json:"bytes"`
	CheckedTick uint64     `json:"checked_tick"`
	CheckedAt   *time.Time `json:"checked_at"`
	Matched     bool       `json:"matched"`
}

type phaseJSON struct {
	Phase string  `json:"phase"`
	Ms    float64 `json:"ms"`
}

type joinJSON struct {
	At        *time.Time  `json:"at"`
	Remote    string      `json:"remote"`
	Name      string      `json:"name"`
	Spectator bool        `json:"spectator"`
	Rejoin    bool        `json:"rejoin"`
	Outcome   string      `json:"outcome"`
	Reason    string      `json:"reason"`
	Phases    []phaseJSON `json:"phases"`
	TotalMs   float64     `json:"total_ms"`
	Bytes     uint64      `json:"bytes"`
	// Retries counts the join's connections after the first (dropped
	// before WorldReady and resumed); ResumedBytes the payload not sent
	// again because the joiner held it.
	Retries      int    `json:"retries"`
	ResumedBytes uint64 `json:"resumed_bytes"`
	// Path is the way the connection came, as a player's path says it.
	Path string `json:"path"`
}

type desyncJSON struct {
	At       *time.Time `json:"at"`
	Player   int32      `json:"player"`
	Name     string     `json:"name"`
	Event    string     `json:"event"`
	Tick     uint64     `json:"tick"`
	Maps     []int32    `json:"maps"`
	RepairMs float64    `json:"repair_ms"`
	// Reference says whose hashes a detected desync differed from:
	// "host", "arbiter" or "majority k of n players".
	Reference string `json:"reference,omitempty"`
	// Explanation is where the desync began and what differed
	// (explained only): "tick 250: map 0 / pawn 615 / x: 12 vs 13".
	Explanation string `json:"explanation,omitempty"`
}

// chatJSON is one chat line; a line of the host's own has an empty name
// and player 0, and by names who said it.
type chatJSON struct {
	At     *time.Time `json:"at"`
	Player int32      `json:"player"`
	Name   string     `json:"name"`
	By     string     `json:"by"`
	Text   string     `json:"text"`
}

type saveJSON struct {
	At *time.Time `json:"at"`
	// File is the save's file name, without the folder.
	File  string  `json:"file"`
	Tick  uint64  `json:"tick"`
	Bytes uint64  `json:"bytes"`
	Ms    float64 `json:"ms"`
	Final bool    `json:"final"`
	Error string  `json:"error"`
}

type statsJSON struct {
	BytesSent       uint64 `json:"bytes_sent"`
	Commands        uint64 `json:"commands"`
	CommandsRefused uint64 `json:"commands_refused"`
	JoinPoints      int    `json:"join_points"`
	Saves           int    `json:"saves"`
	SaveErrors      int    `json:"save_errors"`
	Checkpoints     int    `json:"checkpoints"`
	HashReports     int    `json:"hash_reports"`
	Desyncs         int    `json:"desyncs"`
	Repaired        int    `json:"repaired"`
	DesyncDrops     int    `json:"desync_drops"`
	ResyncBytes     uint64 `json:"resync_bytes"`
	// RefusedBy splits commands_refused by reason: rate, spectator,
	// invalid.
	RefusedBy    map[string]uint64 `json:"refused_by"`
	Chats        uint64            `json:"chats"`
	ChatsRefused uint64            `json:"chats_refused"`
	// Leaves are players who left on purpose; Drops those whose
	// connection ended otherwise.
	Leaves       uint64 `json:"leaves"`
	Drops        uint64 `json:"drops"`
	AdminActions uint64 `json:"admin_actions"`
	// The defences against attacks from many addresses: connections
	// not admitted yet (now) and those evicted to make room; passwords
	// checked and found wrong, guesses refused unchecked, password
	// puzzles set and the difficulty a newcomer gets now (0: none).
	Pending        int    `json:"pending"`
	PendingEvicted uint64 `json:"pending_evicted"`
	PasswordChecks uint64 `json:"password_checks"`
	PasswordsWrong uint64 `json:"passwords_wrong"`
	GuessesRefused uint64 `json:"guesses_refused"`
	PuzzlesIssued  uint64 `json:"puzzles_issued"`
	PuzzleBits     int    `json:"puzzle_bits"`
	// Rejoins of players past WorldReady: from the world they held (the
	// commands missed replayed, RejoinReplayedBytes of them) or with a
	// download; RejoinFallbacks counts, by reason, the held worlds the
	// host turned down (docs/protocol.md, section 6.6).
	RejoinsHeld         int            `json:"rejoins_held"`
	RejoinsDownloaded   int            `json:"rejoins_downloaded"`
	RejoinReplayedBytes uint64         `json:"rejoin_replayed_bytes"`
	RejoinFallbacks     map[string]int `json:"rejoin_fallbacks"`
}

// windowJSON is the rejoin window (host.WindowView).
type windowJSON struct {
	Commands int    `json:"commands"`
	Bytes    int64  `json:"bytes"`
	From     uint64 `json:"from_tick"`
}

// rejoinFallbacks is the held worlds turned down, by reason name; never
// nil.
func rejoinFallbacks(st host.Stats) map[string]int {
	out := map[string]int{}
	for r, n := range st.RejoinFallbacks {
		if n > 0 {
			out[wire.RejoinResult(r).String()] = n
		}
	}
	return out
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stamp is t in UTC, or nil when t is zero.
func stamp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// view turns an Overview into its JSON as of now; staleAfter is how old
// the picture may be before it counts as stale.
func view(o host.Overview, now time.Time, staleAfter time.Duration) overviewJSON {
	v := overviewJSON{
		ServedAt: stamp(now), At: stamp(o.At), Started: stamp(o.Started),
		Game: o.Game, Tick: o.Tick, TickRate: o.TickRate, Speed: o.Speed, TicksPerSecond: o.TicksPerSecond, MaxLag: o.MaxLag,
		Holding: o.Holding, TLS: o.TLS, Password: o.Password, MaxPlayers: o.MaxPlayers, HashEvery: o.HashEvery,
		JoinPhases: host.JoinPhases, MapPictures: o.MapPictures, NoMapPictures: o.NoMapPictures,
		Players: make([]playerJSON, 0, len(o.Players)),
		Maps:    make([]mapJSON, 0, len(o.Maps)),
		Joins:   make([]joinJSON, 0, len(o.Joins)),
		Unnamed: o.Unnamed,
		Desyncs: make([]desyncJSON, 0, len(o.Desyncs)),
		Stats: statsJSON{
			BytesSent: o.Stats.BytesSent, Commands: o.Stats.Commands, CommandsRefused: o.Stats.CommandsRefused,
			JoinPoints: o.Stats.JoinPoints, Saves: o.Stats.Saves, SaveErrors: o.Stats.SaveErrors,
			Checkpoints: o.Stats.Checkpoints, HashReports: o.Stats.HashReports, Desyncs: o.Stats.Desyncs,
			Repaired: o.Stats.Repaired, DesyncDrops: o.Stats.DesyncDrops, ResyncBytes: o.Stats.ResyncBytes,
			RefusedBy: map[string]uint64{"rate": o.Stats.RefusedRate, "spectator": o.Stats.RefusedSpectator,
				"invalid": o.Stats.RefusedInvalid},
			Chats: o.Stats.Chats, ChatsRefused: o.Stats.ChatsRefused, Leaves: o.Stats.Leaves, Drops: o.Stats.Drops,
			AdminActions: o.Stats.AdminActions,
			Pending:      o.Stats.Pending, PendingEvicted: o.Stats.PendingEvicted,
			PasswordChecks: o.Stats.PasswordChecks, PasswordsWrong: o.Stats.PasswordsWrong,
			GuessesRefused: o.Stats.GuessesRefused, PuzzlesIssued: o.Stats.PuzzlesIssued, PuzzleBits: o.Stats.PuzzleBits,
			RejoinsHeld: o.Stats.RejoinsHeld, RejoinsDownloaded: o.Stats.RejoinsDownloaded,
			RejoinReplayedBytes: o.Stats.RejoinReplayedBytes, RejoinFallbacks: rejoinFallbacks(o.Stats),
		},
		Chat:    make([]chatJSON, 0, len(o.Chat)),
		Window:  windowJSON{Commands: o.Window.Commands, Bytes: o.Window.Bytes, From: o.Window.From},
		Uploads: uploadsView(o.Uploads),
	}
	if o.At.IsZero() {
		v.Stale = true
	} else {
		age := now.Sub(o.At)
		v.AgeMs = ms(age)
		v.Stale = age > staleAfter
	}
	if !o.Started.IsZero() {
		v.UptimeMs = ms(now.Sub(o.Started))
	}
	for _, p := range o.Players {
		v.Players = append(v.Players, playerJSON{
			ID: p.ID, Name: p.Name, Spectator: p.Spectator, Status: p.Status, Faction: p.Faction,
			LatencyMs: ms(p.Latency), TicksBehind: p.TicksBehind, Repairing: p.Repairing, Unverified: p.Unverified, AcceptedTick: p.Accepted, Since: stamp(p.Since),
			Path: p.Path,
		})
	}
	for _, m := range o.Maps {
		v.Maps = append(v.Maps, mapJSON{ID: m.ID, Width: m.Width, Height: m.Height, RawBytes: m.RawBytes, Bytes: m.Bytes,
			CheckedTick: m.CheckedTick, CheckedAt: stamp(m.CheckedAt), Matched: m.Matched})
	}
	for _, j := range o.Joins {
		phases := make([]phaseJSON, 0, len(j.Phases))
		for _, p := range j.Phases {
			phases = append(phases, phaseJSON{Phase: p.Phase, Ms: ms(p.D)})
		}
		v.Joins = append(v.Joins, joinJSON{At: stamp(j.At), Remote: j.Remote, Name: j.Name, Spectator: j.Spectator,
			Rejoin: j.Rejoin, Outcome: j.Outcome, Reason: j.Reason, Phases: phases, TotalMs: ms(j.Total), Bytes: j.Bytes,
			Retries: j.Retries, ResumedBytes: j.Resumed, Path: j.Path})
	}
	for _, d := range o.Desyncs {
		maps := d.Maps
		if maps == nil {
			maps = []int32{}
		}
		v.Desyncs = append(v.Desyncs, desyncJSON{At: stamp(d.At), Player: d.Player, Name: d.Name, Event: d.Event,
			Tick: d.Tick, Maps: maps, RepairMs: ms(d.Repair), Reference: d.Reference, Explanation: d.Explanation})
	}
	for _, c := range o.Chat {
		v.Chat = append(v.Chat, chatJSON{At: stamp(c.At), Player: c.PlayerID, Name: c.Name, By: c.By, Text: c.Text})
	}
	if s := o.LastSave; s != nil {
		file := ""
		if s.Path != "" {
			file = filepath.Base(s.Path)
		}
		v.LastSave = &saveJSON{At: stamp(s.At), File: file, Tick: s.Tick, Bytes: s.Bytes, Ms: ms(s.D), Final: s.Final, Error: s.Err}
	}
	return v
}
