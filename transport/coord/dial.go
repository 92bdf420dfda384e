package coord

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Paths a joiner reaches a host by, as reported and counted.
const (
	PathLAN    = "lan"
	PathDirect = "direct"
)

// Candidate is one address to try for a host, and the path it is.
type Candidate struct {
	Addr string
	Path string
}

// Candidates are the addresses of r to try: the LAN ones first (a
// friend in the same house), then the direct ones, each once.
func Candidates(r Reach) []Candidate {
	var out []Candidate
	seen := map[string]bool{}
	add := func(addrs []string, path string) {
		for _, a := range addrs {
			if !seen[a] {
				seen[a] = true
				out = append(out, Candidate{Addr: a, Path: path})
			}
		}
	}
	add(r.LAN, PathLAN)
	add(r.Addrs, PathDirect)
	return out
}

// Stagger is how long Race waits for one candidate before starting the
// next as well (RFC 8305 suggests 250 ms).
const Stagger = 250 * time.Millisecond

// AddrTimeout bounds one candidate's dial in Race, the TLS handshake
// included: an address whose packets are dropped without a word (a
// host's private address seen from another network) gives up on its own
// instead of lasting as long as the whole attempt.
const AddrTimeout = 5 * time.Second

// Race tries the candidates in order, starting the next one Stagger
// after the last (or at once when one fails), and returns the first
// connection that dial (which may run TLS and check the host's
// certificate) completes within AddrTimeout; the others are cancelled or
// closed.
func Race(ctx context.Context, cands []Candidate, stagger time.Duration, dial func(context.Context, string) (net.Conn, error)) (net.Conn, Candidate, error) {
	if len(cands) == 0 {
		return nil, Candidate{}, errors.New("the host registered no address")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan raceResult, len(cands))
	next, pending := 0, 0
	start := func() {
		i := next
		next++
		pending++
		go func() {
			dctx, cancel := context.WithTimeout(ctx, AddrTimeout)
			c, err := dial(dctx, cands[i].Addr)
			cancel()
			results <- raceResult{i, c, err}
		}()
	}
	start()
	timer := time.NewTimer(stagger)
	defer timer.Stop()
	errs := make([]error, len(cands))
	for pending > 0 {
		select {
		case <-timer.C:
			if next < len(cands) {
				start()
				timer.Reset(stagger)
			}
		case r := <-results:
			pending--
			if r.err == nil {
				cancel()
				go drain(results, pending)
				return r.conn, cands[r.i], nil
			}
			errs[r.i] = r.err
			if next < len(cands) {
				start()
				timer.Reset(stagger)
			}
		}
	}
	return nil, Candidate{}, &RaceError{Tried: cands, Errs: errs}
}

// raceResult is one dial's end.
type raceResult struct {
	i    int
	conn net.Conn
	err  error
}

// drain closes the connections of the n dials still running after a race
// was won.
func drain(results <-chan raceResult, n int) {
	for ; n > 0; n-- {
		if r := <-results; r.conn != nil {
			r.conn.Close()
		}
	}
}

// RaceError is a race every candidate lost.
type RaceError struct {
	Tried []Candidate
	Errs  []error
}

func (e *RaceError) Error() string {
	parts := make([]string, len(e.Tried))
	for i, c := range e.Tried {
		parts[i] = fmt.Sprintf("%s %s: %v", c.Path, c.Addr, e.Errs[i])
	}
	return "no address of the host answered (" + strings.Join(parts, "; ") + ")"
}

// Unwrap gives the candidates' errors (a *tlsid.MismatchError among them
// says the host at an address is not the one pinned).
func (e *RaceError) Unwrap() []error { return e.Errs }
