package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/coordice"
	"github.com/lockhost/lockhost/transport/ice"
	"github.com/lockhost/lockhost/transport/portmap"
	"github.com/urfave/cli/v2"
)

// coordinatorFlag is serve's --coordinator.
func coordinatorFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "coordinator",
		EnvVars: []string{coord.URLEnv},
		Usage: "register with the coordinator at `URL` (https://HOST[:PORT], #sha256:... after it to pin a self-signed one, " +
			"as host coordinator prints it) and print an invite code and link friends join with, even behind a router that " +
			"forwards nothing; the code is kept in --data-dir, the same across restarts (one code per data folder)",
	}
}

// checkCoordinator refuses a --coordinator that is not a coordinator URL.
func checkCoordinator(c *cli.Context) (*coord.Coordinator, error) {
	u := c.String("coordinator")
	if u == "" {
		return nil, nil
	}
	co, err := coord.ParseURL(u)
	if err != nil {
		return nil, cliutil.Usagef("--coordinator: %v", err)
	}
	return co, nil
}

// iceFlags are serve's options for the ICE path of --coordinator.
func iceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "relay-only", Usage: "with --coordinator: connect joiners who come by invite code only through the coordinator's " +
			"TURN relay and register no address with it, so that they never learn this machine's address (the game port " +
			"still takes whoever reaches it)"},
		&cli.BoolFlag{Name: "debug-invite-no-addrs", Hidden: true, Usage: "debugging: register no address with the coordinator, " +
			"so that joiners by invite code connect through ICE"},
	}
}

// iceAnswerer is the host's side of the ICE path: it answers joiners'
// signalling attempts through the coordinator (coord.HostConfig.OnSignal)
// with the TURN credentials of the registration, and its listener joins
// the session beside the game port (host.Listeners.Extra). Attempts are
// counted by outcome in the metrics, when there are metrics.
func (s *serving) iceAnswerer() *coordice.Answerer {
	cfg := ice.Config{RelayOnly: s.c.Bool("relay-only"), Logger: s.log}
	return coordice.NewAnswerer(cfg, func(outcome string) {
		s.log.Info("a joiner's connection through the coordinator", "outcome", outcome)
		if s.observer != nil {
			s.observer.ConnectAttempt(outcome)
		}
	})
}

// invite is the host's registration with a coordinator.
type invite struct {
	co   *coord.Coordinator
	game netip.AddrPort // the game listener
	web  netip.AddrPort // the --http listener, if any
	fp   string
	pm   *portMapping
	log  *slog.Logger
	// noAddrs registers no game address: joiners by code come through
	// ICE (--relay-only, --debug-invite-no-addrs).
	noAddrs bool
}

// startInvite registers the host with --coordinator, if given, until ctx
// ends, and prints the invite once the coordinator accepts it.
func (s *serving) startInvite(ctx context.Context) error {
	co, err := checkCoordinator(s.c)
	if co == nil || err != nil {
		return err
	}
	data, err := dataDir(s.c)
	if err != nil {
		return err
	}
	secret, created, err := coord.LoadOrCreateSecret(data)
	if err != nil {
		return err
	}
	if created {
		s.log.Info("made a new invite code", "file", coord.SecretFile, "dir", data)
	}
	inv := &invite{co: co, pm: s.portMap, log: s.log, noAddrs: s.c.Bool("relay-only") || s.c.Bool("debug-invite-no-addrs")}
	inv.game, _ = netip.ParseAddrPort(s.pre.game.Addr().String())
	if s.pre.web != nil {
		inv.web, _ = netip.ParseAddrPort(s.pre.web.Addr().String())
	}
	if t := s.cfg.Admission.TLS; t != nil && len(t.Certificates) > 0 {
		inv.fp = tlsid.Fingerprint(t.Certificates[0])
	}
	s.ice = s.iceAnswerer()
	printed := false
	h := coord.Register(ctx, coord.HostConfig{Coordinator: co, Secret: secret, Reach: inv.reach, Logger: s.log, OnSignal: s.ice.Answer,
		OnRegistered: func(code coord.Code, turn *coord.TURN) {
			s.log.Info("registered with the coordinator", "code", code, "coordinator", co.String(), "turn", turn != nil)
			if turn == nil && s.c.Bool("relay-only") {
				s.log.Warn("--relay-only, but the coordinator offers no TURN relay: joiners by invite code cannot connect")
			}
			if !printed {
				printed = true
				fmt.Fprintf(os.Stderr, "invite code %s; a friend joins with:\n  join %s --coordinator %s\nor opens in a browser:\n  %s\n",
					code, code, co.String(), co.InviteLink(code))
			}
		}})
	if s.portMap != nil {
		go func() { // a router that mapped the port adds an address
			select {
			case <-s.portMap.done:
				h.Update()
			case <-ctx.Done():
			}
		}()
	}
	return nil
}

// reach is how the host may be reached now: the router's mapped address
// and the machine's public ones as direct addresses, its other ones as
// LAN addresses, the browser player on each, the TLS fingerprint.
func (inv *invite) reach() coord.Reach {
	r := coord.Reach{Fingerprint: inv.fp}
	var ext netip.Addr
	if inv.pm != nil {
		if st := inv.pm.Status(); st.State == portmap.Mapped {
			ext = st.External.Addr()
			r.Addrs = append(r.Addrs, st.External.String())
		}
	}
	for _, a := range reachableAddrs(inv.game.Addr(), machineInterfaces()) {
		ap := netip.AddrPortFrom(a, inv.game.Port()).String()
		if publicAddr(a) {
			r.Addrs = append(r.Addrs, ap)
		} else {
			r.LAN = append(r.LAN, ap)
		}
	}
	if inv.web.IsValid() {
		for _, a := range reachableAddrs(inv.web.Addr(), machineInterfaces()) {
			r.Play = append(r.Play, "http://"+netip.AddrPortFrom(a, inv.web.Port()).String()+play.Path)
		}
		if ext.IsValid() && !inv.web.Addr().IsLoopback() {
			r.Play = append([]string{"http://" + netip.AddrPortFrom(ext, inv.web.Port()).String() + play.Path}, r.Play...)
		}
	}
	if inv.noAddrs {
		r.Addrs, r.LAN = nil, nil
	}
	r.Addrs = trim(slices.Compact(r.Addrs), coord.MaxAddrs)
	r.LAN = trim(r.LAN, coord.MaxAddrs)
	r.Play = trim(r.Play, coord.MaxPlay)
	return r
}

// trim keeps the first n of list.
func trim(list []string, n int) []string {
	if len(list) > n {
		return list[:n]
	}
	return list
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
