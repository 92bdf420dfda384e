package join

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// Reconnection defaults (Reconnector's zero fields).
const (
	// DefaultReconnectFor is how long a Reconnector keeps trying after a
	// drop: a host that crashed and is restarted by hand or by a service
	// manager is back well within it.
	DefaultReconnectFor = 2 * time.Minute
	// DefaultBackoff is the wait before the first attempt after a drop.
	DefaultBackoff = time.Second
	// DefaultMaxBackoff caps the wait between attempts.
	DefaultMaxBackoff = 16 * time.Second
)

// Reconnector keeps one player in a session over dropped connections,
// by one policy: after a drop it waits Backoff, then 2, 4 … times that
// (at most MaxBackoff) between attempts; it rejoins with the session
// token, so the host takes the player back with its ID and faction, and
// a join cut during its download goes on with the parts of the world
// already downloaded (a Resume); a session cut after WorldReady keeps its
// simulation and rejoins from it, the host sending only the commands it
// missed when it still holds them (else the world, Timings.Rejoin saying
// why); a host that no longer knows the token
// (it restarted, or the grace period is over) is joined afresh under the
// same name; the host refusing, or sending what this client cannot
// take, ends the attempts; and no attempt starts once For has passed
// since the drop (or since the last attempt the host admitted was cut).
//
// Its zero value works once Config is set. Use a Reconnector for one
// player and from one goroutine at a time.
type Reconnector struct {
	// Config is the join's configuration. Its Resume is the
	// Reconnector's own (one set here is not used); a Token makes the
	// first join a rejoin as that player. It may be changed between
	// calls (a player's new callbacks, say), not during one.
	Config Config
	// For is how long after a drop attempts go on (default
	// DefaultReconnectFor). Negative means no retries: a drop ends Run,
	// and Join and Rejoin make one attempt each.
	For time.Duration
	// Backoff is the wait before the first attempt after a drop (default
	// DefaultBackoff); each failed attempt doubles it, up to MaxBackoff
	// (default DefaultMaxBackoff).
	Backoff, MaxBackoff time.Duration
	// Permanent, if set, reports errors, beyond those the Reconnector
	// knows (the host refusing, a protocol error, TLS failing its
	// checks), that no retry can mend.
	Permanent func(error) bool
	// Event, if set, is told what the Reconnector does, as it does it,
	// on the goroutine that called it: for a user to see.
	Event func(ReconnectEvent)

	last  *sessionToken // the last session's token
	sess  *Session      // the last session, whose world a Rejoin rejoins from
	held  *heldWorld    // the simulation kept to rejoin from (held.go)
	token []byte        // the token to rejoin with
	lost  time.Time     // when the last connection was lost
}

// ReconnectKind says what a ReconnectEvent reports.
type ReconnectKind int

// What a Reconnector reports.
const (
	// ReconnectLost: the connection was lost, in the session (Phase
	// PhasePlay) or during a join attempt that reached the host.
	ReconnectLost ReconnectKind = iota
	// ReconnectWaiting: the next attempt starts in Wait (reported once a
	// second while waiting).
	ReconnectWaiting
	// ReconnectAttempt: attempt number Attempt starts; none starts after
	// Until.
	ReconnectAttempt
	// ReconnectFresh: the host no longer knows the session token; the
	// next attempt joins afresh under the same name.
	ReconnectFresh
)

// ReconnectEvent is one step of a Reconnector, for Reconnector.Event.
type ReconnectEvent struct {
	Kind ReconnectKind
	// With ReconnectLost: where, why, whether the next attempt rejoins
	// with the session token, and the parts of the world (and their
	// compressed bytes) it keeps from the downloads so far.
	Phase     Phase
	Err       error
	Token     bool
	HeldBlobs int
	HeldBytes uint64
	// With ReconnectWaiting: the time left.
	Wait time.Duration
	// With ReconnectAttempt: its number and the deadline.
	Attempt int
	Until   time.Time
}

// GaveUpError is reconnecting given up: For passed.
type GaveUpError struct {
	// Attempts is how many were made (none when For is shorter than the
	// first wait); Last the error of the last one.
	Attempts int
	For      time.Duration
	Last     error
}

func (e *GaveUpError) Error() string {
	if e.Last == nil {
		return fmt.Sprintf("gave up reconnecting: %v is too short for a try", e.For)
	}
	return fmt.Sprintf("gave up reconnecting after %d attempts in %v; the last one: %v", e.Attempts, e.For, e.Last)
}

// Unwrap is the last attempt's error.
func (e *GaveUpError) Unwrap() error { return e.Last }

// Join joins. A join the network cuts after the host answered (in the
// handshake, the download or the catch-up) is tried again by the
// Reconnector's policy, keeping what was downloaded; a host that does
// not answer the first attempt at all is not tried again.
func (r *Reconnector) Join(ctx context.Context) (*Session, error) {
	r.token, r.held, r.sess = r.Config.Token, nil, nil
	res := r.resume()
	var att attempt
	s, ph, err := r.try(ctx, res, &att)
	if err == nil || r.For < 0 || !att.answered || !r.retryable(err) || ctx.Err() != nil {
		return s, err
	}
	r.lostDuring(ph, err, res)
	return r.retry(ctx, res)
}

// Rejoin joins again after the last session ended: with its token while
// the host keeps it, by the Reconnector's policy, the first attempt
// Backoff after the session's end, from the world the last session held
// when the host can bring it up to date (Timings.Rejoin says). Attempts
// go on until For has passed since Rejoin was called. Without a last
// session it rejoins with Config.Token, Backoff from now. Call it once
// the last session's Run has returned: the Reconnector keeps that
// session's world until the next join lets it go.
func (r *Reconnector) Rejoin(ctx context.Context) (*Session, error) {
	r.token, r.lost = r.Config.Token, time.Now()
	if r.held == nil && r.sess != nil {
		r.held = r.sess.held()
	}
	r.sess = nil
	if r.last != nil {
		var ended time.Time
		r.token, _, ended = r.last.get()
		if !ended.IsZero() {
			r.lost = ended
		}
	}
	return r.retry(ctx, r.resume())
}

// Run follows s (which this Reconnector joined) until ctx is done (then
// it leaves, and Run returns nil) or the session ends for good. After a
// network drop it rejoins, calls joined with the new session and
// follows that one.
func (r *Reconnector) Run(ctx context.Context, s *Session, joined func(*Session)) error {
	for {
		err := s.Run(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		token, _ := s.Token()
		if r.For < 0 || token == nil || !droppedByNetwork(err) {
			return err
		}
		r.last, r.held, r.sess = s.tok, s.held(), nil
		r.event(ReconnectEvent{Kind: ReconnectLost, Phase: PhasePlay, Err: err, Token: true})
		next, err := r.Rejoin(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if joined != nil {
			joined(next)
		}
		s = next
	}
}

// TokenExpires is when the token of the last session, which has ended,
// stops being good: the end plus the host's grace. It is zero while
// the session runs, or when it has no token.
func (r *Reconnector) TokenExpires() time.Time {
	if r.last == nil {
		return time.Time{}
	}
	token, grace, ended := r.last.get()
	if token == nil || ended.IsZero() {
		return time.Time{}
	}
	return ended.Add(grace)
}

// resume starts the Resume of one reconnection, holding the token to
// rejoin with.
func (r *Reconnector) resume() *Resume {
	res := &Resume{}
	if r.token != nil {
		res.setToken(r.token, 0)
	}
	return res
}

// try makes one attempt with res and returns the phase it reached. The
// end of a failed one is noted as the time of the drop.
func (r *Reconnector) try(ctx context.Context, res *Resume, att *attempt) (*Session, Phase, error) {
	cfg := r.Config
	cfg.Token, cfg.Resume, cfg.held = nil, res, r.held
	ph := PhaseConnect
	progress := cfg.Progress
	cfg.Progress = func(p Progress) {
		ph = p.Phase
		if progress != nil {
			progress(p)
		}
	}
	s, err := joinWith(ctx, cfg, att)
	if err == nil {
		r.last, r.sess, r.held = s.tok, s, nil // the new session holds the world now
		return s, ph, nil
	}
	r.lost = time.Now()
	return nil, ph, err
}

// lostDuring reports a join attempt cut in phase ph, and what the next
// one keeps.
func (r *Reconnector) lostDuring(ph Phase, err error, res *Resume) {
	token, _ := res.Token()
	blobs, size := res.Held()
	r.event(ReconnectEvent{Kind: ReconnectLost, Phase: ph, Err: err, Token: token != nil, HeldBlobs: blobs, HeldBytes: size})
}

// retry makes attempts with res, by the policy, after a drop at r.lost.
func (r *Reconnector) retry(ctx context.Context, res *Resume) (*Session, error) {
	window, step, maxStep := r.defaults()
	if window < 0 {
		s, _, err := r.try(ctx, res, nil)
		return s, err
	}
	until := time.Now().Add(window)
	wait := max(0, step-time.Since(r.lost))
	forgot, attempts := false, 0
	var last error
	for {
		if time.Now().Add(wait).After(until) {
			return nil, &GaveUpError{Attempts: attempts, For: window, Last: last}
		}
		if err := r.countdown(ctx, wait); err != nil {
			return nil, err
		}
		attempts++
		r.event(ReconnectEvent{Kind: ReconnectAttempt, Attempt: attempts, Until: until})
		before, _ := res.Token()
		s, ph, err := r.try(ctx, res, nil)
		if err == nil {
			return s, nil
		}
		var re *RejectedError
		if errors.As(err, &re) && re.Reason == wire.ReasonBadToken && !forgot {
			// Once: a fresh join cannot be refused for its token.
			forgot = true
			r.event(ReconnectEvent{Kind: ReconnectFresh})
			res.Forget()
			attempts++
			r.event(ReconnectEvent{Kind: ReconnectAttempt, Attempt: attempts, Until: until})
			if s, ph, err = r.try(ctx, res, nil); err == nil {
				return s, nil
			}
		}
		if !r.retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		if !unreachable(err) {
			r.lostDuring(ph, err, res)
		}
		if after, _ := res.Token(); after != nil && !bytes.Equal(before, after) {
			until = time.Now().Add(window) // the host admitted this attempt: it made progress
		}
		last = err
		step = min(2*step, maxStep)
		wait = step
	}
}

// defaults are For, Backoff and MaxBackoff with the defaults filled in.
func (r *Reconnector) defaults() (window, step, maxStep time.Duration) {
	window, step, maxStep = r.For, r.Backoff, r.MaxBackoff
	if window == 0 {
		window = DefaultReconnectFor
	}
	if step <= 0 {
		step = DefaultBackoff
	}
	if maxStep <= 0 {
		maxStep = DefaultMaxBackoff
	}
	return window, step, max(step, maxStep)
}

// countdown waits d, reporting the time left once a second.
func (r *Reconnector) countdown(ctx context.Context, d time.Duration) error {
	for left := d; left > 0; left -= time.Second {
		r.event(ReconnectEvent{Kind: ReconnectWaiting, Wait: left})
		t := time.NewTimer(min(left, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func (r *Reconnector) event(e ReconnectEvent) {
	if r.Event != nil {
		r.Event(e)
	}
}

// retryable reports an error another attempt may mend: the network, not
// the host refusing, sending something this client cannot take, or TLS
// failing its checks.
func (r *Reconnector) retryable(err error) bool {
	var pe *ProtocolError
	var ae tls.AlertError
	var ce *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	if !droppedByNetwork(err) || errors.As(err, &pe) || errors.As(err, &ae) || errors.As(err, &ce) || errors.As(err, &rh) {
		return false
	}
	return r.Permanent == nil || !r.Permanent(err)
}

// droppedByNetwork tells a lost connection from the host ending the
// session on purpose. A host that timed this client out counts as lost,
// and one that refused an attempt for coming too fast (RateLimited: wait
// and try again, which the next wait does) as not answering yet.
func droppedByNetwork(err error) bool {
	var re *RejectedError
	if errors.As(err, &re) {
		return re.Reason == wire.ReasonTimeout || re.Reason == wire.ReasonRateLimited
	}
	return true
}

// unreachable reports a join that never reached the host.
func unreachable(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}
