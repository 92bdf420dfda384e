package main

import (
	"fmt"
	"os/exec"
	"slices"
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
	during, err := sample(player, samplesBefore, 400, friend)
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
		"during %s (%d); the download took %.1f s (join: total=%s)",
		worldMiB+" MiB", uplinkRate, uplinkQueue, pacing(paced), b, len(before), d, len(during), took.Seconds(), m[1])
	// "Stays within": every round trip during the download, the worst
	// included, against the usual one before it.
	if d.max > b.median+latencyBudget {
		return "", fmt.Errorf("the worst round trip during the download exceeds the median before it + %v: %s", latencyBudget, figures)
	}
	return figures, nil
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
