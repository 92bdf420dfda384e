package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// step 4's figures.
const (
	worldMiB      = "64"
	uploadRate    = "8Mbit" // --max-upload-rate, when the host has it: below the 10 Mbit/s uplink
	latencyBudget = 100 * time.Millisecond
	samplesBefore = 8
	sampleGap     = 250 * time.Millisecond
)

func (l *lab) step4() (string, error) {
	args := []string{"--port-mapping", "auto", "--world-mib", worldMiB}
	help, _ := exec.Command(l.hostBin, "serve", "--help").CombinedOutput()
	paced := strings.Contains(string(help), "--max-upload-rate")
	if paced {
		args = append(args, "--max-upload-rate", uploadRate)
	}
	h, err := l.startHost("step4", args...)
	if err != nil {
		return "", err
	}
	defer h.stop(15 * time.Second)
	line, _, err := waitMapped(h)
	if err != nil {
		return "", err
	}
	ext := strings.Fields(line)[1]
	if err := shapeUplink(); err != nil {
		return "", err
	}
	defer unshapeUplink()
	player, err := l.startJoin("Player", nsOut, true, ext)
	if err != nil {
		return "", err
	}
	defer player.stop(10 * time.Second)
	if _, err := player.waitFor(reJoinReady, 120*time.Second); err != nil {
		return "", fmt.Errorf("the player's join: %w", err)
	}
	before, err := sample(player, 0, samplesBefore, nil)
	if err != nil {
		return "", err
	}
	start := time.Now()
	friend, err := l.startJoin("Downloader", nsOut, false, ext, "--exit-after-ready", "--no-input")
	if err != nil {
		return "", err
	}
	queue := watchQueue()
	during, err := sample(player, samplesBefore, 400, friend)
	worstQueue, queueSamples := queue.stop()
	if err != nil {
		return "", err
	}
	m, err := friend.waitFor(reJoinReady, 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("the download did not finish: %w", err)
	}
	took := time.Since(start)
	if len(during) == 0 {
		return "", fmt.Errorf("the download finished before a round trip could be measured")
	}
	b, d := spread(before), spread(during)
	figures := fmt.Sprintf("%s world over a %s uplink (queue %s), %s: player's command round trip before %s (%d), "+
		"during %s (%d); the uplink's queue at most %.0f ms deep (%d samples); the download took %.1f s (join: total=%s)",
		worldMiB+" MiB", uplinkRate, uplinkQueue, pacing(paced), b, len(before), d, len(during),
		ms(worstQueue), queueSamples, took.Seconds(), m[1])
	// Two judgements, both of which a busy machine leaves standing. The
	// uplink's queue is what world data puts in front of the player's
	// commands, read from the router's shaper itself, so no process's
	// scheduling enters it. The round trips are read from the outside,
	// where a loaded machine adds its own delays now and then: their 90th
	// percentile is judged, against the usual round trip before; the worst
	// is printed.
	if queueSamples == 0 {
		return "", fmt.Errorf("the uplink's queue could not be read during the download: %s", figures)
	}
	if worstQueue > latencyBudget {
		return "", fmt.Errorf("the uplink queued more than %v of data during the download: %s", latencyBudget, figures)
	}
	if d.p90 > b.median+latencyBudget {
		return "", fmt.Errorf("the round trips during the download (90th percentile) exceed the median before it + %v: %s", latencyBudget, figures)
	}
	return figures, nil
}

// queueWatch samples the depth of the router's uplink queue.
type queueWatch struct {
	done  chan struct{}
	ended chan struct{}
	worst time.Duration
	n     int
}

// queueEvery is how often the uplink's queue is read.
const queueEvery = 50 * time.Millisecond

// reBacklog is the queue's depth in tc's statistics: "backlog 12345b 9p".
var reBacklog = regexp.MustCompile(`backlog (\d+)b`)

// watchQueue reads the router's shaper statistics every queueEvery until
// stop, keeping the deepest queue seen as the time it takes the uplink to
// send it.
func watchQueue() *queueWatch {
	w := &queueWatch{done: make(chan struct{}), ended: make(chan struct{})}
	bitsPerSec, err := parseRate(uplinkRate)
	if err != nil {
		panic(err)
	}
	go func() {
		defer close(w.ended)
		t := time.NewTicker(queueEvery)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
			}
			out, err := exec.Command("tc", "-n", nsRouter, "-s", "qdisc", "show", "dev", wanIfname).Output()
			if err != nil {
				continue
			}
			m := reBacklog.FindSubmatch(out)
			if m == nil {
				continue
			}
			bytes, _ := strconv.ParseFloat(string(m[1]), 64)
			w.n++
			w.worst = max(w.worst, time.Duration(bytes*8/bitsPerSec*float64(time.Second)))
		}
	}()
	return w
}

// stop ends the sampling and returns the deepest queue seen and the
// number of samples.
func (w *queueWatch) stop() (time.Duration, int) {
	close(w.done)
	<-w.ended
	return w.worst, w.n
}

// parseRate reads a tc rate such as "10mbit" in bits per second.
func parseRate(s string) (float64, error) {
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}} {
		if n, ok := strings.CutSuffix(strings.ToLower(s), u.suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			return v * u.scale, err
		}
	}
	return 0, fmt.Errorf("rate %q: no unit", s)
}

// pacing says whether the host was asked to pace its uploads.
func pacing(paced bool) string {
	if paced {
		return "--max-upload-rate " + uploadRate
	}
	return "no --max-upload-rate (this host has none)"
}

// sample measures up to n command round trips of p, numbered from first,
// sampleGap apart; with until set, it stops once until has exited.
func sample(p *proc, first, n int, until *proc) ([]time.Duration, error) {
	var rtts []time.Duration
	for i := range n {
		if until != nil && !until.running() {
			break
		}
		rtt, err := roundTrip(p, first+i)
		if err != nil {
			return rtts, err
		}
		rtts = append(rtts, rtt)
		time.Sleep(sampleGap)
	}
	return rtts, nil
}

// figures are a sample of round trips: its median, 90th percentile and
// worst.
type figures struct{ median, p90, max time.Duration }

func spread(ds []time.Duration) figures {
	s := slices.Clone(ds)
	slices.Sort(s)
	return figures{median: s[len(s)/2], p90: s[(len(s)*9)/10], max: s[len(s)-1]}
}

func (f figures) String() string {
	return fmt.Sprintf("median %.0f ms, p90 %.0f ms, max %.0f ms", ms(f.median), ms(f.p90), ms(f.max))
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
