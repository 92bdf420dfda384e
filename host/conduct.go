package host

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// conduct is what the host remembers of one player across rejoins (the
// player ID a session token gives back): the desyncs and the time held
// for them count against budgets a rejoin does not reset, and a player
// dropped for lag or desyncs sits out a cool-down before it may rejoin.
// Only the session goroutine touches it.
type conduct struct {
	desyncs   []time.Time // recent desyncs, for the drop policy
	held      time.Duration
	heldFrom  time.Time   // when the hold budget's window began
	coolUntil time.Time   // no rejoin before this
	coolWhy   wire.Reason // the drop that started the cool-down
	last      time.Time   // the last time it was online or dropped

	chat        chatLimit // its chat rate, across rejoins
	chatRefused time.Time // when the last chat-refused notice went out
}

// conducts is the conduct of every player seen lately, by player ID, and
// the budgets they are held to. Only the session goroutine touches it.
type conducts struct {
	byID         map[int32]*conduct
	maxHold      time.Duration // Config.Lag.MaxHold
	holdWindow   time.Duration // Config.Lag.HoldWindow
	desyncWindow time.Duration // Config.Desync.Window
	cooldown     time.Duration // Config.Lag.DropCooldown
	keep         time.Duration // how long a gone player's conduct is worth keeping
}

func newConducts(cfg Config) *conducts {
	return &conducts{byID: map[int32]*conduct{}, maxHold: cfg.Lag.MaxHold, holdWindow: cfg.Lag.HoldWindow,
		desyncWindow: cfg.Desync.Window, cooldown: cfg.Lag.DropCooldown,
		keep: max(cfg.Desync.Window, cfg.Lag.HoldWindow, cfg.Lag.DropCooldown, cfg.Timeouts.RejoinGrace)}
}

// of returns the conduct of player id, making it on first use.
func (cs *conducts) of(id int32) *conduct {
	c := cs.byID[id]
	if c == nil {
		c = &conduct{}
		cs.byID[id] = c
	}
	return c
}

// chargeHold counts d of held time against c's budget, which is MaxHold
// per HoldWindow, and reports whether the budget is spent.
func (cs *conducts) chargeHold(c *conduct, now time.Time, d time.Duration) bool {
	if c.heldFrom.IsZero() || now.Sub(c.heldFrom) > cs.holdWindow {
		c.held, c.heldFrom = 0, now
	}
	c.held += d
	return c.held > cs.maxHold
}

// countDesync records a desync at now and returns how many fall within
// DesyncWindow.
func (cs *conducts) countDesync(c *conduct, now time.Time) int {
	c.desyncs = slices.DeleteFunc(c.desyncs, func(t time.Time) bool { return now.Sub(t) > cs.desyncWindow })
	c.desyncs = append(c.desyncs, now)
	return len(c.desyncs)
}

// coolDown starts c's cool-down after a drop for reason r.
func (cs *conducts) coolDown(c *conduct, now time.Time, r wire.Reason) {
	if cs.cooldown > 0 {
		c.coolUntil, c.coolWhy = now.Add(cs.cooldown), r
	}
	c.last = now
}

// cooling returns the refusal for a rejoin of player id during its
// cool-down, or nil.
func (cs *conducts) cooling(id int32, now time.Time) error {
	if c := cs.byID[id]; c != nil && now.Before(c.coolUntil) {
		return &coolingError{why: c.coolWhy, left: c.coolUntil.Sub(now)}
	}
	return nil
}

// coolingError refuses a rejoin during a cool-down.
type coolingError struct {
	why  wire.Reason
	left time.Duration
}

func (e *coolingError) Error() string {
	what := "falling behind"
	if e.why == wire.ReasonDesync {
		what = "desyncing"
	}
	return fmt.Sprintf("You were dropped for %s too often; you may rejoin in %s.", what, e.left.Round(time.Second))
}

// sweep forgets players long gone whose budgets and cool-downs are over;
// online says whether a player is still a member.
func (cs *conducts) sweep(now time.Time, online func(id int32) bool) {
	for id, c := range cs.byID {
		if !online(id) && now.Sub(c.last) > cs.keep {
			delete(cs.byID, id)
		}
	}
}
