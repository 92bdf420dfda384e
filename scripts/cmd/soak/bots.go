package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// slotState is where a slot's bot is in its life.
type slotState int

const (
	slotEmpty   slotState = iota // nobody: a join or rejoin may fill it
	slotJoining                  // a join is under way
	slotOnline                   // a bot is in the session
	slotLeaving                  // the chaos is taking the bot out
)

// slot is one place in the population. Full slots always hold full
// clients, so the population keeps its mix. Each slot reaches the host
// through its own relay, which lets the soak drop exactly its bot.
type slot struct {
	full  bool
	relay *testkit.Relay
	// Guarded by soak.mu.
	state    slotState
	bot      *bot
	departed *departure // the last bot's way back, for a rejoin
}

// departure is what a bot that went away needs to rejoin as itself: the
// reconnector that joined it, which holds its session token.
type departure struct {
	rc   *join.Reconnector
	id   int32
	name string
}

// usable says whether the token is still within the host's grace, with a
// margin.
func (d *departure) usable(now time.Time) bool {
	if d == nil {
		return false
	}
	expires := d.rc.TokenExpires()
	return !expires.IsZero() && now.Before(expires.Add(-5*time.Second))
}

// Why the soak ended a bot's session.
const (
	endNone  int32 = iota // not by the soak: an unexpected disconnect
	endLeave              // a graceful leave
	endDrop               // the connection was cut under it
	endStop               // the end of the soak
)

// bot is one client of the soak.
type bot struct {
	slot   *slot
	name   string
	serial uint64
	sess   *join.Session
	rc     *join.Reconnector // joined it; rejoins it with its token
	id     atomic.Int32
	cancel context.CancelFunc
	done   chan struct{} // closed once the session ended and the slot is free
	ending atomic.Int32  // endNone until the soak ends it

	// Desync injection (full bots): armed is the number of ticks after the
	// next step at which to corrupt map armMap; perturbAt is the
	// simulation goroutine's.
	armed     atomic.Uint64
	armMap    atomic.Int32
	perturbAt uint64
	busy      atomic.Bool  // a desync is under way: the chaos leaves it alone
	perturbed atomic.Int64 // corruptions made
	detected  atomic.Int64 // this bot's desyncs the host announced
	repaired  atomic.Int64 // repairs swapped in
}

// clientConfig is the join configuration of bot b in slot sl.
func (s *soak) clientConfig(b *bot, sl *slot) join.Config {
	cfg := join.Config{
		Addr:         sl.relay.Addr(),
		Name:         b.name,
		Databases:    s.bundle.Summary(),
		MapLoader:    colony.MapLoader(s.bundle.Content),
		ReadyTimeout: 2 * time.Minute,
		Light:        !sl.full,
		Logger:       s.cfg.Logger.With("bot", b.name),
	}
	if !sl.full {
		return cfg
	}
	cfg.OnStep = func(sim lockstep.Sim) { s.stepped(b, sim) }
	cfg.Resynced = func(join.Resync) {
		b.repaired.Add(1)
		s.n.repaired.Add(1)
	}
	cfg.Desync = func(d join.DesyncEvent) {
		if d.PlayerID != b.id.Load() {
			return
		}
		switch d.Kind {
		case join.DesyncDetected:
			b.detected.Add(1)
			s.n.detected.Add(1)
		case join.DesyncDropped:
			s.problem(&s.probs.desync, "%s was dropped for desyncing at tick %d", b.name, d.Tick)
		}
	}
	return cfg
}

// reconnector is the join.Reconnector of bot b in slot sl: dep's, with
// the new bot's configuration, for a rejoin. The chaos cuts only bots
// in the session, so a join attempt cut, or a token the host no longer
// knows, is a problem; the reconnector then goes on by its policy.
func (s *soak) reconnector(b *bot, sl *slot, dep *departure) *join.Reconnector {
	cfg := s.clientConfig(b, sl)
	if dep != nil {
		dep.rc.Config = cfg
		return dep.rc
	}
	name := b.name // not b: the reconnector outlives the bot
	return &join.Reconnector{Config: cfg, Event: func(e join.ReconnectEvent) {
		switch e.Kind {
		case join.ReconnectLost:
			s.problem(&s.probs.join, "%s: connection lost during the %s: %v", name, e.Phase, e.Err)
		case join.ReconnectFresh:
			s.problem(&s.probs.join, "%s: the host refused its session token while it was still good", name)
		}
	}}
}

// stepped runs on a full bot's simulation goroutine after every tick: it
// corrupts a map when a desync is armed (as join --debug-corrupt-map
// does) and takes the sync probe's hashes at its tick.
func (s *soak) stepped(b *bot, sim lockstep.Sim) {
	t := sim.Tick()
	if off := b.armed.Swap(0); off > 0 {
		b.perturbAt = t + off
	}
	if b.perturbAt != 0 && t >= b.perturbAt {
		b.perturbAt = 0
		w, ok := sim.(*colony.World)
		if !ok {
			s.problem(&s.probs.desync, "%s: the simulation is not a colony world and cannot be corrupted", b.name)
			return
		}
		ids := w.MapIDs()
		id := ids[int(b.armMap.Load())%len(ids)]
		if err := w.Perturb(id); err != nil {
			s.problem(&s.probs.desync, "%s: corrupt map %d: %v", b.name, id, err)
		} else {
			b.perturbed.Add(1)
			s.n.perturbed.Add(1)
		}
	}
	if p := s.probe.tick.Load(); p != 0 && t == p {
		s.probe.client(b, sim)
	}
}

// startJoin fills an empty slot: a rejoin with the last bot's token when
// rejoin is true and the token is still good, a new player otherwise.
// The caller holds s.mu.
func (s *soak) startJoin(sl *slot, rejoin bool) {
	dep := sl.departed
	sl.departed = nil
	if !rejoin || !dep.usable(time.Now()) {
		dep = nil
	}
	sl.state = slotJoining
	s.joins.Add(1)
	go func() {
		defer s.joins.Done()
		s.join(sl, dep)
	}()
}

// join connects a bot for slot sl (rejoining as dep's player if dep is
// set) and starts its session and its commands.
func (s *soak) join(sl *slot, dep *departure) {
	b := &bot{slot: sl, done: make(chan struct{})}
	s.mu.Lock()
	s.serial++
	b.serial = s.serial
	s.mu.Unlock()
	if dep != nil {
		b.name = dep.name
	} else if sl.full {
		b.name = fmt.Sprintf("Full%04d", b.serial)
	} else {
		b.name = fmt.Sprintf("Lite%04d", b.serial)
	}
	b.rc = s.reconnector(b, sl, dep)
	ctx, cancel := context.WithCancel(s.ctx)
	jctx, jcancel := context.WithTimeout(ctx, 2*time.Minute)
	var sess *join.Session
	var err error
	if dep != nil {
		sess, err = b.rc.Rejoin(jctx)
	} else {
		sess, err = b.rc.Join(jctx)
	}
	jcancel()
	if err != nil {
		cancel()
		s.mu.Lock()
		sl.state = slotEmpty
		s.mu.Unlock()
		if s.ctx.Err() == nil {
			what := "join"
			if dep != nil {
				what = "rejoin"
			}
			s.problem(&s.probs.join, "%s of %s failed: %v", what, b.name, err)
		}
		return
	}
	b.sess, b.cancel = sess, cancel
	b.id.Store(sess.Info().PlayerID)
	s.n.joins.Add(1)
	if dep != nil {
		s.n.rejoins.Add(1)
		s.countRejoin(sess.Timings().Rejoin)
		if got := sess.Info().PlayerID; got != dep.id {
			s.problem(&s.probs.join, "%s rejoined with its token as player %d, but was player %d", b.name, got, dep.id)
		}
	}
	s.mu.Lock()
	sl.state, sl.bot = slotOnline, b
	s.noteOnlineLocked()
	s.mu.Unlock()
	s.bots.Add(2)
	go s.runBot(ctx, b)
	go s.sendCommands(ctx, b)
}

// countRejoin counts a rejoin by how it came back: from the world it held
// (the chaos's drops of full bots) or with a download, and why when it
// named a held world the host turned down.
func (s *soak) countRejoin(r wire.RejoinResult) {
	if r == wire.RejoinHeld {
		s.n.rejoinsHeld.Add(1)
		return
	}
	s.n.rejoinsDownloaded.Add(1)
	if r.Fallback() && int(r) < len(s.n.fallbacks) {
		s.n.fallbacks[r].Add(1)
	}
}

// runBot follows the session until it ends, then frees the slot, keeping
// the bot's token for a rejoin.
func (s *soak) runBot(ctx context.Context, b *bot) {
	defer s.bots.Done()
	err := b.sess.Run(ctx)
	b.sess.Close()
	b.cancel()
	tok, _ := b.sess.Token()
	why := b.ending.Load()
	s.mu.Lock()
	sl := b.slot
	sl.state, sl.bot = slotEmpty, nil
	if tok != nil {
		// The configuration's callbacks hold this bot, and through it the
		// session and its world: a rejoin sets a new one.
		b.rc.Config = join.Config{}
		sl.departed = &departure{rc: b.rc, id: b.id.Load(), name: b.name}
	}
	s.mu.Unlock()
	close(b.done)
	if why == endNone {
		if err == nil {
			err = ctx.Err()
		}
		s.problem(&s.probs.disconnect, "%s (player %d) was disconnected: %v", b.name, b.id.Load(), err)
	}
}

// sendCommands sends random valid commands at about the configured rate,
// built on the session's goroutine from the world the bot holds (a light
// bot holds the world as it joined it: terrain does not change, so most
// of its commands stay valid).
func (s *soak) sendCommands(ctx context.Context, b *bot) {
	defer s.bots.Done()
	if s.cfg.Rate <= 0 {
		return
	}
	timing := rand.New(rand.NewPCG(s.cfg.Seed, b.serial<<1))
	picks := rand.New(rand.NewPCG(s.cfg.Seed, b.serial<<1|1)) // used only on the session goroutine
	mean := float64(time.Second) / s.cfg.Rate
	t := time.NewTimer(time.Duration(timing.Float64() * mean))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok := b.sess.Do(func(sim lockstep.Sim) {
			w, ok := sim.(*colony.World)
			if !ok {
				return
			}
			if cmd, ok := colony.RandomCommand(w, picks); ok && b.sess.Send(cmd.MapID, cmd.Kind, cmd.Payload) == nil {
				s.n.sent.Add(1)
			}
		})
		if !ok {
			return
		}
		t.Reset(time.Duration(math.Min(timing.ExpFloat64(), 5) * mean))
	}
}
