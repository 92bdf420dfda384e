//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/transport/ws"
	"github.com/lockhost/lockhost/wire"
)

// client is the browser player: one join at a time, its state for the
// page, and the view of the map on the canvas.
type client struct {
	mu      sync.Mutex
	st      state
	lines   []logLine // the last maxLines, numbered from 1
	lineSeq int
	running bool // a join is under way or live
	// cancel stops the join or session under way (nil: none, or left
	// already); left says the page left, so nothing rejoins.
	cancel context.CancelFunc
	left   bool

	opts   options
	cur    atomic.Pointer[join.Session]
	live   atomic.Bool // the current session is past WorldReady: draw
	things []string    // spawnable ThingDefs, for the page's picker
	canvas *canvasView
	yield  time.Time // when catch-up last let the browser run
	ctl    replayControl
}

// state is what state() returns to the page, as JSON.
type state struct {
	Phase        string      `json:"phase"` // "", a join.Phase, "ready", "error"
	Done         uint64      `json:"done"`
	Total        uint64      `json:"total"`
	Error        string      `json:"error,omitempty"`
	NeedPassword bool        `json:"need_password"`
	Game         string      `json:"game,omitempty"`
	PlayerID     int32       `json:"player_id"`
	Spectator    bool        `json:"spectator"`
	Tick         uint64      `json:"tick"`
	Timings      *timingJSON `json:"timings,omitempty"`
	Maps         []mapJSON   `json:"maps"`
	Map          int32       `json:"map"`
	Selected     int32       `json:"selected"` // pawn ID, 0 for none
	Players      []join.Player
	Things       []string     `json:"things"`
	Content      *contentJSON `json:"content,omitempty"` // where the host's mods came from
	Desyncs      int          `json:"desyncs"`           // the host found this browser's state diverged
	Repaired     int          `json:"repaired"`          // the host confirmed a repair of it
	Resyncs      int          `json:"resyncs"`           // repairs swapped in here
	Corrupted    int          `json:"corrupted"`         // maps changed on purpose (debug)
	Frames       uint64       `json:"frames"`
	Replay       *replayJSON  `json:"replay,omitempty"` // watching a recording
	LogSeq       int          `json:"log_seq"`
	Path         string       `json:"path,omitempty"` // by invite: the path the data channel took (direct, punched, turn-udp, ...)
}

// timingJSON is the join's timings, for the page and the benchmark.
type timingJSON struct {
	TotalMs      float64 `json:"total_ms"`
	DownloadMs   float64 `json:"download_ms"`
	LoadMs       float64 `json:"load_ms"`
	CatchUpMs    float64 `json:"catch_up_ms"`
	CatchUpTicks uint64  `json:"catch_up_ticks"`
	CatchUpRate  float64 `json:"catch_up_rate"`
	Bytes        uint64  `json:"bytes"`
	RawBytes     uint64  `json:"raw_bytes"`
}

type mapJSON struct {
	ID     int32 `json:"id"`
	Width  int   `json:"width"`
	Height int   `json:"height"`
	Pawns  int   `json:"pawns"`
	Things int   `json:"things"`
}

// logLine is one line of the page's log.
type logLine struct {
	Seq  int    `json:"seq"`
	Kind string `json:"kind"` // chat, notice, desync, info, error
	From string `json:"from,omitempty"`
	Text string `json:"text"`
}

// maxLines is how many log lines the client keeps for the page.
const maxLines = 200

func newClient() *client {
	return &client{}
}

// update changes the state under the lock.
func (c *client) update(f func(*state)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.st)
}

// say adds a line to the log.
func (c *client) say(kind, from, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lineSeq++
	c.lines = append(c.lines, logLine{Seq: c.lineSeq, Kind: kind, From: from, Text: text})
	if len(c.lines) > maxLines {
		c.lines = append(c.lines[:0], c.lines[len(c.lines)-maxLines:]...)
	}
	c.st.LogSeq = c.lineSeq
}

func (c *client) stateJSON() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := json.Marshal(&c.st)
	if err != nil {
		return `{"phase":"error","error":"state: ` + err.Error() + `"}`
	}
	return string(b)
}

// logJSON is the log lines after number since.
func (c *client) logJSON(since int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []logLine{}
	for _, l := range c.lines {
		if l.Seq > since {
			out = append(out, l)
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// start joins with o on a goroutine of its own, unless a join runs.
func (c *client) start(o options) {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return
	}
	if c.left {
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.running, c.opts, c.cancel = true, o, cancel
	c.st = state{Phase: string(join.PhaseConnect), Map: -1, LogSeq: c.lineSeq}
	c.mu.Unlock()
	go func() {
		err := c.run(ctx, o)
		cancel()
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
		c.failed(err)
	}()
}

// failed reports why the join or the session ended.
func (c *client) failed(err error) {
	var re *join.RejectedError
	need := errors.As(err, &re) && re.Reason == wire.ReasonBadPassword
	msg := err.Error()
	if re != nil {
		msg = fmt.Sprintf("refused by the host (%s): %s", re.Reason, re.Error())
	}
	c.update(func(s *state) { s.Phase, s.Error, s.NeedPassword = "error", msg, need })
	c.say("error", "", msg)
}

// run joins and follows the session until it ends for good, and says
// why it ended.
func (c *client) run(ctx context.Context, o options) error {
	var inv *inviteDialer
	var bundle *gamecontent.Bundle
	var err error
	if o.invite != "" {
		// The host's HTTP (its content manifest) may be out of reach:
		// the built-in content, as for a host that shares none.
		if inv, err = newInviteDialer(o.coordinator, o.invite); err != nil {
			return err
		}
		c.update(func(s *state) { s.Content = &contentJSON{} })
		bundle, err = gamecontent.Load(nil, "")
	} else {
		bundle, err = c.loadContent(ctx, o.url)
	}
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	c.things = spawnableThings(bundle.Content)
	c.canvas = newCanvasView(o.canvas)
	cfg := c.config(o, bundle)
	if inv != nil {
		cfg.Addr, cfg.Dial = o.invite, inv.dial
	}
	rc := &join.Reconnector{Config: cfg, Event: c.reconnectEvent}
	sess, err := rc.Join(ctx)
	if err != nil {
		return err
	}
	if inv != nil {
		c.update(func(s *state) { s.Path = inv.path })
		c.say("info", "", "connected to "+o.invite+" through the coordinator: "+inv.path)
	}
	c.ready(sess)
	go c.bot(o.bot, uint64(sess.Info().PlayerID))
	err = rc.Run(ctx, sess, func(s *join.Session) {
		c.cur.Store(s)
		c.live.Store(true)
		c.say("info", "", "reconnected")
	})
	if err == nil {
		err = errors.New("left the session")
	}
	return err
}

// leave leaves the session for good as the page goes away (pagehide):
// nothing rejoins, a join under way is abandoned with Client_Leave, and
// a live session sends Client_Leave and closes its WebSocket with the
// normal code at once (join.Session.LeaveNow), so the host counts a
// leave, not a lost connection, and holds time for nobody meanwhile.
// It returns before the close completes: the page gets no time to wait.
// Later calls do nothing.
func (c *client) leave(why string) {
	c.mu.Lock()
	cancel := c.cancel
	c.cancel, c.left = nil, true
	c.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	if s := c.cur.Load(); s != nil {
		// On a goroutine of its own: the close then waits for the
		// browser's close event, which comes only once this call from
		// the page has returned. The leave and the close are sent before
		// it returns all the same: a call from JavaScript returns only
		// when every goroutine it woke waits.
		go func() { _ = s.LeaveNow(why) }()
	}
}

// config is the join's configuration: the embedded content, WebSocket,
// and callbacks into the page's state.
func (c *client) config(o options, bundle *gamecontent.Bundle) join.Config {
	return join.Config{
		Addr:      o.url,
		Dial:      ws.Dial,
		Name:      o.name,
		Password:  []byte(o.password),
		Spectate:  o.spectate,
		Databases: bundle.Summary(),
		MapLoader: colony.MapLoader(bundle.Content),
		Progress: func(p join.Progress) {
			c.update(func(s *state) { s.Phase, s.Done, s.Total = string(p.Phase), p.Done, p.Total })
		},
		Notice:   func(text string) { c.say("notice", "", text) },
		Chat:     func(l join.ChatLine) { c.say("chat", l.From, l.Text) },
		Players:  func(p []join.Player) { c.update(func(s *state) { s.Players = p }) },
		Desync:   c.desync,
		Resynced: c.resynced,
		OnStep:   c.onStep,
	}
}

// reconnectEvent tells the page what the Reconnector does; while it
// rejoins, the new session's catch-up is not drawn.
func (c *client) reconnectEvent(e join.ReconnectEvent) {
	switch e.Kind {
	case join.ReconnectLost:
		c.live.Store(false)
		c.say("error", "", fmt.Sprintf("connection lost (%s): %v; reconnecting", e.Phase, e.Err))
	case join.ReconnectAttempt:
		c.say("info", "", fmt.Sprintf("reconnecting: attempt %d", e.Attempt))
	}
}

// ready records a session that reached WorldReady.
func (c *client) ready(sess *join.Session) {
	c.cur.Store(sess)
	c.live.Store(true)
	t, info := sess.Timings(), sess.Info()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	c.update(func(s *state) {
		s.Phase, s.Game, s.PlayerID, s.Spectator = "ready", info.GameName, info.PlayerID, c.opts.spectate
		s.Things = c.things
		s.Timings = &timingJSON{TotalMs: ms(t.Total), DownloadMs: ms(t.Download), LoadMs: ms(t.Load), CatchUpMs: ms(t.CatchUp),
			CatchUpTicks: t.CatchUpTicks, CatchUpRate: t.CatchUpRate(), Bytes: t.Bytes, RawBytes: t.RawBytes}
	})
	c.say("info", "", fmt.Sprintf("WorldReady at tick %d in %.0f ms (%d ticks caught up at %.0f ticks/s); type help for the commands",
		t.ReadyTick, ms(t.Total), t.CatchUpTicks, t.CatchUpRate()))
}

// desync takes the host's desync events; those about this browser count.
func (c *client) desync(d join.DesyncEvent) {
	mine := false
	c.update(func(s *state) {
		if mine = d.PlayerID == s.PlayerID; !mine {
			return
		}
		switch d.Kind {
		case join.DesyncDetected:
			s.Desyncs++
		case join.DesyncRepaired:
			s.Repaired++
		}
	})
	c.say("desync", "", fmt.Sprintf("%s: %s, maps %v at tick %d", d.Name, d.Kind, d.Maps, d.Tick))
}

// resynced counts a repair swapped in (on the simulation's goroutine).
func (c *client) resynced(r join.Resync) {
	c.update(func(s *state) { s.Resyncs++ })
	if c.canvas != nil {
		c.canvas.invalidate() // the map was replaced: paint its terrain again
	}
	c.say("info", "", fmt.Sprintf("repair: maps %v swapped in at tick %d (%d bytes)", r.Maps, r.Tick, r.Bytes))
}

// onStep runs on the simulation's goroutine after every tick: during
// catch-up it lets the browser run now and then (a wasm program runs on
// the page's only thread); once playing it draws.
func (c *client) onStep(sim lockstep.Sim) {
	if !c.live.Load() {
		if time.Since(c.yield) > 50*time.Millisecond {
			time.Sleep(time.Millisecond) // the event loop runs: progress, network
			c.yield = time.Now()
		}
		return
	}
	w, ok := sim.(*colony.World)
	if !ok {
		return
	}
	c.frame(w)
}

// spawnableThings are the item and food ThingDefs, as the bot spawns.
func spawnableThings(ct *colony.Content) []string {
	var out []string
	for _, t := range ct.Things {
		if t.Category == colony.CategoryItem || t.Category == colony.CategoryFood {
			out = append(out, t.Name)
		}
	}
	return out
}
