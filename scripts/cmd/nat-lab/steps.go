package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

var (
	rePortForwardingOn = regexp.MustCompile(`Port forwarding is now enabled`)
	reWorldReady       = regexp.MustCompile(`world ready|relay host ready`)
	reJoinLine         = regexp.MustCompile(`a friend on the internet joins with:\n  (join [^\n]+)\n`)
	reMethod           = regexp.MustCompile(`msg="port mapping: the router forwards the game port" method="?([^"=]+?)"? external=`)
	reNoRouter         = regexp.MustCompile(`port mapping: no router answered[^\n]*`)
	reJoinReady        = regexp.MustCompile(`WorldReady tick=\d+[^\n]* total=(\S+)`)
	reRemoved          = regexp.MustCompile(`port mapping removed`)
	reDone             = regexp.MustCompile(`done at tick \d+: spawned`)
	reRefused          = regexp.MustCompile(`notice: Command refused`)
)

// gameName is the lab host's session name (no spaces: join NAME takes it
// as one argument).
const gameName = "LabColony"

// startHost runs host serve in the home namespace on every interface
// (the default --listen) and waits for its world.
func (l *lab) startHost(run string, args ...string) (*proc, error) {
	all := append([]string{l.hostBin, "serve", "--listen", ":" + gamePort, "--data-dir", filepath.Join(l.dir, run),
		"--game-name", gameName, "--conn-rate", "-1", "--maps", "1", "--map-size", "64"}, args...)
	h, err := start("host ("+run+")", nsHome, false, nil, all...)
	if err != nil {
		return nil, err
	}
	if _, err := h.waitFor(reWorldReady, 90*time.Second); err != nil {
		_ = h.stop(5 * time.Second)
		return nil, err
	}
	return h, nil
}

// startJoin runs the join tool in namespace ns with its own known-hosts
// file.
func (l *lab) startJoin(name, ns string, stdin bool, args ...string) (*proc, error) {
	all := append([]string{l.joinBin}, args...)
	all = append(all, "--name", name, "--quiet", "--no-reconnect", "--known-hosts", filepath.Join(l.dir, name+".known"))
	return start(name, ns, stdin, nil, all...)
}

// inWithin runs a command in namespace ns for at most d.
func inWithin(d time.Duration, ns string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}

// probe says whether a TCP connection from ns to addr opens, and what
// happened.
func (l *lab) probe(ns, addr string) (bool, string) {
	out, err := in(ns, l.self, helperProbe, addr)
	return err == nil, strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
}

// step1 runs the host with --port-mapping auto while the router's
// miniupnpd is stopped (SIGSTOP: it answers nothing), so the host finds no
// router and says what to do instead, and the friend cannot reach it.
func (l *lab) step1() (string, error) {
	if err := pause(l.miniupnpd); err != nil {
		return "", err
	}
	resumed := false
	wake := func() {
		if !resumed {
			resumed = true
			_ = resume(l.miniupnpd)
		}
	}
	defer wake()
	h, err := l.startHost("step1", "--port-mapping", "auto")
	if err != nil {
		return "", err
	}
	defer h.stop(10 * time.Second)
	advice, err := h.waitFor(reNoRouter, 20*time.Second)
	if err != nil {
		return "", err
	}
	wake()
	game := homeAddr + ":" + gamePort
	if ok, what := l.probe(nsLAN2, game); !ok {
		return "", fmt.Errorf("the host is not reachable even from the LAN: %s", what)
	}
	var seen []string
	for _, addr := range []string{routerWAN + ":" + gamePort, game} {
		ok, what := l.probe(nsOut, addr)
		if ok {
			return "", fmt.Errorf("the friend reached %s without a mapping", addr)
		}
		seen = append(seen, addr+" "+strings.TrimPrefix(what, "unreachable: "))
	}
	if out, err := inWithin(10*time.Second, nsOut, l.joinBin, "ping", routerWAN+":"+gamePort, "--timeout", "1s"); err == nil {
		return "", fmt.Errorf("join ping answered without a mapping: %s", out)
	}
	if rules, err := mappedRules(gamePort); err != nil || len(rules) > 0 {
		return "", fmt.Errorf("the router holds mappings before any was asked: %v %v", rules, err)
	}
	return fmt.Sprintf("with the router silent the host printed %q; from outside: %s; join ping %s:%s no answer; from the LAN %s answers",
		advice[0], strings.Join(seen, "; "), routerWAN, gamePort, game), nil
}

func (l *lab) step2() (string, error) {
	a, err := l.mapAndPlay("auto", true)
	if err != nil {
		return "", fmt.Errorf("--port-mapping auto: %w", err)
	}
	b, err := l.mapAndPlay("upnp", false)
	if err != nil {
		return "", fmt.Errorf("--port-mapping upnp: %w", err)
	}
	return a + "; " + b, nil
}

// mapAndPlay runs a host with --port-mapping method, has the friend join
// with the line the host printed and play, stops the host and checks
// that the mapping went with it.
func (l *lab) mapAndPlay(method string, tls bool) (string, error) {
	args := []string{"--port-mapping", method, "--http", "127.0.0.1:8080"}
	if tls {
		args = append(args, "--tls")
	}
	h, err := l.startHost("step2-"+method, args...)
	if err != nil {
		return "", err
	}
	defer h.stop(10 * time.Second)
	line, by, err := waitMapped(h)
	if err != nil {
		return "", err
	}
	ext := strings.Fields(line)[1]
	if ext != routerWAN+":"+gamePort {
		return "", fmt.Errorf("the host printed %q; want the router's address %s:%s", line, routerWAN, gamePort)
	}
	rules, err := mappedRules(gamePort)
	if err != nil || len(rules) < 2 {
		return "", fmt.Errorf("the router holds %d rules for port %s (want TCP and UDP): %v", len(rules), gamePort, err)
	}
	ping, err := inWithin(10*time.Second, nsOut, l.joinBin, "ping", ext)
	if err != nil {
		return "", fmt.Errorf("join ping %s through the router: %v: %s", ext, err, ping)
	}
	if want := "port mapping mapped at " + ext; !strings.Contains(ping, want) {
		return "", fmt.Errorf("join ping %s does not say %q: %s", ext, want, ping)
	}
	page, err := in(nsHome, l.self, helperGet, "http://127.0.0.1:8080/api/overview")
	if want := `"port_mapping":{"state":"mapped","method":"` + by + `","external":"` + ext + `"`; err != nil || !strings.Contains(page, want) {
		return "", fmt.Errorf("the status page's JSON lacks %s (%v): %.300s", want, err, page)
	}
	played, err := l.friendPlays(strings.Fields(line)[1:])
	if err != nil {
		return "", err
	}
	if err := h.stop(15 * time.Second); err != nil {
		return "", fmt.Errorf("host stop: %w", err)
	}
	if _, err := h.waitFor(reRemoved, time.Second); err != nil {
		return "", err
	}
	if rules, err := mappedRules(gamePort); err != nil || len(rules) > 0 {
		return "", fmt.Errorf("after the host stopped the router still holds %v %v", rules, err)
	}
	if ok, _ := l.probe(nsOut, ext); ok {
		return "", fmt.Errorf("after the host stopped %s still answers", ext)
	}
	return fmt.Sprintf("%s mapped %s (%d rules; join ping and the status page say so); the friend typed %q and %s; on shutdown the mapping was removed and %s is closed again",
		by, ext, len(rules), line+" --name Friend", played, ext), nil
}

// waitMapped waits for the host to print the line a friend types, and
// returns it and the method that mapped the port.
func waitMapped(h *proc) (line, method string, err error) {
	m, err := h.waitFor(reJoinLine, 20*time.Second)
	if err != nil {
		if nr := reNoRouter.FindString(h.out.String()); nr != "" {
			return "", "", fmt.Errorf("the host found no router: %s", nr)
		}
		return "", "", err
	}
	method = "?"
	if mm := reMethod.FindStringSubmatch(h.out.String()); mm != nil {
		method = mm[1]
	}
	return m[1], method, nil
}

// friendPlays joins from outside with args (the host's printed line, less
// "join"), plays three commands and leaves; it says how it went.
func (l *lab) friendPlays(args []string) (string, error) {
	f, err := l.startJoin("Friend", nsOut, true, args...)
	if err != nil {
		return "", err
	}
	defer f.stop(10 * time.Second)
	m, err := f.waitFor(reJoinReady, 60*time.Second)
	if err != nil {
		return "", err
	}
	var rtts []time.Duration
	for i := range 3 {
		rtt, err := roundTrip(f, i)
		if err != nil {
			return "", err
		}
		rtts = append(rtts, rtt)
	}
	if err := f.say("players"); err != nil {
		return "", err
	}
	if _, err := f.waitFor(regexp.MustCompile(`player \d+ Friend: playing`), 10*time.Second); err != nil {
		return "", err
	}
	if err := f.stop(10 * time.Second); err != nil {
		return "", fmt.Errorf("the friend's leave: %w", err)
	}
	return fmt.Sprintf("reached WorldReady in %s, played 3 commands (round trips %s), still playing", m[1], durations(rtts)), nil
}

// roundTrip types a spawn command on a playing join tool and waits for
// the tool to print that the session applied it: the player's command
// round trip (to the host, stamped at a tick, back, applied). A spawn the
// game refuses (an impassable cell) is tried again on the next cell.
func roundTrip(p *proc, _ int) (time.Duration, error) {
	for range 50 {
		rtt, ok, err := tryCommand(p)
		if err != nil || ok {
			return rtt, err
		}
	}
	return 0, fmt.Errorf("%s: 50 spawns refused in a row; output ends:\n%s", p.name, tail(p.out.String(), 10))
}

// tryCommand spawns one thing on p's next cell; ok is false when the game
// refused it.
func tryCommand(p *proc) (time.Duration, bool, error) {
	count := func(re *regexp.Regexp) int { return len(re.FindAllStringIndex(p.out.String(), -1)) }
	done, refused := count(reDone), count(reRefused)
	cell := p.cells
	p.cells++
	sent := time.Now()
	if err := p.say(fmt.Sprintf("spawn Steel 0 %d %d 1", 3+cell%40, 3+(cell/40)%40)); err != nil {
		return 0, false, err
	}
	deadline := sent.Add(30 * time.Second)
	for {
		switch {
		case count(reDone) > done:
			return time.Since(sent), true, nil
		case count(reRefused) > refused:
			return 0, false, nil
		case time.Now().After(deadline) || !p.running():
			return 0, false, fmt.Errorf("%s: a command got no answer within 30 s; output ends:\n%s", p.name, tail(p.out.String(), 10))
		}
		time.Sleep(time.Millisecond)
	}
}

// durations prints round trips in milliseconds.
func durations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.0f", float64(d.Microseconds())/1000)
	}
	return strings.Join(s, "/") + " ms"
}

func (l *lab) step3() (string, error) {
	help, _ := exec.Command(l.joinBin, "--help").CombinedOutput()
	if !strings.Contains(string(help), "discover") {
		return "", errors.New("this join tool has no discover command")
	}
	h, err := l.startHost("step3", "--port-mapping", "off")
	if err != nil {
		return "", err
	}
	defer h.stop(10 * time.Second)
	out, err := inWithin(15*time.Second, nsLAN2, l.joinBin, "discover")
	if err != nil || !strings.Contains(out, gameName) {
		return "", fmt.Errorf("join discover from %s did not list %s (%v):\n%s", lan2Addr, gameName, err, tail(out, 10))
	}
	listed := strings.TrimSpace(out)
	joined, err := inWithin(60*time.Second, nsLAN2, l.joinBin, gameName, "--name", "Neighbour", "--exit-after-ready",
		"--quiet", "--no-input")
	if err != nil || !reJoinReady.MatchString(joined) {
		return "", fmt.Errorf("join %s --name Neighbour: %v:\n%s", gameName, err, tail(joined, 10))
	}
	return fmt.Sprintf("join discover listed %q; join %s --name Neighbour reached WorldReady", listed, gameName), nil
}
