package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// printMu keeps the pairs' lines whole when several finish at once.
var printMu sync.Mutex

// runPair has a joiner behind j join h with the line h printed, play
// matrixCommands commands and leave.
func (l *lab) runPair(h *matrixHost, j site) pairResult {
	r := pairResult{host: h.site, joiner: j, want: expectedPath(h.site.kind, j.kind)}
	name := "J_" + j.kind.short() // a player name: letters, digits and underscores
	known := filepath.Join(l.dir, "known-"+h.site.kind.short()+"-"+j.kind.short())
	args := append([]string{l.joinBin}, strings.Fields(h.line)[1:]...)
	args = append(args, "--name", name, "--quiet", "--no-reconnect", "--known-hosts", known)
	t0 := time.Now()
	p, err := start(fmt.Sprintf("join from %s to %s", j, h.site), j.machine(), true, []string{"SSL_CERT_FILE=" + l.nat.certFile}, args...)
	if err != nil {
		r.err = err
		return r
	}
	defer p.stop(10 * time.Second)
	m, err := p.waitFor(reReadyConn, 60*time.Second)
	if err != nil {
		r.err = errors.New(lastLines(p.out.String(), 2))
		return r
	}
	r.ready = time.Since(t0)
	if r.connect, err = time.ParseDuration(m[1]); err != nil {
		r.err = fmt.Errorf("WorldReady's connect=%q: %v", m[1], err)
		return r
	}
	pm, err := p.waitFor(rePath, 5*time.Second)
	if err != nil {
		r.err = fmt.Errorf("the join did not say how it reached the host: %s", lastLines(p.out.String(), 2))
		return r
	}
	r.path = pm[1]
	for i := range matrixCommands {
		rtt, err := roundTrip(p, i)
		if err != nil {
			r.err = err
			return r
		}
		r.played = append(r.played, rtt)
	}
	if err := p.stop(10 * time.Second); err != nil {
		r.err = fmt.Errorf("leaving: %w", err)
	}
	return r
}

// lastLines is the last n lines of a process's output, on one line.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// printPair prints one pair's line.
func printPair(r pairResult) {
	printMu.Lock()
	defer printMu.Unlock()
	head := fmt.Sprintf("nat-lab:   host %-15s joiner %-15s", r.host.kind, r.joiner.kind)
	if r.err != nil {
		fmt.Printf("%s FAILED (want %s): %v\n", head, r.want.name, r.err)
		return
	}
	verdict := "ok"
	if !r.ok() {
		verdict = "UNEXPECTED PATH (want " + r.want.name + ")"
	}
	if r.hostPath != "" {
		fmt.Printf("%s %-9s connect %5.2f s  (the host's side: %s)  %s\n", head, r.path, r.connect.Seconds(), r.hostPath, verdict)
		return
	}
	fmt.Printf("%s %-9s connect %5.2f s  WorldReady %5.2f s  played %d commands (%s)  %s\n",
		head, r.path, r.connect.Seconds(), r.ready.Seconds(), len(r.played), durations(r.played), verdict)
}

// judgeMatrix says whether every pair connected by an allowed path and,
// when timed, whether the median connect times meet the goals.
func judgeMatrix(results []pairResult, did string, timed bool) (string, error) {
	var direct, relayed []time.Duration
	var bad []string
	for _, r := range results {
		switch {
		case !r.ok():
			bad = append(bad, r.host.kind.String()+"/"+r.joiner.kind.String())
		case r.relayed():
			relayed = append(relayed, r.connect)
		default:
			direct = append(direct, r.connect)
		}
	}
	md, mr := median(direct), median(relayed)
	figures := fmt.Sprintf("median connect direct/punched %s (%d pairs, goal under %v), relayed %s (%d pairs, goal under %v)",
		seconds(md), len(direct), goalDirect, seconds(mr), len(relayed), goalRelayed)
	fmt.Println("nat-lab:   " + figures)
	if len(bad) > 0 {
		return "", fmt.Errorf("%d of %d pairs did not connect by the path their NATs allow (host/joiner): %s; %s",
			len(bad), len(results), strings.Join(bad, ", "), figures)
	}
	if timed && (md > goalDirect || mr > goalRelayed) {
		return "", fmt.Errorf("every pair connected, but too slowly: %s", figures)
	}
	return fmt.Sprintf("%d pairs (16 NAT pairs, the 2 hostile networks against each host) %s, each by the path its NATs allow; %s",
		len(results), did, figures), nil
}

// median is the middle of ds (0 for none).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// seconds prints d, or "none" for no measurement.
func seconds(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// reOutcome is one outcome's count in the coordinator's metrics.
var reOutcome = regexp.MustCompile(`(?m)^lockhost_coordinator_connect_attempts_total\{outcome="([^"]+)"\} (\d+)`)

// coordCounts is the coordinator's count of connection attempts by
// outcome, as joiners reported them.
func (l *lab) coordCounts() string {
	base, pin, _ := strings.Cut(l.nat.coordURL, "#")
	page, err := inWithin(10*time.Second, nsInet, l.self, helperGet, base+"/metrics#"+pin)
	if err != nil {
		return fmt.Sprintf("(metrics unreadable: %v: %.200s)", err, page)
	}
	var counts []string
	for _, m := range reOutcome.FindAllStringSubmatch(page, -1) {
		if m[2] != "0" {
			counts = append(counts, m[1]+" "+m[2])
		}
	}
	if len(counts) == 0 {
		return "no attempts"
	}
	return strings.Join(counts, ", ")
}
