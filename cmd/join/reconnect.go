package main

import (
	"bytes"
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

// defaultReconnectFor is --reconnect-for's default: how long the tool
// keeps trying after a drop. A host that crashed and is restarted by
// hand or by a service manager is back well within it.
const defaultReconnectFor = 2 * time.Minute

// stay follows the session until ctx is done or it ends for good. After a
// network drop it reconnects with the session token, waiting 1, 2, 4 …
// seconds between attempts with a countdown, for at most window (no
// reconnection when window is 0). A host that no longer knows the token
// (it restarted without it, or the grace period is over) is joined
// afresh under the same name.
func stay(ctx context.Context, cur *current, cfg join.Config, window time.Duration) error {
	for {
		sess := cur.get()
		err := sess.Run(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		token, _ := sess.Token()
		if window <= 0 || token == nil || !droppedByNetwork(err) {
			return err
		}
		fmt.Fprintf(stderr, "connection lost: %v\n", err)
		next, rerr := rejoin(ctx, cfg, token, window)
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

// rejoin tries to join again with the token until it works, window has
// passed, or the host refuses; a host that does not know the token is
// joined afresh.
func rejoin(ctx context.Context, cfg join.Config, token []byte, window time.Duration) (*join.Session, error) {
	cfg.Token = token
	r := newRetrier(window)
	return r.run(ctx, func() (*join.Session, error) { return join.Join(ctx, cfg) }, func() { cfg.Token = nil })
}

// firstJoin joins; with window > 0, a join that the network cuts after
// the host answered (in the handshake, the download or the catch-up) is
// tried again like a dropped session: with a countdown, backoff and,
// once the host admitted it, the session token and the blobs already
// downloaded, so the download goes on where it stopped. The retries end
// window after the last drop of an attempt the host had admitted; a host
// that cannot be reached at all on the first try is not retried.
func firstJoin(ctx context.Context, cfg join.Config, window time.Duration) (*join.Session, error) {
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
	stopped := func(err error) error {
		if err != nil && ctx.Err() != nil {
			return &stoppedError{phase: phase.Load().(join.Phase)}
		}
		return err
	}
	s, err := join.Join(ctx, cfg)
	if err != nil {
		// TLS on one side only: no retry helps, the user must change a flag.
		err = tlsHint(ctx, err, cfg.Addr, cfg.TLS != nil)
	}
	var tm *tlsMismatch
	if err == nil || window <= 0 || !retryable(err) || unreachable(err) || ctx.Err() != nil || errors.As(err, &tm) {
		return s, stopped(err)
	}
	r := newRetrier(window)
	fmt.Fprintln(stderr, lostDuring(phase.Load().(join.Phase), res, err))
	s, err = r.run(ctx, func() (*join.Session, error) {
		phase.Store(join.PhaseConnect)
		before, _ := res.Token()
		s, err := join.Join(ctx, cfg)
		if err != nil && retryable(err) && !unreachable(err) && ctx.Err() == nil {
			if after, _ := res.Token(); after != nil && !bytes.Equal(before, after) {
				r.restart() // the host admitted this attempt: it made progress
			}
			fmt.Fprintln(stderr, lostDuring(phase.Load().(join.Phase), res, err))
		}
		return s, err
	}, res.Forget)
	return s, stopped(err)
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

// lostDuring says in one sentence what was lost and what happens next.
func lostDuring(ph join.Phase, res *join.Resume, err error) string {
	token, _ := res.Token()
	blobs, held := res.Held()
	switch {
	case token == nil:
		return fmt.Sprintf("connection lost during the %s (%v); joining again.", ph, err)
	case blobs > 0:
		return fmt.Sprintf("connection lost during the %s (%v); rejoining with the session token, keeping the %d parts of the world (%s) already downloaded.",
			ph, err, blobs, size(held))
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

// retrier paces the attempts after a drop: 1, 2, 4 … seconds apart (at
// most maxBackoff), each announced with its number and the time left,
// none started once window has passed since the drop (or since restart).
type retrier struct {
	window   time.Duration
	until    time.Time
	attempts int
}

func newRetrier(window time.Duration) *retrier {
	return &retrier{window: window, until: time.Now().Add(window)}
}

// restart gives the attempts a whole window again from now.
func (r *retrier) restart() { r.until = time.Now().Add(r.window) }

// gaveUpError is reconnecting given up: the window passed.
type gaveUpError struct {
	attempts int
	window   time.Duration
	last     error
}

func (e *gaveUpError) Error() string {
	if e.last == nil {
		return fmt.Sprintf("gave up reconnecting: --reconnect-for %v is too short for a try", e.window)
	}
	return fmt.Sprintf("gave up reconnecting after %d attempts in %v (--reconnect-for); the last one: %v", e.attempts, e.window, e.last)
}

func (e *gaveUpError) Unwrap() error { return e.last }

// run calls try after a countdown until it works, the host refuses, ctx
// is done or the window has passed. A host that no longer knows the
// session token (BadToken: it restarted without it, or the grace period
// is over) is tried again at once after forget, which makes try join
// afresh under the same name.
func (r *retrier) run(ctx context.Context, try func() (*join.Session, error), forget func()) (*join.Session, error) {
	wait := time.Second
	var last error
	for {
		if time.Now().Add(wait).After(r.until) {
			return nil, &gaveUpError{attempts: r.attempts, window: r.window, last: last}
		}
		for left := wait; left > 0; left -= time.Second {
			fmt.Fprintf(stderr, "\rreconnecting in %ds... ", int((left+time.Second-1)/time.Second))
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(min(left, time.Second)):
			}
		}
		s, err := r.attempt(try)
		if err == nil {
			return s, nil
		}
		var re *join.RejectedError
		if errors.As(err, &re) && re.Reason == wire.ReasonBadToken && forget != nil {
			fmt.Fprintln(stderr, "the host no longer knows this session (it restarted, or the grace period is over); joining afresh under the same name.")
			forget()
			forget = nil // once: a fresh join cannot be refused for its token
			if s, err = r.attempt(try); err == nil {
				return s, nil
			}
		}
		var pe *join.ProtocolError
		if errors.As(err, &re) || errors.As(err, &pe) || ctx.Err() != nil {
			return nil, err // the host says no (full, banned, …) or sent what this tool cannot take
		}
		last = err
		wait = min(2*wait, maxBackoff)
	}
}

// attempt makes one numbered try, saying how long the tool keeps trying.
func (r *retrier) attempt(try func() (*join.Session, error)) (*join.Session, error) {
	r.attempts++
	left := max(0, time.Until(r.until)).Round(time.Second)
	fmt.Fprintf(stderr, "\rreconnecting: attempt %d, giving up in %v (at %s)...\n", r.attempts, left, r.until.Format(time.TimeOnly))
	return try()
}
