package agones

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/host"
)

// Session is what an Agent reads and drives of a host: *host.Server.
type Session interface {
	Overview() host.Overview
	Shutdown(by string, delay time.Duration) error
}

// DefaultHealthEvery is how often an Agent looks at the session and, if
// it moved, pings Health: well inside Agones' default health period of
// 5 s.
const DefaultHealthEvery = time.Second

// AgentConfig configures an Agent.
type AgentConfig struct {
	// Client speaks to the SDK server.
	Client *Client
	// Session is the host.
	Session Session
	// Labels and Annotations are set once, before Ready (keys without
	// Agones' agones.dev/sdk- prefix, which the SDK server adds).
	Labels, Annotations map[string]string
	// Idle is how long the host stays up with no player after its last
	// player left before it shuts down; 0 or less: never.
	Idle time.Duration
	// FirstPlayer is how long the host stays up once Agones has
	// allocated it (a matchmaker handed it out) with no player having
	// come: past it, the host shuts down, so an allocation nobody uses (a
	// relay whose arbiter never arrives, players who never connect) frees
	// its pod. 0 or less: wait for ever. A Ready host not yet allocated is
	// never shut down by this: it waits in the Fleet's buffer.
	FirstPlayer time.Duration
	// Steps paces the Agent: one look at the session per value received.
	// Nil: a ticker of DefaultHealthEvery.
	Steps <-chan time.Time
	// Logger gets what the Agent does (nil: slog.Default).
	Logger *slog.Logger
}

// Agent keeps Agones told about one host. Run it once.
type Agent struct {
	cfg     AgentConfig
	log     *slog.Logger
	lastAt  time.Time       // the Overview's At at the last health ping
	players map[string]bool // the players List as the Agent last set it
	had     bool            // a player has been online
	alloc   time.Time       // when the Agent first saw the GameServer Allocated with no player yet (zero: not seen)
	empty   time.Time       // when the host last became empty (zero: not empty)
	stopped bool            // the idle shutdown was asked for
	pings   atomic.Int64
	pinged  atomic.Int64 // unix nanoseconds of the last health ping taken (0: none)
	state   atomic.Value // string: the State
	listed  atomic.Int64 // len(players), for the metrics
}

// NewAgent returns an Agent of cfg.
func NewAgent(cfg AgentConfig) *Agent {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Agent{cfg: cfg, log: log.With("agones", true), players: map[string]bool{}}
}

// Run waits for the session to serve (its first Overview), sets the
// labels and annotations, marks the GameServer Ready, then looks at the
// session at every step until ctx ends. A relay session serves, and so is
// Ready, before its arbiter has uploaded the world (see the package
// comment). Only a failed Ready ends it early
// with an error; later SDK errors are logged and retried at the next step.
func (a *Agent) Run(ctx context.Context) error {
	steps := a.cfg.Steps
	if steps == nil {
		t := time.NewTicker(DefaultHealthEvery)
		defer t.Stop()
		steps = t.C
	}
	if err := a.start(ctx, steps); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-steps:
			a.step(ctx, now)
		}
	}
}

// readyTries is how many steps start tries to reach the SDK server: the
// sidecar may start after the host.
const readyTries = 60

// start waits for the session's first Overview, then sets the metadata
// and calls Ready, trying again at each step while the SDK server cannot
// be reached.
func (a *Agent) start(ctx context.Context, steps <-chan time.Time) error {
	for a.cfg.Session.Overview().At.IsZero() {
		select {
		case <-ctx.Done():
			return nil
		case <-steps:
		}
	}
	for try := 1; ; try++ {
		err := a.announce(ctx)
		if err == nil {
			a.state.Store(StateReady)
			a.log.Info("agones: game server ready")
			return nil
		}
		if IsStatus(err) || try == readyTries || ctx.Err() != nil {
			return fmt.Errorf("agones ready (try %d): %w", try, err)
		}
		a.log.Warn("agones: SDK server not reached yet, trying again", "try", try, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-steps:
		}
	}
}

// announce sets the labels and annotations and calls Ready. A label or
// annotation the SDK server refuses is logged and left out; not reaching
// the SDK server at all is an error.
func (a *Agent) announce(ctx context.Context) error {
	set := func(kind string, kv map[string]string, f func(context.Context, string, string) error) error {
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			err := f(ctx, k, kv[k])
			if err != nil && !IsStatus(err) {
				return err
			}
			if err != nil {
				a.log.Warn("agones "+kind+" not set", "key", k, "err", err)
			}
		}
		return nil
	}
	if err := set("label", a.cfg.Labels, a.cfg.Client.SetLabel); err != nil {
		return err
	}
	if err := set("annotation", a.cfg.Annotations, a.cfg.Client.SetAnnotation); err != nil {
		return err
	}
	return a.cfg.Client.Ready(ctx)
}

// step pings Health if the session moved, brings the players List up to
// date and shuts an idle host down.
func (a *Agent) step(ctx context.Context, now time.Time) {
	o := a.cfg.Session.Overview()
	if o.At.After(a.lastAt) {
		a.lastAt = o.At
		if err := a.cfg.Client.Health(ctx); err != nil {
			a.log.Warn("agones health ping failed", "err", err)
		} else {
			a.pings.Add(1)
			a.pinged.Store(time.Now().UnixNano())
		}
	}
	names := playerNames(o)
	a.syncPlayers(ctx, names)
	a.idle(now, len(names))
	a.unclaimed(ctx, now)
}

// unclaimed shuts the host down once it has been allocated for
// cfg.FirstPlayer with no player ever online. Until the first player
// comes it reads the GameServer's state at each step, since an
// allocation is made by Agones (a matchmaker's request to the allocator),
// not by the host.
func (a *Agent) unclaimed(ctx context.Context, now time.Time) {
	if a.cfg.FirstPlayer <= 0 || a.had || a.stopped {
		return
	}
	if a.alloc.IsZero() {
		gs, err := a.cfg.Client.GameServer(ctx)
		if err != nil {
			a.log.Warn("agones: reading the game server's state failed", "err", err)
			return
		}
		if gs.Status.State != StateAllocated {
			return
		}
		a.alloc = now
		a.state.Store(StateAllocated)
		a.log.Info("agones: allocated, waiting for the first player", "shutdown_in", a.cfg.FirstPlayer)
	}
	if now.Sub(a.alloc) < a.cfg.FirstPlayer {
		return
	}
	a.stopped = true
	a.state.Store(StateShutdown)
	a.log.Warn("agones: allocated but no player came, shutting the host down", "waited", a.cfg.FirstPlayer)
	if err := a.cfg.Session.Shutdown("agones", 0); err != nil {
		a.log.Warn("agones first-player shutdown failed", "err", err)
	}
}

// Pings is how many health pings the SDK server took.
func (a *Agent) Pings() int64 { return a.pings.Load() }

// playerNames are the names of the players online, spectators left out.
func playerNames(o host.Overview) map[string]bool {
	names := make(map[string]bool, len(o.Players))
	for _, p := range o.Players {
		if !p.Spectator && p.Name != "" {
			names[p.Name] = true
		}
	}
	return names
}

// syncPlayers adds the newly online to the players List and removes the
// gone; it allocates the GameServer when the first player comes.
func (a *Agent) syncPlayers(ctx context.Context, want map[string]bool) {
	if len(want) > 0 && len(a.players) == 0 {
		if err := a.cfg.Client.Allocate(ctx); err != nil {
			a.log.Warn("agones allocate failed", "err", err)
		} else {
			a.state.Store(StateAllocated)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if a.players[name] {
			continue
		}
		if _, err := a.cfg.Client.AppendListValue(ctx, PlayersList, name); err != nil && !sdkSays(err, "already") {
			a.log.Warn("agones players list: add failed", "player", name, "err", err)
			continue
		}
		a.players[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(a.players)) {
		if want[name] {
			continue
		}
		if _, err := a.cfg.Client.DeleteListValue(ctx, PlayersList, name); err != nil && !sdkSays(err, "not found") {
			a.log.Warn("agones players list: remove failed", "player", name, "err", err)
			continue
		}
		delete(a.players, name)
	}
	a.listed.Store(int64(len(a.players)))
}

// sdkSays reports whether err is an SDK answer whose message holds text.
func sdkSays(err error, text string) bool {
	se, ok := err.(*StatusError)
	return ok && strings.Contains(se.Message, text)
}

// idle shuts the host down once it has had no player for cfg.Idle after
// its last player left. A host no one has joined yet waits for players.
func (a *Agent) idle(now time.Time, online int) {
	if online > 0 {
		a.had, a.empty = true, time.Time{}
		return
	}
	if a.cfg.Idle <= 0 || !a.had || a.stopped {
		return
	}
	if a.empty.IsZero() {
		a.empty = now
		a.log.Info("agones: no players left", "shutdown_in", a.cfg.Idle)
	}
	if now.Sub(a.empty) < a.cfg.Idle {
		return
	}
	a.stopped = true
	a.state.Store(StateShutdown)
	a.log.Info("agones: idle, shutting the host down", "idle", a.cfg.Idle)
	if err := a.cfg.Session.Shutdown("agones", 0); err != nil {
		a.log.Warn("agones idle shutdown failed", "err", err)
	}
}
