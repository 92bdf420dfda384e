package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/coordice"
	"github.com/lockhost/lockhost/transport/ice"
	"github.com/urfave/cli/v2"
)

// defaultInviteTimeout bounds reaching a host by its invite code, as
// OpenTTD's coordinator does.
const defaultInviteTimeout = 20 * time.Second

// inviteFlags are the join tool's options for joining by invite code.
func inviteFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "coordinator", EnvVars: []string{coord.URLEnv}, Usage: "with +CODE: the coordinator `URL` the host registered with " +
			"(as the host prints it: https://HOST[:PORT], #sha256:... after it pins a self-signed one)"},
		&cli.DurationFlag{Name: "connect-timeout", Value: defaultInviteTimeout, Usage: "with +CODE: give up reaching the host after this long, every way together (more than 0)"},
		&cli.BoolFlag{Name: "relay-only", Usage: "with +CODE: reach the host only through the coordinator's TURN relay, trying none of its addresses, " +
			"so that the host never learns yours"},
	}
}

// iceFallback is the way to the host tried beside the registered
// addresses once they have had their head start (coord.HeadStart), or
// at once when they all failed: an ICE connection through the
// coordinator's signalling, with the TURN servers of the lookup.
func iceFallback(relayOnly bool, timeout time.Duration) coord.Fallback {
	return coordice.Fallback(ice.Config{RelayOnly: relayOnly, Timeout: timeout, Logger: slog.New(slog.DiscardHandler)})
}

// inviteKey is the known hosts entry of a code: the code and "invite" in
// place of a port, so that it never matches an address.
func inviteKey(code coord.Code) string { return string(code) + ":invite" }

// byInvite is a join by invite code: the coordinator, the lookup and the
// pin the host is held to.
type byInvite struct {
	code    coord.Code
	co      *coord.Coordinator
	timeout time.Duration
	relay   bool   // --relay-only
	pin     string // the fingerprint the host must present; "": no TLS
	local   bool   // pin came from --fingerprint or the known hosts file
	known   *tlsid.KnownHosts
	tls     *tls.Config

	mu    sync.Mutex
	reply coord.LookupReply
	calls int
	path  string        // how the last connection went: lan, direct, ...
	took  time.Duration // how long it took to connect
}

// lookupInvite looks the code up and works out the pin: the joiner's own
// (which the coordinator must agree with) or else the coordinator's.
func lookupInvite(ctx context.Context, c *cli.Context, arg string) (*byInvite, error) {
	code, err := coord.ParseCode(arg)
	if err != nil {
		return nil, cliutil.Usagef("%v", err)
	}
	u := c.String("coordinator")
	if u == "" {
		return nil, cliutil.Usagef("to join by invite code, give the coordinator the host registered with: --coordinator URL (or set %s)", coord.URLEnv)
	}
	co, err := coord.ParseURL(u)
	if err != nil {
		return nil, cliutil.Usagef("--coordinator: %v", err)
	}
	inv := &byInvite{code: code, co: co, timeout: c.Duration("connect-timeout"), relay: c.Bool("relay-only")}
	local, known, err := invitePin(c, code)
	if err != nil {
		return nil, err
	}
	inv.known, inv.local = known, local != ""
	lctx, cancel := context.WithTimeout(ctx, inv.timeout)
	defer cancel()
	if inv.reply, err = co.Lookup(lctx, code); err != nil {
		return nil, err
	}
	if inv.pin, err = inv.reply.Pin(local); err != nil {
		return nil, err
	}
	if inv.pin != "" {
		inv.tls, _ = tlsid.ClientConfig(inviteKey(code), inv.pin, nil)
	}
	return inv, nil
}

// invitePin is the joiner's own pin for code: --fingerprint, else the
// known hosts file's entry for it ("" when neither has one).
func invitePin(c *cli.Context, code coord.Code) (string, *tlsid.KnownHosts, error) {
	path := c.String("known-hosts")
	if path == "" {
		p, err := tlsid.DefaultKnownHostsPath()
		if err != nil {
			return "", nil, cannotStart(fmt.Errorf("known hosts file: %w", err))
		}
		path = p
	}
	known := &tlsid.KnownHosts{Path: path}
	if f := c.String("fingerprint"); f != "" {
		p, err := tlsid.ParseFingerprint(f)
		if err != nil {
			return "", nil, cliutil.Usagef("--fingerprint: %v", err)
		}
		return p, known, nil
	}
	fp, ok, err := known.Lookup(inviteKey(code))
	if err != nil {
		return "", nil, cannotStart(err)
	}
	if ok {
		return fp, known, nil
	}
	return "", known, nil
}

// configure (a no-op on nil) makes cfg reach the host through the coordinator: each
// attempt races the host's addresses (looked up again after the first)
// within --connect-timeout, and TLS, when the host has it, is checked
// in the race so that a wrong host at an address loses it.
func (inv *byInvite) configure(cfg *join.Config) {
	if inv == nil {
		return
	}
	cfg.Addr = string(inv.code)
	cfg.TLS = nil
	cfg.DialTimeout = inv.timeout
	cfg.Dial = inv.dial
}

// dial is one attempt to reach the host.
func (inv *byInvite) dial(ctx context.Context, _ string) (net.Conn, error) {
	inv.mu.Lock()
	inv.calls++
	again := inv.calls > 1
	reply := inv.reply
	inv.mu.Unlock()
	if again { // a rejoin: the host may have moved
		if r, err := inv.co.Lookup(ctx, inv.code); err == nil && r.Fingerprint == inv.pin {
			reply = r
		}
	}
	start := time.Now()
	conn, path, err := inv.co.Connect(ctx, reply, coord.ConnectOptions{Dial: inv.dialAddr, Fallback: iceFallback(inv.relay, inv.timeout),
		FallbackOnly: inv.relay, Wrap: inv.handshake})
	if err != nil {
		return nil, inv.explain(err)
	}
	inv.mu.Lock()
	inv.path, inv.took = path, time.Since(start)
	inv.mu.Unlock()
	return conn, nil
}

// dialAddr connects to one address and, for a host with TLS, checks its
// certificate.
func (inv *byInvite) dialAddr(ctx context.Context, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return inv.handshake(ctx, nc)
}

// handshake runs TLS over nc when the host has it.
func (inv *byInvite) handshake(ctx context.Context, nc net.Conn) (net.Conn, error) {
	if inv.tls == nil {
		return nc, nil
	}
	tc := tls.Client(nc, inv.tls)
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// explain makes a failed attempt one sentence: what was tried, within
// how long, and what is left.
func (inv *byInvite) explain(err error) error {
	var me *tlsid.MismatchError
	if errors.As(err, &me) {
		return me
	}
	within := ""
	if errors.Is(err, context.DeadlineExceeded) {
		within = " within " + inv.timeout.String()
	}
	return fmt.Errorf("could not reach the host of %s%s: %s (%w)", inv.code, within, inv.tried(err), err)
}

// tried says in words which ways err says failed.
func (inv *byInvite) tried(err error) string {
	var ce *coord.ConnectError
	if !errors.As(err, &ce) {
		return "the coordinator did not answer"
	}
	addrs := "none of the addresses it registered answered"
	switch {
	case inv.relay:
		addrs = "with --relay-only no address is tried"
	case ce.Addrs == nil:
		addrs = "the addresses it registered were still being tried"
	}
	switch {
	case ce.Fallback == nil:
		return addrs
	case errors.Is(ce.Fallback, coord.ErrSignalClosed):
		return addrs + ", and the host ended the connection attempt through the coordinator (it takes none, or is busy)"
	case inv.relay:
		return addrs + ", and the connection through the coordinator's TURN relay failed"
	}
	return addrs + ", and the connection through the coordinator (hole punching, then its TURN relay if it offers one) failed"
}

// ready (a no-op on nil) pins a fingerprint the coordinator gave once the join has
// succeeded (trust on first use, as with an address), and says how the
// host was reached.
func (inv *byInvite) ready() {
	if inv == nil {
		return
	}
	inv.mu.Lock()
	path, took := inv.path, inv.took
	inv.mu.Unlock()
	fmt.Fprintf(stderr, "reached the host of %s: %s, connected in %v\n", inv.code, path, took.Round(time.Millisecond))
	if inv.local || inv.pin == "" {
		return
	}
	if err := inv.known.Remember(inviteKey(inv.code), inv.pin); err != nil {
		fmt.Fprintf(stderr, "warning: could not pin the host's certificate: %v\n", err)
		return
	}
	fmt.Fprintf(stderr, "trusting %s on first use: certificate %s (as the coordinator gave it), pinned in %s\n", inv.code, inv.pin, inv.known.Path)
}

// explainLookup is a failed lookup as the user sees it: a coordinator
// that contradicts the joiner's pin is a warning, as a host's mismatch is.
func explainLookup(err error) error {
	var pe *coord.PinError
	if errors.As(err, &pe) {
		return fmt.Errorf("WARNING: %w", pe)
	}
	return err
}

// drainICE lets the connections through ICE that this process closed
// send what was written before their close (a player's leaving, the
// host's goodbye): they send in the background, and nothing does once the
// process has exited. A process that used none returns at once.
func drainICE() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = ice.Drain(ctx)
}
