package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"slices"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
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

// iceAnswer takes a joiner's signalling attempt on the host's side: nil
// until the ICE path (hole punching, TURN) plugs in here, as a
// coord.HostConfig.OnSignal whose connections join the session as the
// WebSocket listener's do (host.Listeners.Extra). Without it the host
// closes every attempt at once and joiners hear that no relayed path is
// available.
var iceAnswer func(ctx context.Context, s coord.Signal, turn *coord.TURN)

// invite is the host's registration with a coordinator.
type invite struct {
	co   *coord.Coordinator
	game netip.AddrPort // the game listener
	web  netip.AddrPort // the --http listener, if any
	fp   string
	pm   *portMapping
	log  *slog.Logger
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
	inv := &invite{co: co, pm: s.portMap, log: s.log}
	inv.game, _ = netip.ParseAddrPort(s.pre.game.Addr().String())
	if s.pre.web != nil {
		inv.web, _ = netip.ParseAddrPort(s.pre.web.Addr().String())
	}
	if t := s.cfg.Admission.TLS; t != nil && len(t.Certificates) > 0 {
		inv.fp = tlsid.Fingerprint(t.Certificates[0])
	}
	printed := false
	h := coord.Register(ctx, coord.HostConfig{Coordinator: co, Secret: secret, Reach: inv.reach, Logger: s.log, OnSignal: iceAnswer,
		OnRegistered: func(code coord.Code, _ *coord.TURN) {
			s.log.Info("registered with the coordinator", "code", code, "coordinator", co.String())
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
