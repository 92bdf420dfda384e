package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Step 7's figures: the goals for the median time to connect (judged
// with -goals), and how many joins run at once.
const (
	goalDirect     = 2 * time.Second
	goalRelayed    = 4 * time.Second
	matrixParallel = 4
	matrixCommands = 2 // the commands each joiner plays after WorldReady
)

var (
	reInvite    = regexp.MustCompile(`invite code (\+\S+); a friend joins with:\n  (join [^\n]+)\n`)
	reReadyConn = regexp.MustCompile(`WorldReady tick=\d+[^\n]* connect=(\S+) [^\n]*total=(\S+)`)
	rePath      = regexp.MustCompile(`reached the host of \+\S+: ([a-z-]+)(?:,|\n)`)
)

// matrixHost is a host serve --coordinator behind one of the routers.
type matrixHost struct {
	site site
	proc *proc
	line string // the join line it printed
}

// pathClass is the paths a pair may take.
type pathClass struct {
	name  string
	paths []string
}

var (
	classPunched = pathClass{"direct/punched", []string{"direct", "punched"}}
	classRelayed = pathClass{"relayed", []string{"turn-udp", "turn"}}
	classTCP     = pathClass{"relayed over TCP", []string{"turn-tcp", "turn-tls"}}
	classTLS     = pathClass{"relayed over TLS 443", []string{"turn-tls"}}
)

// expectedPath is how a joiner behind j must reach a host behind h: hole
// punching works unless one side maps each destination to a new port
// (symmetric) and the other only lets in the port it sent to (port-
// restricted or symmetric); from the hostile networks only TURN over TCP
// or TLS is left.
func expectedPath(h, j natKind) pathClass {
	switch {
	case j == udpBlocked:
		return classTCP
	case j == tcp443Only:
		return classTLS
	case h == symmetric && (j == portRestricted || j == symmetric), j == symmetric && h == portRestricted:
		return classRelayed
	}
	return classPunched
}

// pairResult is one joiner's attempt at one host.
type pairResult struct {
	host, joiner site
	want         pathClass
	path         string
	connect      time.Duration // the join tool's connect= (the invite's dial: addresses raced, then ICE)
	ready        time.Duration // from starting join to WorldReady
	played       []time.Duration
	hostPath     string // the host's side's name for the path (the ICE check)
	err          error
}

// ok says the pair connected, played and took a path its NATs allow.
func (r pairResult) ok() bool { return r.err == nil && slices.Contains(r.want.paths, r.path) }

// relayed says the path went through TURN.
func (r pairResult) relayed() bool { return strings.HasPrefix(r.path, "turn") }

// step7 runs every joiner site against every host: the 16 NAT pairs and
// the hostile networks against each host.
func (l *lab) step7() (string, error) {
	if err := l.natSetup(); err != nil {
		return "", err
	}
	if err := l.startInternet(); err != nil {
		return "", err
	}
	hostSites, joinerSites := labSites()
	hosts, err := l.startMatrixHosts(hostSites)
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	results := eachPair(len(hosts), len(joinerSites), matrixParallel, func(h, j int) pairResult {
		return l.runPair(hosts[h], joinerSites[j])
	})
	fmt.Printf("nat-lab:   %d joins in %.1f s, %d at a time; the coordinator counted: %s\n", len(results), time.Since(t0).Seconds(),
		matrixParallel, l.coordCounts())
	what, err := judgeMatrix(results, "reached WorldReady, played and left (each host logged each leave)", l.goals)
	if err != nil {
		return "", err
	}
	if err := checkLeaves(hosts, len(joinerSites)); err != nil {
		return "", err
	}
	return what, nil
}

var reLeft = regexp.MustCompile(`msg="player left"`)

// checkLeaves says whether every host logged each of its joiners'
// leaves: a joiner stopped by an interrupt says Client_Leave before it
// exits, and over ICE that message is still being sent when its
// connection is closed (the join tool waits for it before it exits).
func checkLeaves(hosts []*matrixHost, joiners int) error {
	var short []string
	for _, h := range hosts {
		deadline := time.Now().Add(5 * time.Second)
		n := 0
		for {
			n = len(reLeft.FindAllString(h.proc.out.String(), -1))
			if n >= joiners || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n != joiners {
			short = append(short, fmt.Sprintf("the host behind %s logged %d leaves of %d joiners", h.site, n, joiners))
		}
	}
	if len(short) > 0 {
		return fmt.Errorf("joiners' leaves were lost: %s", strings.Join(short, "; "))
	}
	return nil
}

// eachPair runs every host index against every joiner index, parallel at
// a time, and prints each result as it comes. The order is joiner major,
// so that the pairs running at once go to different hosts.
func eachPair(hosts, joiners, parallel int, run func(h, j int) pairResult) []pairResult {
	results := make([]pairResult, hosts*joiners)
	work := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = run(i%hosts, i/hosts)
				printPair(results[i])
			}
		}()
	}
	for i := range results {
		work <- i
	}
	close(work)
	wg.Wait()
	return results
}

// startMatrixHosts starts a host behind each host site, at once, and
// waits for each to print its invite.
func (l *lab) startMatrixHosts(sites []site) ([]*matrixHost, error) {
	hosts := make([]*matrixHost, len(sites))
	errs := make([]error, len(sites))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, s := range sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hosts[i], errs[i] = l.startMatrixHost(s, "", gamePort)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("the host behind %s: %w", sites[i], err)
		}
	}
	fmt.Printf("nat-lab:   %d hosts registered (%.1f s):", len(hosts), time.Since(t0).Seconds())
	for _, h := range hosts {
		fmt.Printf(" %s %s;", h.site.kind, strings.Fields(h.line)[1])
	}
	fmt.Println()
	return hosts, nil
}

// startMatrixHost runs host serve --coordinator (with TLS, no port
// mapping) behind s's router on port and waits for its world and its
// invite; a second host behind the same router (step 8's, beside step
// 7's) has a prefix for its data folder (its own code) and game, and a
// port of its own.
func (l *lab) startMatrixHost(s site, prefix, port string) (*matrixHost, error) {
	args := []string{l.hostBin, "serve", "--listen", ":" + port, "--data-dir", filepath.Join(l.dir, prefix+"host-"+s.kind.short()),
		"--game-name", "Lab-" + prefix + s.kind.short(), "--conn-rate", "-1", "--maps", "1", "--map-size", "64",
		"--port-mapping", "off", "--tls", "--coordinator", l.nat.coordURL}
	p, err := start("host behind "+s.String(), s.machine(), false, []string{"SSL_CERT_FILE=" + l.nat.certFile}, args...)
	if err != nil {
		return nil, err
	}
	if _, err := p.waitFor(reWorldReady, 90*time.Second); err != nil {
		return nil, err
	}
	m, err := p.waitFor(reInvite, 30*time.Second)
	if err != nil {
		return nil, err
	}
	return &matrixHost{site: s, proc: p, line: m[2]}, nil
}
