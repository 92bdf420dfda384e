package host

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Overview is a picture of the session: who is online, how far behind
// they are, the maps, what happened lately and the host's counters. It is
// the one thing to poll: the status page, the metrics gauges and the UDP
// status reply all read it. The session goroutine refreshes its part a few
// times a second; Server.Overview returns the latest, with the recent
// events and the counters as of the call. Events as they happen go to
// Config.Observer, and every tick to Config.AfterTick.
type Overview struct {
	// At is when the session goroutine took the picture.
	At time.Time
	// Started is when the host started serving.
	Started time.Time
	// Game is the session name shown to joiners.
	Game string
	// Tick is the session's tick; TickRate the ticks per second at normal
	// speed; Speed the game speed (0 paused, 1 normal, up to
	// lockstep.MaxSpeed); TicksPerSecond the ticks simulated over the last
	// second, as measured.
	Tick           uint64
	TickRate       int
	Speed          int
	TicksPerSecond float64
	// Holding is true while time is held for a lagging player.
	Holding bool
	// TLS and Password say whether joiners need them.
	TLS, Password bool
	// MaxPlayers is the player cap; HashEvery the ticks between state-hash
	// checks (0: none).
	MaxPlayers, HashEvery int
	// MaxLag is how many ticks behind a player may fall before the lag
	// policy acts.
	MaxLag uint64
	// Players lists everyone online, in admission order.
	Players []PlayerView
	// Maps lists the session's maps by ID.
	Maps []MapView
	// MapPictures says whether Server.PaintMap draws the maps;
	// NoMapPictures says why not when it does not (a relay host, a game
	// that is not a MapPainter).
	MapPictures   bool
	NoMapPictures string
	// Joins lists the last join attempts that named a player, newest
	// first. Attempts that ended before a username (refused at connect,
	// over a limit, closed, wrong protocol or content) are counted in
	// Unnamed and reported to the Observer, but not listed, so a flood of
	// them cannot push real joins off the list.
	Joins   []JoinRecord
	Unnamed uint64
	// Desyncs lists the last desync events, newest first.
	Desyncs []DesyncRecord
	// Chat lists the last chat lines, newest first.
	Chat []ChatRecord
	// LastSave is the last save attempt, if any.
	LastSave *SaveRecord
	// Uploads are the world transfers under way and waiting, as of the
	// call to Server.Overview.
	Uploads UploadsView
	// Stats are the host's counters, as of the call to Server.Overview.
	Stats Stats
	// Window is the rejoin window: the commands the host keeps for
	// players who rejoin from the world they held.
	Window WindowView
}

// WindowView is the rejoin window in an Overview: Commands commands
// held, costing Bytes (payloads and 64 bytes each), every command
// stamped from tick From on.
type WindowView struct {
	Commands int
	Bytes    int64
	From     uint64
}

// PlayerView is one online player in an Overview.
type PlayerView struct {
	ID        int32
	Name      string
	Spectator bool
	// Status is the roster status: joining, downloading, playing, ...
	Status string
	// Faction is the faction the player commands.
	Faction int32
	// Latency is the smoothed keepalive round trip (0 until measured).
	Latency time.Duration
	// TicksBehind is how far the player's reported tick trails the host's.
	TicksBehind uint64
	// Repairing is true while a desync repair is under way.
	Repairing bool
	// Unverified is true for a playing client that has reported no state
	// hashes for two hash intervals past the lag limit: the host cannot
	// tell whether its game agrees (see Config.Desync.DropUnverified).
	Unverified bool
	// Accepted is the tick of the last state-hash report the host
	// compared and accepted from the player (0: none yet), kept over a
	// rejoin from the world it held.
	Accepted uint64
	// Since is when the player was admitted.
	Since time.Time
	// Path is the way its connection came: "lan" or "direct" over TCP or
	// WebSocket (by its address), or the ICE path through a coordinator:
	// "direct", "punched", "turn-udp", "turn-tcp", "turn-tls", "turn"
	// (docs/protocol.md, section 2).
	Path string
}

// MapView is one map in an Overview.
type MapView struct {
	ID int32
	// Width and Height are the map's size in cells, when the game tells
	// it (MapPainter; 0 otherwise).
	Width, Height int
	// RawBytes and Bytes are the map's encoded and compressed size in the
	// latest join point (0 before one is built).
	RawBytes, Bytes uint64
	// CheckedTick is the last checkpoint at which a player's hash of this
	// map was compared with the host's, CheckedAt when; Matched is whether
	// every player compared then agreed with the host.
	CheckedTick uint64
	CheckedAt   time.Time
	Matched     bool
}

// JoinPhases names a join's phases on the host, in order.
var JoinPhases = []string{"handshake", "defs", "admission", "download", "catch_up", "clock_sync"}

// PhaseTime is how long one phase of a join took.
type PhaseTime struct {
	Phase string
	D     time.Duration
}

// Join outcomes in a JoinRecord.
const (
	JoinOK       = "joined"
	JoinRefused  = "refused"
	JoinTimedOut = "timed_out"
	JoinDropped  = "dropped"
	// JoinLeft is a join the client gave up on purpose (Client_Leave)
	// before it was complete, such as a script that leaves right after
	// WorldReady.
	JoinLeft = "left"
)

// JoinRecord is one finished join attempt: admitted or not.
type JoinRecord struct {
	At     time.Time
	Remote string
	// Name is the username asked for, if the attempt got that far.
	Name      string
	Spectator bool
	Rejoin    bool
	// Outcome is JoinOK, JoinRefused, JoinTimedOut, JoinDropped or
	// JoinLeft; Reason the wire reason's name when refused ("" otherwise).
	Outcome, Reason string
	// Phases holds the phases the attempt completed, in JoinPhases order.
	Phases []PhaseTime
	// Total is from the first byte to the end of the attempt.
	Total time.Duration
	// Bytes is the world payload written to the connection; Resumed the
	// payload bytes left out because the joiner held them from an earlier
	// attempt.
	Bytes, Resumed uint64
	// Join numbers the join this attempt belongs to (0 for an attempt
	// never admitted): a join whose connection dropped before WorldReady
	// and was retried keeps its number, and the recent joins list it once.
	Join uint64
	// Retries counts the join's connections after its first; Retry says
	// this attempt was one of them.
	Retries int
	Retry   bool
	// Path is the way the connection came, as PlayerView.Path says it.
	Path string
}

// Desync events in a DesyncRecord.
const (
	DesyncDetected = "detected"
	DesyncRepaired = "repaired"
	DesyncDropped  = "dropped"
	// DesyncExplained: the host worked out where the desync began
	// (DesyncRecord.Explanation).
	DesyncExplained = "explained"
)

// DesyncRecord is one desync event.
type DesyncRecord struct {
	At     time.Time
	Player int32
	Name   string
	// Event is DesyncDetected, DesyncRepaired or DesyncDropped.
	Event string
	Tick  uint64
	// Maps are the maps that differed (none: the world-level state).
	Maps []int32
	// Repair is the time from detection to matching hashes (repaired only).
	Repair time.Duration
	// Reference says whose hashes the player's differed from (detected
	// only): desync.ReferenceHost, desync.ReferenceArbiter or a relay
	// session's majority of players (desync.ReferenceMajority).
	Reference string
	// Explanation is the explanation's summary (explained only):
	// desync.Explanation.Summary. Explain is the time from detection to
	// the explanation stored.
	Explanation string
	Explain     time.Duration
}

// SaveRecord is one save attempt.
type SaveRecord struct {
	At    time.Time
	Path  string
	Tick  uint64
	Bytes uint64
	D     time.Duration
	Final bool
	// Err is why it failed ("" when it worked).
	Err string
}

// Observer hears about events as they happen, for metrics. Methods are
// called from several goroutines, must be safe for concurrent use, and
// must return quickly. A nil Config.Observer hears nothing.
type Observer interface {
	// JoinFinished is called once per connection whose join ended,
	// admitted or not.
	JoinFinished(JoinRecord)
	// Desync is called on each desync event.
	Desync(DesyncRecord)
	// Saved is called after each save attempt.
	Saved(SaveRecord)
}

// recentLimit is how many joins, desyncs and chat lines an Overview
// keeps.
const recentLimit = 20

// history keeps the recent events an Overview lists and forwards them to
// the observer.
type history struct {
	obs     Observer
	mu      sync.Mutex
	joins   []JoinRecord
	desyncs []DesyncRecord
	chat    []ChatRecord
	save    *SaveRecord
	unnamed uint64
}

func pushRecent[T any](list []T, v T) []T {
	list = append(list, v)
	if len(list) > recentLimit {
		list = slices.Delete(list, 0, len(list)-recentLimit)
	}
	return list
}

func (h *history) join(r JoinRecord) {
	h.mu.Lock()
	if r.Name == "" && r.Outcome != JoinOK {
		h.unnamed++
	} else {
		h.joins = pushRecent(h.joins, h.merge(r))
	}
	h.mu.Unlock()
	if h.obs != nil {
		h.obs.JoinFinished(r)
	}
}

// merge takes the earlier attempts of r's join out of the list and
// returns r as the whole join: bytes of every attempt, time from the first.
func (h *history) merge(r JoinRecord) JoinRecord {
	if r.Join == 0 {
		return r
	}
	h.joins = slices.DeleteFunc(h.joins, func(old JoinRecord) bool {
		if old.Join != r.Join {
			return false
		}
		r.Bytes += old.Bytes
		r.Resumed += old.Resumed
		if began := old.At.Add(-old.Total); began.Before(r.At.Add(-r.Total)) {
			r.Total = r.At.Sub(began)
		}
		return true
	})
	return r
}

func (h *history) desync(r DesyncRecord) {
	h.mu.Lock()
	h.desyncs = pushRecent(h.desyncs, r)
	h.mu.Unlock()
	if h.obs != nil {
		h.obs.Desync(r)
	}
}

func (h *history) chatted(r ChatRecord) {
	h.mu.Lock()
	h.chat = pushRecent(h.chat, r)
	h.mu.Unlock()
}

func (h *history) saved(r SaveRecord) {
	h.mu.Lock()
	h.save = &r
	h.mu.Unlock()
	if h.obs != nil {
		h.obs.Saved(r)
	}
}

// fill copies the recent events into o, newest first.
func (h *history) fill(o *Overview) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o.Joins = make([]JoinRecord, len(h.joins))
	for i, r := range h.joins {
		o.Joins[len(h.joins)-1-i] = r
	}
	o.Unnamed = h.unnamed
	o.Desyncs = make([]DesyncRecord, len(h.desyncs))
	for i, r := range h.desyncs {
		o.Desyncs[len(h.desyncs)-1-i] = r
	}
	o.Chat = make([]ChatRecord, len(h.chat))
	for i, r := range h.chat {
		o.Chat[len(h.chat)-1-i] = r
	}
	if h.save != nil {
		s := *h.save
		o.LastSave = &s
	}
}

// Overview returns the latest picture of the session.
func (s *Server) Overview() Overview {
	var o Overview
	if p := s.sess.pub.overview.Load(); p != nil {
		o = *p
		o.Players = slices.Clone(p.Players)
		o.Maps = slices.Clone(p.Maps)
	}
	s.sess.pub.history.fill(&o)
	o.Stats = s.counters()
	o.Uploads = s.uplink.view(time.Now())
	return o
}

// publisher keeps what the session shows to the outside: the Overview it
// refreshes a few times a second and the history of recent events. The
// session goroutine owns it and alone writes the Overview; the pointer is
// an atomic because Server.Overview and status replies read it from
// their own goroutines. The history has its own lock: readers record
// joins and save goroutines record saves.
type publisher struct {
	overview atomic.Pointer[Overview] // the latest picture
	history  *history                 // recent joins, desyncs, chat and saves
	samples  *sampleRing              // the charts' samples (samples.go)
	sent     *atomic.Uint64           // the Server's bytes written, read for the samples
	started  time.Time                // when the session goroutine started
	last     time.Time                // when the Overview was last refreshed
	rate     tickRate
}

// overviewEvery is how often the session refreshes its Overview.
const overviewEvery = 250 * time.Millisecond

// tickRate measures the ticks simulated per second.
type tickRate struct {
	at   time.Time
	tick uint64
	tps  float64
}

func (r *tickRate) observe(now time.Time, tick uint64) float64 {
	switch d := now.Sub(r.at); {
	case r.at.IsZero():
		r.at, r.tick = now, tick
	case d >= time.Second:
		r.tps = float64(tick-r.tick) / d.Seconds()
		r.at, r.tick = now, tick
	}
	return r.tps
}

// publishOverview refreshes the Overview a few times a second.
func (s *session) publishOverview(now time.Time) {
	if now.Sub(s.pub.last) < overviewEvery {
		return
	}
	s.pub.last = now
	tick := s.auth.Sim().Tick()
	o := &Overview{
		At: now, Started: s.pub.started, Game: s.cfg.GameName,
		Tick: tick, TickRate: s.cfg.TickRate, Speed: int(s.auth.Speed()), TicksPerSecond: s.pub.rate.observe(now, tick),
		Holding: s.lag.holding, TLS: s.cfg.Admission.TLS != nil, Password: len(s.cfg.Admission.Password) > 0,
		MaxPlayers: s.cfg.Limits.MaxPlayers, HashEvery: max(0, s.cfg.Desync.HashEvery), MaxLag: s.cfg.Lag.MaxLag,
		Window: WindowView{Commands: len(s.window.cmds) - s.window.head, Bytes: s.window.bytes, From: s.window.from},
	}
	for _, id := range s.order {
		m, p := s.members[id], s.roster.Get(id)
		if p == nil {
			continue
		}
		v := PlayerView{ID: id, Name: p.Name, Spectator: p.Spectator, Status: p.Status.String(), Faction: p.Faction,
			Latency: time.Duration(m.rtt.Load()) * time.Microsecond, Repairing: m.resync != nil, Since: m.since,
			Unverified: m.unverified, Path: m.conn.path}
		if m.checked {
			v.Accepted = m.good.tick
		}
		if p.Status != wire.StatusDownloading {
			if a := m.acked.Load(); a < tick {
				v.TicksBehind = tick - a
			}
		}
		o.Players = append(o.Players, v)
	}
	sizes := map[int32]snapshot.MapPoint{}
	if last := s.stats.lastPoint(); last != nil {
		for _, mp := range last.Maps {
			sizes[mp.ID] = mp
		}
	}
	painter, why := s.mode.painter()
	o.MapPictures, o.NoMapPictures = painter != nil, why
	for _, id := range s.auth.Sim().MapIDs() {
		v := MapView{ID: id}
		if painter != nil {
			v.Width, v.Height, _ = painter.MapSize(id)
		}
		if mp, ok := sizes[id]; ok {
			v.RawBytes, v.Bytes = mp.Blob.RawSize, uint64(len(mp.Blob.Data))
		}
		if c, ok := s.desync.mapChecks[id]; ok {
			v.CheckedTick, v.CheckedAt, v.Matched = c.tick, c.at, c.matched
		}
		o.Maps = append(o.Maps, v)
	}
	s.pub.overview.Store(o)
	s.pub.samples.take(o, s.pub.sent.Load())
}
