package play_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lockhost/lockhost/testing/browsertest"
)

// TestBrowserInvite: a coordinator, and a host that registers with it no
// address (--debug-invite-no-addrs): a joiner by code can reach it only
// through the coordinator's signalling and WebRTC. Headless Chromium
// opens the invite link on the coordinator (/+CODE): the coordinator
// serves the browser player's page, which looks the code up, sends the
// browser's offer, takes the host's answer and plays over the data
// channel to WorldReady; the host's status page shows the join by
// "direct" (host candidates; a join over its WebSocket from this machine
// would show "lan"), and the coordinator counts the attempt. Leaving the
// page is a leave on the host, as over the WebSocket.
func TestBrowserInvite(t *testing.T) {
	hostBin, _ := tools(t)
	bctx := browsertest.Start(t, "the browser player's invite test", append(browsertest.Foreground,
		// The browser's own addresses as they are, not hidden behind
		// mDNS names, so that both ends' host candidates pair directly.
		chromedp.Flag("disable-features", "WebRtcHideLocalIpsWithMdns"))...)
	// A host with --tls: the page runs TLS inside the data channel,
	// pinned to the fingerprint the coordinator gave.
	for _, hostTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "tls"}[hostTLS], func(t *testing.T) {
			tab, cancel := chromedp.NewContext(bctx)
			defer cancel()
			inviteJoin(t, hostBin, tab, hostTLS)
		})
	}
}

// inviteJoin runs a coordinator and a host registered with no address,
// and joins it from the page at its invite link in tab bctx.
func inviteJoin(t *testing.T, hostBin string, bctx context.Context, hostTLS bool) {
	dir := t.TempDir()
	coLog, _ := start(t, hostBin, `(coordinator ready)`, "coordinator", "--listen", "127.0.0.1:0", "--plain-http",
		"--data-dir", filepath.Join(dir, "coord"))
	m := regexp.MustCompile(`url=(http://\S+)`).FindStringSubmatch(coLog.String())
	if m == nil {
		t.Fatalf("the coordinator logs no URL:\n%s", coLog.String())
	}
	coURL := m[1]
	serve := []string{"serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--coordinator", coURL, "--debug-invite-no-addrs", "--maps", "2", "--map-size", "64", "--conn-rate", "-1",
		"--data-dir", filepath.Join(dir, "data")}
	if hostTLS {
		serve = append(serve, "--tls")
	}
	hostLog, code := start(t, hostBin, `invite code (\+\w+)`, serve...)
	statusRe := regexp.MustCompile(`msg="status page" url=(http://\S+)/`)
	var sm []string
	for deadline := time.Now().Add(30 * time.Second); sm == nil; time.Sleep(50 * time.Millisecond) {
		if sm = statusRe.FindStringSubmatch(hostLog.String()); sm == nil && time.Now().After(deadline) {
			t.Fatalf("the host logs no status page:\n%s", hostLog.String())
		}
	}

	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	link := coURL + "/" + code
	if err := chromedp.Do(ctx, chromedp.Navigate(link+"?name=Browser")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	browsertest.Poll(t, ctx, "the browser's WorldReady by invite",
		`window.lockhostPage && ["ready", "error"].includes(lockhostPage.state().phase)`, 2*time.Minute)
	st := browsertest.Eval[string](t, ctx, `JSON.stringify(lockhostPage.state())`)
	var got struct {
		Phase, Error, Path string
	}
	json.Unmarshal([]byte(st), &got)
	if got.Phase != "ready" {
		t.Fatalf("the page at %s: %s (%s)\nhost:\n%s", link, got.Phase, got.Error, hostLog.String())
	}
	t.Logf("the page at %s reached WorldReady over the data channel (%s) in %v", link, got.Path, time.Since(start).Round(time.Millisecond))
	if got.Path != "direct" {
		t.Errorf("the page says its path is %q, want direct", got.Path)
	}
	if p := hostJoinPath(t, sm[1], "Browser"); p != "direct" {
		t.Errorf("the host's status page shows Browser's join by %q, want direct (over the data channel)", p)
	}
	const sample = `lockhost_coordinator_connect_attempts_total{outcome="direct"} 1`
	if !waitBody(t, coURL+"/metrics", sample) {
		t.Errorf("the coordinator's metrics lack %s", sample)
	}

	// Away to another page: Client_Leave goes out on the channel before
	// it closes, so the host counts a leave, not a lost connection.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	gone := regexp.MustCompile(`msg="player (left|dropped)" player=\d+ name=Browser.*`)
	var how []string
	for deadline := time.Now().Add(90 * time.Second); how == nil; time.Sleep(100 * time.Millisecond) {
		if how = gone.FindStringSubmatch(hostLog.String()); how == nil && time.Now().After(deadline) {
			t.Fatalf("the host never noted Browser gone:\n%s", hostLog.String())
		}
	}
	if how[1] != "left" {
		t.Errorf("the page went away and the host counted a drop, not a leave: %s", how[0])
	}
}

// waitBody says whether url's body has a line line within 10 s.
func waitBody(t *testing.T, url, line string) bool {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if slices.Contains(strings.Split(string(b), "\n"), line) {
			return true
		}
	}
	return false
}

// hostJoinPath is the path of name's latest join on the host's status
// page, waiting up to 10 s for it to be listed.
func hostJoinPath(t *testing.T, base, name string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/api/overview")
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Joins []struct{ Name, Path string }
		}
		err = json.NewDecoder(resp.Body).Decode(&o)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range o.Joins {
			if j.Name == name {
				return j.Path
			}
		}
	}
	return "no join"
}
