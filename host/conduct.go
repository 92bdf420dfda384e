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

// conductOf returns the conduct of player id, making it on first use.
func (s *session) conductOf(id int32) *conduct {
	c := s.conducts[id]
	if c == nil {
		if s.conducts == nil {
			s.conducts = map[int32]*conduct{}
		}
		c = &conduct{}
		s.conducts[id] = c
	}
	return c
}

// chargeHold counts d of held time against c's budget, which is MaxHold
// per HoldWindow, and reports whether the budget is spent.
func (s *session) chargeHold(c *conduct, now time.Time, d time.Duration) bool {
	if c.heldFrom.IsZero() || now.Sub(c.heldFrom) > s.cfg.HoldWindow {
		c.held, c.heldFrom = 0, now
	}
	c.held += d
	return c.held > s.cfg.MaxHold
}

// countDesync records a desync at now and returns how many fall within
// DesyncWindow.
func (s *session) countDesync(c *conduct, now time.Time) int {
	c.desyncs = slices.DeleteFunc(c.desyncs, func(t time.Time) bool { return now.Sub(t) > s.cfg.DesyncWindow })
	c.desyncs = append(c.desyncs, now)
	return len(c.desyncs)
}

// coolDown starts c's cool-down after a drop for reason r.
func (s *session) coolDown(c *conduct, now time.Time, r wire.Reason) {
	if s.cfg.DropCooldown > 0 {
		c.coolUntil, c.coolWhy = now.Add(s.cfg.DropCooldown), r
	}
	c.last = now
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

// sweepConducts forgets players long gone whose budgets and cool-downs
// are over.
func (s *session) sweepConducts(now time.Time) {
	keep := max(s.cfg.DesyncWindow, s.cfg.HoldWindow, s.cfg.DropCooldown, s.cfg.RejoinGrace)
	for id, c := range s.conducts {
		if _, online := s.members[id]; !online && now.Sub(c.last) > keep {
			delete(s.conducts, id)
		}
	}
}
