package coord

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// Fallback is a way to the host tried once no registered address
// answered: the ICE path (hole punching, then TURN) plugs in here. It
// gets a signalling attempt to the host and the TURN servers the lookup
// gave (nil: none), and returns the connection and the path it took
// ("punched", "turn-udp", "turn-tls").
type Fallback func(ctx context.Context, sig Signal, turn *TURN) (conn net.Conn, path string, err error)

// ConnectOptions configures Connect.
type ConnectOptions struct {
	// Dial makes one connection to an address and, when the host speaks
	// TLS, runs the handshake that checks its certificate (nil: TCP).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Stagger is Race's (default Stagger).
	Stagger time.Duration
	// Fallback, if set, is tried after every address failed.
	Fallback Fallback
	// Wrap, if set, runs over a Fallback's connection as Dial's handshake
	// does over an address's (TLS with the pinned certificate).
	Wrap func(ctx context.Context, conn net.Conn) (net.Conn, error)
	// NoReport skips telling the coordinator the outcome.
	NoReport bool
}

// Connect reaches the host a lookup described: its LAN and direct
// addresses raced, then opts.Fallback through a signalling attempt. It
// returns the connection and the path it took, and reports the outcome
// to the coordinator (in the background). ctx bounds the whole attempt.
func (c *Coordinator) Connect(ctx context.Context, r LookupReply, opts ConnectOptions) (net.Conn, string, error) {
	start := time.Now()
	conn, path, err := c.connect(ctx, r, opts)
	outcome := path
	if err != nil {
		outcome = "failed"
	}
	if !opts.NoReport {
		go func() {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c.Report(rctx, r.Code, outcome, time.Since(start))
		}()
	}
	return conn, path, err
}

func (c *Coordinator) connect(ctx context.Context, r LookupReply, opts ConnectOptions) (net.Conn, string, error) {
	dial := opts.Dial
	if dial == nil {
		dial = func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}
	}
	stagger := opts.Stagger
	if stagger <= 0 {
		stagger = Stagger
	}
	conn, cand, raceErr := Race(ctx, Candidates(r.Reach), stagger, dial)
	if raceErr == nil {
		return conn, cand.Path, nil
	}
	if opts.Fallback == nil || ctx.Err() != nil {
		return nil, "", raceErr
	}
	sig, err := c.OpenSignal(ctx, r.Code)
	if err != nil {
		return nil, "", errors.Join(raceErr, err)
	}
	defer sig.Close()
	conn, path, err := opts.Fallback(ctx, sig, r.TURN)
	if err != nil {
		return nil, "", errors.Join(raceErr, fmt.Errorf("relayed path: %w", err))
	}
	if opts.Wrap != nil {
		if conn, err = opts.Wrap(ctx, conn); err != nil {
			return nil, "", err
		}
	}
	return conn, path, nil
}
