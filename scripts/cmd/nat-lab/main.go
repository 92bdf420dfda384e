// Command nat-lab proves that a host behind a home router can be joined
// from the internet, in a small internet of network namespaces it builds
// (as root) and removes on exit: a home LAN with the host and a second
// machine, a router that NATs the LAN with nftables and runs Debian's
// miniupnpd (UPnP-IGD and NAT-PMP), and an outside namespace for the
// friend. Every address is in a documentation range, but for the homes
// behind the NAT matrix's routers (steps 5 to 8), which have private ones
// as homes do; the namespaces have no link to the machine's network, so
// nothing leaves the machine.
//
// It prints one line per step with its time and exits 1 unless every step
// it ran held:
//  1. without a mapping the friend cannot reach the host;
//  2. with --port-mapping auto the host maps its port, the friend joins
//     through the router with the line the host printed and plays, and
//     on shutdown the mapping is gone (then the same with upnp);
//  3. the second LAN machine finds the host with join discover and joins
//     it by name;
//  4. with the uplink shaped to 10 Mbit/s, a friend outside downloads a
//     64 MiB world while a player outside plays: the router's uplink
//     never queues more than 100 ms of data (read from its shaper), and
//     the player's command round trips during the download stay within
//     100 ms of the median before it at the 90th percentile;
//  5. in a second small internet (the NAT matrix: a host behind each of
//     four routers, a joiner behind each of four more and behind two
//     networks hostile to UDP), a probe of its own shows each router
//     behaves as its kind: full-cone, address-restricted, port-restricted
//     or symmetric NAT (RFC 4787's mapping and filtering), UDP blocked,
//     only TCP 443;
//  6. with Debian's coturn on that internet (STUN, TURN over UDP, TCP and
//     TLS on 443), the ICE transport alone (transport/ice, with a
//     signalling relay of the lab's own) connects every host site to
//     every joiner site by the path the pair allows: the network and the
//     library hold before the tools are judged;
//  7. with a coordinator (host coordinator) beside coturn, every host
//     serve --coordinator is joined by join +CODE from every joiner
//     site: each reaches WorldReady, plays and leaves (its host logs
//     the leave), by a path its pair of NATs allows (punched where hole punching can work,
//     relayed through TURN where it cannot, TURN over TCP or TLS on 443
//     from the hostile networks); one line per pair with its path and
//     time to connect, and the median connect times direct and relayed;
//  8. headless Chromium (Debian's chromium) in a joiner's namespace opens
//     the coordinator's invite link of a host behind symmetric NAT: the
//     page the coordinator serves joins through its signalling and the
//     browser's own RTCPeerConnection and reaches WorldReady, punched
//     from behind full-cone NAT, relayed from behind symmetric NAT.
//
// scripts/nat-lab builds the tools, installs what is missing and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lab is one run: the tools, its folder and the router's daemons.
type lab struct {
	hostBin, joinBin, self, dir string
	miniupnpd                   *proc
	verbose                     bool
	// goals: step 7 fails when its median connect times miss the goals
	// (-goals: a run by hand on a quiet machine; otherwise they are
	// printed, since a loaded machine's wall clock is no verdict).
	goals bool
	nat   natLab
}

func main() {
	if ok, code := runHelper(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(run())
}

func run() int {
	hostBin := flag.String("host", "", "the host binary")
	joinBin := flag.String("join", "", "the join binary")
	stepList := flag.String("steps", "1,2,3,4,5,6,7,8", "the steps to run, comma-separated")
	verbose := flag.Bool("v", false, "print the router's daemon log at the end")
	goals := flag.Bool("goals", false, "fail step 7 when its median connect times miss the goals (2 s direct, 4 s relayed); without it they are printed")
	flag.Parse()
	steps, err := parseSteps(*stepList)
	if err != nil || *hostBin == "" || *joinBin == "" {
		fmt.Fprintln(os.Stderr, "usage: nat-lab -host BIN -join BIN [-steps 1,2,3,4,5,6,7,8]", err)
		return 2
	}
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "nat-lab: needs root (it makes network namespaces)")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "nat-lab:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "nat-lab-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "nat-lab:", err)
		return 1
	}
	l := &lab{hostBin: *hostBin, joinBin: *joinBin, self: self, dir: dir, verbose: *verbose, goals: *goals}
	defer l.cleanup()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Fprintln(os.Stderr, "nat-lab: interrupted; removing the lab")
		l.cleanup()
		os.Exit(130)
	}()
	return l.runSteps(steps)
}

// parseSteps reads -steps.
func parseSteps(s string) ([]int, error) {
	var steps []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 8 {
			return nil, fmt.Errorf("-steps %q: steps are 1 to 8", s)
		}
		steps = append(steps, n)
	}
	slices.Sort(steps)
	return slices.Compact(steps), nil
}

// runSteps builds the lab and runs the steps; 0 when all held.
func (l *lab) runSteps(steps []int) int {
	t0 := time.Now()
	if steps[0] <= 4 { // the home lab serves steps 1 to 4; the NAT matrix builds its own
		if err := l.setup(); err != nil {
			fmt.Printf("nat-lab: setup FAILED (%.1f s): %v\n", time.Since(t0).Seconds(), err)
			return 1
		}
		fmt.Printf("nat-lab: setup ok (%.1f s): LAN %s%s behind router %s, outside %s; miniupnpd (UPnP-IGD, NAT-PMP) on the router\n",
			time.Since(t0).Seconds(), routerLAN, lanPrefix, routerWAN, outAddr)
	}
	fns := map[int]func() (string, error){1: l.step1, 2: l.step2, 3: l.step3, 4: l.step4, 5: l.step5, 6: l.step6, 7: l.step7, 8: l.step8}
	failed := 0
	for _, n := range steps {
		start := time.Now()
		what, err := fns[n]()
		took := time.Since(start).Seconds()
		if err != nil {
			failed++
			fmt.Printf("nat-lab: step %d FAILED (%.1f s): %v\n", n, took, err)
			continue
		}
		fmt.Printf("nat-lab: step %d ok (%.1f s): %s\n", n, took, what)
	}
	if failed > 0 {
		fmt.Printf("nat-lab: %d of %d steps failed\n", failed, len(steps))
		return 1
	}
	fmt.Printf("nat-lab: ok, %d steps (%.1f s)\n", len(steps), time.Since(t0).Seconds())
	return 0
}

// setup builds the network and starts the STUN server and miniupnpd.
func (l *lab) setup() error {
	if err := buildNetwork(); err != nil {
		return err
	}
	if _, err := start("stun", nsOut, false, nil, l.self, helperSTUN, stunAddr+":"+stunPort); err != nil {
		return err
	}
	conf := filepath.Join(l.dir, "miniupnpd.conf")
	if err := os.WriteFile(conf, []byte(miniupnpdConf(l.dir)), 0o600); err != nil {
		return err
	}
	time.Sleep(100 * time.Millisecond) // the STUN server binds
	p, err := start("miniupnpd", nsRouter, false, nil, "miniupnpd", "-f", conf, "-d", "-P", filepath.Join(l.dir, "miniupnpd.pid"))
	if err != nil {
		return err
	}
	l.miniupnpd = p
	_, err = p.waitFor(rePortForwardingOn, 15*time.Second)
	return err
}

// cleanup stops every process and removes the namespaces.
func (l *lab) cleanup() {
	if l.verbose && l.miniupnpd != nil {
		fmt.Println("miniupnpd's log:\n" + tail(l.miniupnpd.out.String(), 60))
	}
	if l.verbose && l.nat.turn != nil {
		fmt.Println("turnserver's log:\n" + tail(l.nat.turn.out.String(), 100000))
	}
	stopAll()
	removeNamespaces()
	removeNATNamespaces()
	_ = os.RemoveAll(l.dir)
}
