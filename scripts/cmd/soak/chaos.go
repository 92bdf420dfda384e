package main

import (
	"math/rand/v2"
	"time"
)

// event is one kind of chaos.
type event int

const (
	evJoin   event = iota // a new player fills an empty slot
	evRejoin              // a player that left or was dropped comes back with its token
	evLeave               // a bot leaves gracefully
	evDrop                // a bot's connection is cut under it
	evDesync              // a full bot's map is corrupted at a step
)

func (e event) String() string {
	return [...]string{"join", "rejoin", "leave", "drop", "desync"}[e]
}

// forced are the first events of every soak, one of each kind, so even a
// short soak exercises them all.
var forced = []event{evDrop, evRejoin, evLeave, evJoin, evDesync}

// chaos runs events at random intervals until the time until: joins and
// rejoins into the slots that leaves and drops empty, keeping at most a
// few slots empty so the population stays near its target, and desyncs
// of full bots. The forced events come first, half an interval apart,
// however short the time.
func (s *soak) chaos(until time.Time) {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, 0xc4a05))
	mean := float64(s.cfg.ChaosEvery)
	for i := 0; ; i++ {
		wait := time.Duration(min(rng.ExpFloat64(), 4) * mean)
		if i < len(forced) {
			wait = s.cfg.ChaosEvery / 2
		} else if time.Now().Add(wait).After(until) {
			sleepCtx(s.ctx, time.Until(until))
			return
		}
		if !sleepCtx(s.ctx, wait) {
			return
		}
		ev := s.pick(rng)
		if i < len(forced) {
			ev = forced[i]
		}
		s.do(ev, rng)
	}
}

// maxOut is how many slots the chaos may leave empty at once.
func (s *soak) maxOut() int { return max(1, min(4, s.cfg.Clients/16)) }

// pick chooses the next event from what the slots allow.
func (s *soak) pick(rng *rand.Rand) event {
	s.mu.Lock()
	empty, rejoinable, removable, fullIdle := 0, 0, 0, 0
	now := time.Now()
	for _, sl := range s.slots {
		switch sl.state {
		case slotEmpty:
			empty++
			if sl.departed.usable(now) {
				rejoinable++
			}
		case slotJoining:
			empty++ // not yet back
		case slotOnline:
			if !sl.bot.busy.Load() {
				removable++
				if sl.full {
					fullIdle++
				}
			}
		}
	}
	s.mu.Unlock()
	type choice struct {
		ev     event
		weight int
	}
	var cs []choice
	if empty > 0 {
		cs = append(cs, choice{evJoin, 2})
		if rejoinable > 0 {
			cs = append(cs, choice{evRejoin, 2})
		}
	}
	if empty < s.maxOut() && removable > 0 {
		cs = append(cs, choice{evLeave, 1}, choice{evDrop, 1})
	}
	if fullIdle > 0 {
		cs = append(cs, choice{evDesync, 1})
	}
	total := 0
	for _, c := range cs {
		total += c.weight
	}
	if total == 0 {
		return evJoin // nothing possible: do will find nothing to do either
	}
	n := rng.IntN(total)
	for _, c := range cs {
		if n < c.weight {
			return c.ev
		}
		n -= c.weight
	}
	return cs[len(cs)-1].ev
}

// do performs one event on a random slot it applies to; an event with
// nothing to apply to is skipped.
func (s *soak) do(ev event, rng *rand.Rand) {
	now := time.Now()
	s.mu.Lock()
	var cands []*slot
	for _, sl := range s.slots {
		switch ev {
		case evJoin:
			if sl.state == slotEmpty {
				cands = append(cands, sl)
			}
		case evRejoin:
			if sl.state == slotEmpty && sl.departed.usable(now) {
				cands = append(cands, sl)
			}
		case evLeave, evDrop:
			if sl.state == slotOnline && !sl.bot.busy.Load() {
				cands = append(cands, sl)
			}
		case evDesync:
			if sl.full && sl.state == slotOnline && !sl.bot.busy.Load() {
				cands = append(cands, sl)
			}
		}
	}
	if len(cands) == 0 {
		s.mu.Unlock()
		s.cfg.Logger.Debug("chaos event skipped: nothing to apply it to", "event", ev.String())
		return
	}
	if ev == evDrop && s.n.drops.Load() == 0 {
		cands = fullFirst(cands)
	}
	sl := cands[rng.IntN(len(cands))]
	switch ev {
	case evJoin, evRejoin:
		s.startJoin(sl, ev == evRejoin)
		s.mu.Unlock()
		return
	case evLeave, evDrop:
		sl.state = slotLeaving
	}
	b := sl.bot
	s.mu.Unlock()
	switch ev {
	case evLeave:
		b.ending.Store(endLeave)
		b.cancel()
		s.await(b, "leave")
		s.n.leaves.Add(1)
	case evDrop:
		b.ending.Store(endDrop)
		if n := sl.relay.ResetAll(); n == 0 {
			s.problem(&s.probs.disconnect, "drop of %s: no connection to cut", b.name)
		}
		s.await(b, "drop")
		s.n.drops.Add(1)
	case evDesync:
		s.inject(b, rng)
	}
}

// fullFirst is the full bots' slots of cands, or cands when it has none:
// the first drop cuts a full bot, which holds its world, so the forced
// rejoin after it rejoins from that world (docs/protocol.md, section 6.6).
func fullFirst(cands []*slot) []*slot {
	var full []*slot
	for _, sl := range cands {
		if sl.full {
			full = append(full, sl)
		}
	}
	if len(full) == 0 {
		return cands
	}
	return full
}

// await waits for a bot the chaos ended to be gone.
func (s *soak) await(b *bot, what string) {
	select {
	case <-b.done:
	case <-time.After(30 * time.Second):
		s.problem(&s.probs.disconnect, "%s of %s: its session had not ended 30 s later", what, b.name)
	}
}

// repairTimeout bounds an injected desync from arming to repair.
const repairTimeout = time.Minute

// inject arms a corruption of a random map of full bot b a few ticks
// ahead (within one hash interval) and watches for the repair.
func (s *soak) inject(b *bot, rng *rand.Rand) {
	b.busy.Store(true)
	want := b.perturbed.Load() + 1
	b.armMap.Store(int32(rng.IntN(1 << 16)))
	b.armed.Store(uint64(1 + rng.IntN(s.cfg.HashEvery)))
	s.n.injected.Add(1)
	s.injecting.Add(1)
	go func() {
		defer s.injecting.Done()
		defer b.busy.Store(false)
		deadline := time.Now().Add(repairTimeout)
		for {
			if b.perturbed.Load() >= want && b.repaired.Load() >= want {
				return
			}
			select {
			case <-b.done:
				if b.ending.Load() != endStop {
					s.problem(&s.probs.desync, "%s's session ended before its injected desync was repaired", b.name)
				}
				return
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				s.problem(&s.probs.desync, "%s: desync injected but not repaired within %v (corrupted: %v, desyncs announced: %d, repairs swapped in: %d)",
					b.name, repairTimeout, b.perturbed.Load() >= want, b.detected.Load(), b.repaired.Load())
				return
			}
		}
	}()
}
