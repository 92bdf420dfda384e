package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
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
	return retry(ctx, grace, func() time.Time { return deadline }, func() (*join.Session, error) { return join.Join(ctx, cfg) })
}

// freshRetryWindow is how long a join lost before the host admitted it
// (no session token yet, so no grace period to go by) is retried.
const freshRetryWindow = time.Minute

// firstJoin joins; with reconnect, a join that the network cuts after the
// host answered (in the handshake, the download or the catch-up) is
// tried again like a dropped session: with a countdown, backoff and,
// once the host admitted it, the session token and the blobs already
// downloaded, so the download goes on where it stopped. Each drop starts
// the token's grace period anew. A host that cannot be reached at all on
// the first try is not retried.
func firstJoin(ctx context.Context, cfg join.Config, reconnect bool) (*join.Session, error) {
	res := &join.Resume{}
	cfg.Resume = res
	var phase atomic.Value // the phase the attempt reached
	phase.Store(join.PhaseConnect)
	report := cfg.Progress
	cfg.Progress = func(p join.Progress) {
		phase.Store(p.Phase)
		if report != nil {
			report(p)
		}
	}
	s, err := join.Join(ctx, cfg)
	if err != nil {
		// TLS on one side only: no retry helps, the user must change a flag.
		err = tlsHint(ctx, err, cfg.Addr, cfg.TLS != nil)
	}
	var tm *tlsMismatch
	if err == nil || !reconnect || !retryable(err) || unreachable(err) || ctx.Err() != nil || errors.As(err, &tm) {
		return s, err
	}
	var deadline atomic.Int64 // unix nanoseconds
	dropped := func(err error) {
		token, grace := res.Token()
		if token == nil {
			grace = freshRetryWindow
		}
		deadline.Store(time.Now().Add(grace).UnixNano())
		fmt.Fprintln(stderr, lostDuring(phase.Load().(join.Phase), res, err))
	}
	dropped(err)
	_, grace := res.Token()
	return retry(ctx, max(grace, freshRetryWindow), func() time.Time { return time.Unix(0, deadline.Load()) }, func() (*join.Session, error) {
		phase.Store(join.PhaseConnect)
		s, err := join.Join(ctx, cfg)
		if err != nil && retryable(err) && !unreachable(err) {
			dropped(err)
		}
		return s, err
	})
}

// lostDuring says in one sentence what was lost and what happens next.
func lostDuring(ph join.Phase, res *join.Resume, err error) string {
	token, _ := res.Token()
	blobs, bytes := res.Held()
	switch {
	case token == nil:
		return fmt.Sprintf("connection lost during the %s (%v); joining again.", ph, err)
	case blobs > 0:
		return fmt.Sprintf("connection lost during the %s (%v); rejoining with the session token, keeping the %d parts of the world (%s) already downloaded.",
			ph, err, blobs, size(bytes))
	}
	return fmt.Sprintf("connection lost during the %s (%v); rejoining with the session token.", ph, err)
}

// retryable reports a join error worth another attempt: the network, not
// the host refusing, sending something this tool cannot take, or failing
// the TLS checks.
func retryable(err error) bool {
	var pe *join.ProtocolError
	var me *tlsid.MismatchError
	var ae tls.AlertError
	var ce *tls.CertificateVerificationError
	return droppedByNetwork(err) && !errors.As(err, &pe) && !errors.As(err, &me) && !errors.As(err, &ae) && !errors.As(err, &ce)
}

// unreachable reports a join that never reached the host.
func unreachable(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// retry runs try after a countdown, waiting 1, 2, 4 … seconds (at most
// maxBackoff) between attempts, until it works, the host refuses, or the
// next wait would end past deadline(); grace is how the deadline is told
// in the error.
func retry(ctx context.Context, grace time.Duration, deadline func() time.Time, try func() (*join.Session, error)) (*join.Session, error) {
	wait := time.Second
	var last error
	for attempt := 1; ; attempt++ {
		if time.Now().Add(wait).After(deadline()) {
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
		s, err := try()
		if err == nil {
			return s, nil
		}
		var re *join.RejectedError
		var pe *join.ProtocolError
		if errors.As(err, &re) || errors.As(err, &pe) {
			return nil, err // the host says no (BadToken, full, …) or sent what this tool cannot take
		}
		last = err
		wait = min(2*wait, maxBackoff)
	}
}
