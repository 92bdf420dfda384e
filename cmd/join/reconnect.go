package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/wire"
)

// current is the session the play side (typed commands, the bot) talks
// to; it changes when the tool reconnects.
type current struct{ p atomic.Pointer[join.Session] }

func (c *current) get() *join.Session  { return c.p.Load() }
func (c *current) set(s *join.Session) { c.p.Store(s) }

// defaultReconnectFor is --reconnect-for's default.
const defaultReconnectFor = join.DefaultReconnectFor

// newReconnector is the tool's join.Reconnector: it keeps trying for
// window after a drop (not at all when window is 0) and says on
// standard error what it does. A pinned certificate that does not match
// is never retried.
func newReconnector(cfg join.Config, window time.Duration) *join.Reconnector {
	if window <= 0 {
		window = -1
	}
	return &join.Reconnector{
		Config: cfg,
		For:    window,
		Permanent: func(err error) bool {
			var me *tlsid.MismatchError
			return errors.As(err, &me)
		},
		Event: reconnectEvent,
	}
}

// reconnectEvent prints one step of the reconnector for the user.
func reconnectEvent(e join.ReconnectEvent) {
	switch e.Kind {
	case join.ReconnectLost:
		if e.Phase == join.PhasePlay {
			fmt.Fprintf(stderr, "connection lost: %v\n", e.Err)
		} else {
			fmt.Fprintln(stderr, lostDuring(e))
		}
	case join.ReconnectWaiting:
		fmt.Fprintf(stderr, "\rreconnecting in %ds... ", int((e.Wait+time.Second-1)/time.Second))
	case join.ReconnectAttempt:
		left := max(0, time.Until(e.Until)).Round(time.Second)
		fmt.Fprintf(stderr, "\rreconnecting: attempt %d, giving up in %v (at %s)...\n", e.Attempt, left, e.Until.Format(time.TimeOnly))
	case join.ReconnectFresh:
		fmt.Fprintln(stderr, "the host no longer knows this session (it restarted, or the grace period is over); joining afresh under the same name.")
	}
}

// lostDuring says in one sentence what was lost during a join and what
// happens next.
func lostDuring(e join.ReconnectEvent) string {
	switch {
	case !e.Token:
		return fmt.Sprintf("connection lost during the %s (%v); joining again.", e.Phase, e.Err)
	case e.HeldBlobs > 0:
		return fmt.Sprintf("connection lost during the %s (%v); rejoining with the session token, keeping the %d parts of the world (%s) already downloaded.",
			e.Phase, e.Err, e.HeldBlobs, size(e.HeldBytes))
	}
	return fmt.Sprintf("connection lost during the %s (%v); rejoining with the session token.", e.Phase, e.Err)
}

// stay follows the session until ctx is done or it ends for good,
// reconnecting after network drops by rc's policy.
func stay(ctx context.Context, cur *current, rc *join.Reconnector) error {
	err := rc.Run(ctx, cur.get(), func(next *join.Session) {
		info := next.Info()
		fmt.Fprintf(stdout, "reconnected: player %d, WorldReady tick=%d, %s\n", info.PlayerID, next.Timings().ReadyTick, rejoinedHow(next.Timings()))
		cur.set(next)
	})
	return flagged(err)
}

// rejoinedHow says how a rejoin came back: from the world it held (the
// ticks replayed) or with a download, and why the host sent the world
// when it turned the held world down.
func rejoinedHow(t join.Timings) string {
	switch {
	case t.Rejoin == wire.RejoinHeld:
		return fmt.Sprintf("from the world held: %d ticks replayed from tick %d, %s in %v", t.CatchUpTicks, t.SnapshotTick,
			"no download", t.CatchUp.Round(time.Millisecond))
	case t.Rejoin.Fallback():
		return fmt.Sprintf("downloaded %s (held world turned down: %s: %s)", size(t.Bytes), t.Rejoin, t.RejoinWhy)
	}
	return fmt.Sprintf("downloaded %s", size(t.Bytes))
}

// firstJoin joins through rc: a join the network cuts after the host
// answered is tried again by its policy, keeping what was downloaded. A
// join that fails because one side speaks TLS and the other does not
// says so; one stopped on purpose says in which phase.
func firstJoin(ctx context.Context, rc *join.Reconnector) (*join.Session, error) {
	var phase atomic.Value // the phase the attempt reached
	phase.Store(join.PhaseConnect)
	report := rc.Config.Progress
	rc.Config.Progress = func(p join.Progress) {
		phase.Store(p.Phase)
		if report != nil {
			report(p)
		}
	}
	defer func() { rc.Config.Progress = report }()
	s, err := rc.Join(ctx)
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil {
		return nil, &stoppedError{phase: phase.Load().(join.Phase)}
	}
	// TLS on one side only: no retry helps, the user must change a flag.
	return nil, flagged(tlsHint(ctx, err, rc.Config.Addr, rc.Config.TLS != nil))
}

// stoppedError is a join stopped on purpose (Ctrl-C, SIGTERM) before
// WorldReady; the host was told.
type stoppedError struct{ phase join.Phase }

func (e *stoppedError) Error() string {
	return fmt.Sprintf("stopped during the %s, before WorldReady; left without joining", e.phase)
}

// ExitCode makes a stopped join exit with exitStopped.
func (e *stoppedError) ExitCode() int { return exitStopped }

// exitStopped is the exit code of a join stopped before WorldReady: what
// a shell reports for a program ended by Ctrl-C (128 + SIGINT).
const exitStopped = 130

// gaveUpError is reconnecting given up, as the user reads it: in terms
// of --reconnect-for.
type gaveUpError struct{ gu *join.GaveUpError }

func (e *gaveUpError) Error() string {
	if e.gu.Last == nil {
		return fmt.Sprintf("gave up reconnecting: --reconnect-for %v is too short for a try", e.gu.For)
	}
	return fmt.Sprintf("gave up reconnecting after %d attempts in %v (--reconnect-for); the last one: %v", e.gu.Attempts, e.gu.For, e.gu.Last)
}

func (e *gaveUpError) Unwrap() error { return e.gu }

// flagged words a GaveUpError in terms of the flag; other errors pass
// through unchanged.
func flagged(err error) error {
	var gu *join.GaveUpError
	if errors.As(err, &gu) {
		return &gaveUpError{gu: gu}
	}
	return err
}
