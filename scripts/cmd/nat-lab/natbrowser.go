package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lockhost/lockhost/testing/browsertest"
)

// Step 8: headless Chromium in a joiner's namespace opens the invite
// link of a host behind symmetric NAT on the coordinator: the page the
// coordinator serves joins through its signalling and the browser's own
// RTCPeerConnection, by the path the pair allows.
const (
	helperBrowser  = "lab-browser"
	browserTimeout = 2 * time.Minute
	// browserGamePort is its host's port: step 7's host may still hold
	// gamePort behind the same router.
	browserGamePort = "30503"
)

// browserJoiners are the joiner kinds step 8 runs a browser behind: one
// that hole punching reaches the symmetric host from, one that needs
// the relay.
var browserJoiners = []natKind{fullCone, symmetric}

// browserResult is what the browser helper prints.
type browserResult struct {
	Phase   string  `json:"phase"`
	Error   string  `json:"error"`
	Path    string  `json:"path"`
	ReadyMs float64 `json:"ready_ms"` // from opening the link to WorldReady
}

// runBrowser (in a joiner's namespace) opens link in a headless
// Chromium, joining as name, and prints the page's outcome as JSON.
func runBrowser(link, name string) error {
	exe, err := browsertest.Find()
	if err != nil {
		return err
	}
	profile, err := os.MkdirTemp("", "nat-lab-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	bctx, stop, err := browsertest.Launch(exe, profile, append(browsertest.Foreground,
		chromedp.Flag("ignore-certificate-errors", true), // the lab coordinator's self-signed certificate
		chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns"))...)
	if err != nil {
		return err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(bctx, browserTimeout)
	defer cancel()
	t0 := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(link+"?name="+name)); err != nil {
		return err
	}
	var r browserResult
	for {
		st, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.lockhostPage ? JSON.stringify(lockhostPage.state()) : "{}"`))
		if err != nil {
			return fmt.Errorf("the page: %w", err)
		}
		if json.Unmarshal([]byte(st), &r); r.Phase == "ready" || r.Phase == "error" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.ReadyMs = float64(time.Since(t0).Microseconds()) / 1000
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return nil
}

// step8 starts a host behind symmetric NAT and runs a browser at its
// invite link from behind each of browserJoiners.
func (l *lab) step8() (string, error) {
	if err := l.natSetup(); err != nil {
		return "", err
	}
	if err := l.startInternet(); err != nil {
		return "", err
	}
	if _, err := browsertest.Find(); err != nil {
		return "", err
	}
	hosts, joiners := labSites()
	hs := hosts[slices.IndexFunc(hosts, func(s site) bool { return s.kind == symmetric })]
	h, err := l.startMatrixHost(hs, "browser-", browserGamePort)
	if err != nil {
		return "", fmt.Errorf("the host behind %s: %w", hs, err)
	}
	defer h.proc.stop(5 * time.Second)
	code := strings.Fields(h.line)[1]
	link := strings.SplitN(l.nat.coordURL, "#", 2)[0] + "/" + code
	var done []string
	for _, k := range browserJoiners {
		js := joiners[slices.IndexFunc(joiners, func(s site) bool { return s.kind == k })]
		want := expectedPath(symmetric, k)
		// A name of its own: the browser before may not have left yet
		// (its Chromium was stopped, not its page closed).
		out, err := inWithin(browserTimeout+30*time.Second, js.machine(), l.self, helperBrowser, link, "Web_"+js.kind.short())
		var r browserResult
		if err == nil {
			err = lastJSON(out, &r)
		}
		if err != nil {
			return "", fmt.Errorf("the browser behind %s: %v: %s", js, err, strings.TrimSpace(out))
		}
		fmt.Printf("nat-lab:   browser %-20s -> host %-14s %-6s path %-9s WorldReady %.0f ms after opening %s %s\n", js, hs, r.Phase, r.Path, r.ReadyMs, link, r.Error)
		if r.Phase != "ready" {
			return "", fmt.Errorf("the browser behind %s did not join %s: %s", js, code, r.Error)
		}
		// Which of its relay candidates Chromium nominates (TURN over UDP
		// or TCP) is its own timing: on a slow machine TCP's may win.
		relayedAny := want.name == classRelayed.name && strings.HasPrefix(r.Path, "turn")
		if !slices.Contains(want.paths, r.Path) && !relayedAny {
			return "", fmt.Errorf("the browser behind %s joined by %s, want %s", js, r.Path, want.name)
		}
		done = append(done, fmt.Sprintf("from %s by %s", js.kind, r.Path))
	}
	return fmt.Sprintf("headless Chromium opened the coordinator's link %s and reached WorldReady over its data channel with the host behind %s: %s",
		code, hs.kind, strings.Join(done, ", ")), nil
}

// lastJSON decodes the last line of out that is a JSON object (the
// browser's own log may come around it).
func lastJSON(out string, v any) error {
	lines := strings.Split(out, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return json.Unmarshal([]byte(l), v)
		}
	}
	return fmt.Errorf("no result")
}
