package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/portmap"
	"github.com/urfave/cli/v2"
)

// portMappingEnv sets --port-mapping from the environment; the tests set
// it to off so that no test asks a real router.
const portMappingEnv = "LOCKHOST_PORT_MAPPING"

// portMappingFlag is serve's --port-mapping.
func portMappingFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "port-mapping",
		Value:   "auto",
		EnvVars: []string{portMappingEnv},
		Usage: "ask the home router to forward the game port (TCP, and UDP for join ping) so friends on the internet can join: " +
			"auto (UPnP-IGD or NAT-PMP, whichever answers first; only when --listen is not loopback and this machine has a " +
			"private address), upnp, nat-pmp, or off; the mapping is renewed while the host runs and removed when it stops",
	}
}

// portMappingPlan is what serve does about port mapping: ask by method, or
// nothing, and why not.
type portMappingPlan struct {
	method portmap.Method // empty: off
	why    string         // why it is off, when the operator did not say so
}

// planPortMapping reads --port-mapping against the listen address.
// eligible is portmap.Eligible, which tests replace.
func planPortMapping(value, listen string, agones bool, eligible func(string) (bool, string)) (portMappingPlan, error) {
	switch value {
	case "off":
		return portMappingPlan{}, nil
	case string(portmap.Auto), string(portmap.UPnP), string(portmap.NATPMP):
	default:
		return portMappingPlan{}, cliutil.Usagef("--port-mapping %q: use auto, upnp, nat-pmp or off", value)
	}
	if agones {
		return portMappingPlan{why: "under Agones the fleet publishes the port"}, nil
	}
	if ok, why := eligible(listen); !ok {
		return portMappingPlan{why: why}, nil
	}
	return portMappingPlan{method: portmap.Method(value)}, nil
}

// portMapping is the host's port mapping as it goes: searching, then
// mapped or not, then removed on shutdown.
type portMapping struct {
	port   uint16
	udp    bool
	local  string   // the host's address in words, for the advice
	fp     string   // the TLS fingerprint friends pin, if any
	web    net.Addr // the --http listener, if any: not mapped
	log    *slog.Logger
	method portmap.Method

	done chan struct{} // closed when run returns

	mu     sync.Mutex
	status portmap.Status
	mapper *portmap.Mapper
	line   string // the line a friend types, once mapped
}

// startPortMapping asks a router for the game port on its own goroutine;
// the returned stop removes the mapping (and waits for the search) when
// the host stops. It returns nil for a host that maps nothing.
func (s *serving) startPortMapping(ctx context.Context, addr net.Addr) *portMapping {
	plan, err := planPortMapping(s.c.String("port-mapping"), s.c.String("listen"), s.agones != nil,
		func(l string) (bool, string) { return portmap.Eligible(l, netip.Addr{}) })
	if err != nil || plan.method == "" {
		if plan.why != "" {
			s.log.Info("port mapping off", "why", plan.why)
		}
		return nil
	}
	ta, _ := addr.(*net.TCPAddr)
	if ta == nil {
		return nil
	}
	pm := &portMapping{port: uint16(ta.Port), udp: true, log: s.log, method: plan.method,
		status: portmap.Status{State: portmap.Searching}, done: make(chan struct{})}
	if t := s.cfg.Admission.TLS; t != nil && len(t.Certificates) > 0 {
		pm.fp = tlsid.Fingerprint(t.Certificates[0])
	}
	if s.pre.web != nil {
		pm.web = s.pre.web.Addr()
	}
	if !ta.IP.IsUnspecified() {
		pm.local = ta.IP.String()
	} else if a, err := portmap.LocalAddr(netip.Addr{}); err == nil {
		pm.local = a.String()
	}
	go pm.run(ctx)
	return pm
}

// run finds a router and maps the port, then prints what a friend types.
func (pm *portMapping) run(ctx context.Context) {
	defer close(pm.done)
	router, err := portmap.Find(ctx, pm.method, netip.Addr{})
	var m *portmap.Mapper
	if err == nil {
		m, err = portmap.Start(ctx, portmap.Config{Router: router, Port: pm.port, UDP: pm.udp, Logger: pm.log})
	}
	pm.mu.Lock()
	defer pm.mu.Unlock()
	if err != nil {
		pm.status = portmap.Status{State: portmap.NoRouter, Err: err.Error()}
		pm.log.Warn("port mapping: no router forwarded the port", "err", err)
		fmt.Fprintln(os.Stderr, pm.advice())
		return
	}
	pm.mapper = m
	if ctx.Err() != nil { // the host stopped while the router answered: stop removes it
		return
	}
	st := m.Status()
	pm.line = joinLine(st.External, pm.fp)
	if !publicAddr(st.External.Addr()) {
		pm.log.Warn("port mapping: the router's external address is not on the internet: another NAT sits beyond it "+
			"(a carrier-grade NAT, or a second router); friends on the internet cannot reach this host through it",
			"external", st.External.String())
	}
	line := pm.line
	pm.log.Info("port mapping: the router forwards the game port", "method", st.Method, "external", st.External.String(),
		"udp", st.UDP, "lease", st.Lease, "join", line)
	fmt.Fprintf(os.Stderr, "the router (%s) forwards %s to this host; a friend on the internet joins with:\n  %s\n",
		st.Method, st.External, line)
	if hint := browserHint(st.External, pm.web); hint != "" {
		fmt.Fprintln(os.Stderr, hint)
	}
}

// browserHint is what to do so a friend on the internet plays in a
// browser, once the router forwards the game port to ext: the --http
// listener is not mapped (it serves the status page and metrics
// too, which the operator opens to the internet, not the host), so its
// port must be forwarded by hand. "" without a listener other machines
// reach.
func browserHint(ext netip.AddrPort, listener net.Addr) string {
	ta, ok := listener.(*net.TCPAddr)
	if !ok || ta.IP.IsLoopback() {
		return ""
	}
	p := strconv.Itoa(ta.Port)
	return "for a browser on the internet, forward TCP port " + p + " (--http) to this host too, then send " +
		"http://" + netip.AddrPortFrom(ext.Addr(), uint16(ta.Port)).String() + play.Path + "; the router is not asked for it, " +
		"as it also serves the status page and metrics (" + web.TokenEnv + " guards them)"
}

// joinLine is what a friend types to join ext: join EXT, and with TLS the
// fingerprint to pin.
func joinLine(ext netip.AddrPort, fp string) string {
	line := "join " + ext.String()
	if fp != "" {
		line += " --tls --fingerprint " + fp
	}
	return line
}

// reach is the port mapping as the status query says it (off when the
// host asks no router).
func (s *serving) reach() status.Reach {
	if s.portMap == nil {
		return status.Reach{Mapping: status.MappingOff}
	}
	st := s.portMap.Status()
	r := status.Reach{Mapping: status.ParseMapping(st.State.String())}
	if st.State == portmap.Mapped || st.State == portmap.Lost {
		r.External = st.External
	}
	return r
}

// portMappingView is the port mapping as the status page shows it.
func (s *serving) portMappingView() web.PortMapping {
	if s.portMap == nil {
		return web.PortMapping{State: portmap.Off.String()}
	}
	st := s.portMap.Status()
	v := web.PortMapping{State: st.State.String(), Method: st.Method, Error: st.Err}
	if st.State == portmap.Mapped || st.State == portmap.Lost {
		v.External = st.External.String()
		s.portMap.mu.Lock()
		v.Join = s.portMap.line
		s.portMap.mu.Unlock()
	}
	return v
}

// advice is the one line said when no router forwards the port: what to
// do instead.
func (pm *portMapping) advice() string {
	to := "this machine"
	if pm.local != "" {
		to += " (" + pm.local + ")"
	}
	p := strconv.Itoa(int(pm.port))
	return "port mapping: no router answered (UPnP-IGD, NAT-PMP) or it refused; for friends on the internet, forward port " +
		p + " TCP (and UDP for join ping) on your router to " + to + " and give them your public address, " +
		"or play over a VPN that puts everyone on one network"
}

// Status is the mapping as it stands, for the status page and the status
// query.
func (pm *portMapping) Status() portmap.Status {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	if pm.mapper != nil {
		return pm.mapper.Status()
	}
	return pm.status
}

// publicAddr says whether a is routed on the internet: not private,
// shared (RFC 6598, carrier-grade NAT), loopback or link-local. The
// documentation ranges count as public: the lab's "internet" uses them.
func publicAddr(a netip.Addr) bool {
	cgnat := netip.MustParsePrefix("100.64.0.0/10")
	return a.IsGlobalUnicast() && !a.IsPrivate() && !cgnat.Contains(a)
}

// stop removes the mapping from the router, once the host has stopped
// taking players (serve's context is done, so a search still under way
// ends at once).
func (pm *portMapping) stop() {
	<-pm.done
	pm.mu.Lock()
	m := pm.mapper
	pm.mu.Unlock()
	if m == nil {
		return
	}
	if err := m.Close(); err != nil {
		pm.log.Warn("port mapping: could not remove the mapping; the router drops it when its lease ends", "err", err)
		return
	}
	pm.log.Info("port mapping removed", "external", m.Status().External.String())
}
