package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/wire"
)

// current is the session the play side (typed commands, the bot) talks
// to; it changes when the tool reconnects.
type current struct{ p atomic.Pointer[join.Session] }

func (c *current) get() *join.Session  { return c.p.Load() }
func (c *current) set(s *join.Session) { c.p.Store(s) }

// maxBackoff caps the wait between reconnection attempts.
const maxBackoff = 16 * time.Second

// stay follows the session until ctx is done or it ends for good. After a
// network drop it reconnects with the session token, waiting 1, 2, 4 …
// seconds between attempts with a countdown, for as long as the token is
// good; reconnect false disables this.
func stay(ctx context.Context, cur *current, cfg join.Config, reconnect bool) error {
	for {
		sess := cur.get()
		err := sess.Run(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		token, grace := sess.Token()
		if !reconnect || token == nil || !droppedByNetwork(err) {
			return err
		}
		fmt.Fprintf(stderr, "connection lost: %v\n", err)
		next, rerr := rejoin(ctx, cfg, token, grace)
		if rerr != nil {
			if ctx.Err() != nil {
				return nil
			}
			return rerr
		}
		info := next.Info()
		fmt.Fprintf(stdout, "reconnected: player %d, WorldReady tick=%d\n", info.PlayerID, next.Timings().ReadyTick)
		cur.set(next)
	}
}

// droppedByNetwork tells a lost connection (worth a reconnection) from the
// host ending the session on purpose.
func droppedByNetwork(err error) bool {
	var re *join.RejectedError
	if errors.As(err, &re) {
		return re.Reason == wire.ReasonTimeout
	}
	return true
}

// rejoin tries to join again with the token until it works, the grace
// period runs out, or the host refuses.
func rejoin(ctx context.Context, cfg join.Config, token []byte, grace time.Duration) (*join.Session, error) {
	cfg.Token = token
	deadline := time.Now().Add(grace)
	wait := time.Second
	var last error
	for attempt := 1; ; attempt++ {
		if time.Now().Add(wait).After(deadline) {
			if last == nil {
				return nil, fmt.Errorf("could not reconnect within %v (too short for a try)", grace)
			}
			return nil, fmt.Errorf("could not reconnect within %v (last try: %v)", grace, last)
		}
		for left := wait; left > 0; left -= time.Second {
			fmt.Fprintf(stderr, "\rreconnecting in %ds... ", int((left+time.Second-1)/time.Second))
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(min(left, time.Second)):
			}
		}
		fmt.Fprintf(stderr, "\rreconnecting (attempt %d)...   \n", attempt)
		s, err := join.Join(ctx, cfg)
		if err == nil {
			return s, nil
		}
		var re *join.RejectedError
		if errors.As(err, &re) {
			return nil, err // the host says no: BadToken, full, …
		}
		last = err
		wait = min(2*wait, maxBackoff)
	}
}
