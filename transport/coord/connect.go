package coord

import (
	"cmp"
	"context"
	"errors"
	"net"
	"time"
)

// Fallback is a way to the host tried once no registered address
// answered: the ICE path (hole punching, then TURN) plugs in here. It
// gets a signalling attempt to the host and the TURN servers the lookup
// gave (nil: none), and returns the connection and the path it took
// ("punched", "turn-udp", "turn-tls").
type Fallback func(ctx context.Context, sig Signal, turn *TURN) (conn net.Conn, path string, err error)

// HeadStart is how long the addresses a host registered have to
// themselves before the fallback starts beside them (at once when they
// have all failed): a reachable address usually answers well within it,
// and an address that swallows packets does not hold the fallback back.
const HeadStart = time.Second

// ConnectOptions configures Connect.
type ConnectOptions struct {
	// Dial makes one connection to an address and, when the host speaks
	// TLS, runs the handshake that checks its certificate (nil: TCP).
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// Stagger is Race's (default Stagger).
	Stagger time.Duration
	// Fallback, if set, is tried beside the addresses once they have had
	// HeadStart, or at once when they have all failed.
	Fallback Fallback
	// HeadStart is the addresses' head start (default HeadStart).
	HeadStart time.Duration
	// FallbackOnly tries no address: Fallback alone (a joiner that keeps
	// its address from the host through a relay).
	FallbackOnly bool
	// Wrap, if set, runs over a Fallback's connection as Dial's handshake
	// does over an address's (TLS with the pinned certificate).
	Wrap func(ctx context.Context, conn net.Conn) (net.Conn, error)
	// NoReport skips telling the coordinator the outcome.
	NoReport bool
}

// ConnectError is an attempt that every way failed: the registered
// addresses (Addrs, nil when none was tried) and the fallback (Fallback,
// nil when there was none).
type ConnectError struct {
	Addrs, Fallback error
}

func (e *ConnectError) Error() string {
	switch {
	case e.Fallback == nil:
		return e.Addrs.Error()
	case e.Addrs == nil:
		return "relayed path: " + e.Fallback.Error()
	}
	return e.Addrs.Error() + "; relayed path: " + e.Fallback.Error()
}

// Unwrap gives both errors.
func (e *ConnectError) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Addrs, e.Fallback} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// Connect reaches the host a lookup described: its LAN and direct
// addresses raced, and opts.Fallback through a signalling attempt after
// their head start. It returns the first connection and the path it
// took (the other is closed), and reports the outcome to the
// coordinator (in the background). ctx bounds the whole attempt.
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

// connected is one way's end in connect.
type connected struct {
	conn     net.Conn
	path     string
	err      error
	fallback bool
}

func (c *Coordinator) connect(ctx context.Context, r LookupReply, opts ConnectOptions) (net.Conn, string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan connected, 2)
	pending, fellBack := 0, false
	fallback := func() {
		pending++
		fellBack = true
		go func() {
			conn, path, err := c.fallback(ctx, r, opts)
			results <- connected{conn, path, err, true}
		}()
	}
	if opts.FallbackOnly {
		if opts.Fallback == nil {
			return nil, "", &ConnectError{Addrs: errors.New("no way to try: no address and no relayed path")}
		}
		fallback()
	} else {
		pending++
		go func() {
			dial := opts.Dial
			if dial == nil {
				dial = dialTCP
			}
			conn, cand, err := Race(ctx, Candidates(r.Reach), cmp.Or(opts.Stagger, Stagger), dial)
			results <- connected{conn, cand.Path, err, false}
		}()
	}
	headStart := time.NewTimer(cmp.Or(opts.HeadStart, HeadStart))
	defer headStart.Stop()
	var errs ConnectError
	for pending > 0 {
		select {
		case <-headStart.C:
			if !fellBack && opts.Fallback != nil {
				fallback()
			}
		case res := <-results:
			pending--
			if res.err == nil {
				cancel()
				go func(n int) { // close the loser's connection, if it wins too
					for ; n > 0; n-- {
						if r := <-results; r.conn != nil {
							r.conn.Close()
						}
					}
				}(pending)
				return res.conn, res.path, nil
			}
			if res.fallback {
				errs.Fallback = res.err
			} else {
				errs.Addrs = res.err
				if !fellBack && opts.Fallback != nil && ctx.Err() == nil {
					fallback()
				}
			}
		}
	}
	return nil, "", &errs
}

// dialTCP is Connect's default Dial.
func dialTCP(ctx context.Context, addr string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
}

// fallback opens a signalling attempt and runs opts.Fallback over it,
// then opts.Wrap.
func (c *Coordinator) fallback(ctx context.Context, r LookupReply, opts ConnectOptions) (net.Conn, string, error) {
	sig, err := c.OpenSignal(ctx, r.Code)
	if err != nil {
		return nil, "", err
	}
	defer sig.Close()
	conn, path, err := opts.Fallback(ctx, sig, r.TURN)
	if err != nil {
		return nil, "", err
	}
	if opts.Wrap != nil {
		if conn, err = opts.Wrap(ctx, conn); err != nil {
			return nil, "", err
		}
	}
	return conn, path, nil
}
