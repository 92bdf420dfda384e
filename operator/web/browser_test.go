package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/operator/metrics"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/testing/browsertest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// browser starts a headless Chromium with a fresh profile for the test and
// returns its context; each tab is a chromedp.NewContext of it.
func browser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Start(t, "the status page's browser test")
}

// tab opens a tab with a 60 s budget for everything the test does in it.
func tab(t *testing.T, bctx context.Context) context.Context {
	t.Helper()
	tctx, cancelTab := chromedp.NewContext(bctx)
	if err := chromedp.Do(tctx); err != nil {
		cancelTab()
		t.Fatalf("open a tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tctx, 60*time.Second)
	t.Cleanup(func() {
		cancel()
		cancelTab()
	})
	return ctx
}

var testDefs = []defs.Summary{{Type: "ThingDef", Count: 3, Hash: 0xABCDEF}}

// liveHost serves a small counters world on loopback with Alice and Bob
// joined and sending commands, until the test ends.
func liveHost(t *testing.T, obs host.Observer) *host.Server {
	t.Helper()
	h := hosttest.Start(t, host.Config{GameName: "Browser test colony", Observer: obs},
		host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: testDefs}, locksteptest.New(4, 4096))
	for _, name := range []string{"Alice", "Bob"} {
		s := hosttest.Join(t, join.Config{Addr: h.Addr, Name: name, Databases: testDefs, Loader: locksteptest.Load}).Session
		go func() {
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				<-tick.C
				if s.Send(int32(i%4), locksteptest.KindAdd, []byte{1}) != nil {
					return // the session has ended
				}
			}
		}()
	}
	return h.Server
}

// screenshotPath is $LOCKHOST_SCREENSHOT, else a file in the test's
// temporary folder.
func screenshotPath(t *testing.T) string {
	if p := os.Getenv("LOCKHOST_SCREENSHOT"); p != "" {
		return p
	}
	return filepath.Join(t.TempDir(), "status.png")
}

func TestBrowser(t *testing.T) {
	bctx := browser(t)

	t.Run("live host", func(t *testing.T) {
		m := metrics.New()
		srv := liveHost(t, m)
		reg, err := metrics.NewRegistry(m, srv)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := web.Listen(":0")
		if err != nil {
			t.Fatal(err)
		}
		webCtx, stopWeb := context.WithCancel(context.Background())
		defer stopWeb()
		webDone := make(chan error, 1)
		go func() {
			webDone <- web.Serve(webCtx, ln, web.Handler(srv, web.Config{Gatherer: reg, Logger: testkit.Quiet()}), testkit.Quiet())
		}()

		ctx := tab(t, bctx)
		if err := chromedp.Do(ctx, chromedp.Navigate("http://"+ln.Addr().String()+"/")); err != nil {
			t.Fatalf("open the status page: %v", err)
		}
		// Set on this document: a reload would lose it.
		browsertest.Eval[chromedp.Void](t, ctx, `window.sameDocument = true`)
		browsertest.Poll(t, ctx, "both players listed as playing", `(() => {
			const st = (n) => document.querySelector('#players tr[data-player="' + n + '"] td[data-field="status"]');
			return st("Alice") && st("Bob") && st("Alice").textContent === "playing" && st("Bob").textContent === "playing";
		})()`, 30*time.Second)
		browsertest.Poll(t, ctx, "the stream to be live", `document.getElementById("conn").dataset.state === "live"`, 10*time.Second)
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("#players tbody tr").length`); n != 2 {
			t.Errorf("%d player rows, want 2", n)
		}
		if !browsertest.Eval[bool](t, ctx, `document.getElementById("agones").hidden`) {
			t.Error("the Agones card shows for a host outside Agones")
		}
		if !browsertest.Eval[bool](t, ctx, `document.getElementById("portmap").hidden`) {
			t.Error("the Internet card shows for a host that says nothing of port mapping")
		}
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("#maps tbody tr").length`); n != 4 {
			t.Errorf("%d map rows, want 4", n)
		}
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("#joins tbody tr").length`); n < 2 {
			t.Errorf("%d join rows, want at least 2", n)
		}

		srv.Say("console", "hello from the host")
		browsertest.Poll(t, ctx, "the host's chat line", `[...document.querySelectorAll('#chat td[data-field="text"]')].some((td) => td.textContent === "hello from the host")`, 20*time.Second)
		if got := browsertest.Eval[string](t, ctx, `document.getElementById("c-chat").textContent`); !strings.HasPrefix(got, "1 line relayed") {
			t.Errorf("chat counter %q, want 1 line relayed", got)
		}

		tick1 := browsertest.Eval[uint64](t, ctx, `Number(document.getElementById("tick").dataset.value)`)
		if tick1 == 0 {
			t.Fatalf("the page shows tick 0 with a live host")
		}
		browsertest.Poll(t, ctx, fmt.Sprintf("the tick to pass %d", tick1),
			fmt.Sprintf(`Number(document.getElementById("tick").dataset.value) > %d`, tick1), 20*time.Second)
		tick2 := browsertest.Eval[uint64](t, ctx, `Number(document.getElementById("tick").dataset.value)`)
		if !browsertest.Eval[bool](t, ctx, `window.sameDocument === true`) {
			t.Fatal("the page reloaded to show a new tick")
		}
		shown := browsertest.Eval[string](t, ctx, `document.getElementById("tick").textContent`)
		t.Logf("tick %d, then %d (shown as %q)", tick1, tick2, shown)
		if strings.ReplaceAll(shown, ",", "") == "" {
			t.Errorf("the tick shows as %q", shown)
		}

		// A steady state for the picture: the measured rate is in and the
		// maps have been hash-checked.
		browsertest.Poll(t, ctx, "a hash check and a measured tick rate", `document.querySelector('#maps tr[data-map="0"] td[data-field="matched"]').textContent === "match" &&
			!document.getElementById("tps").textContent.startsWith("0.0")`, 20*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		path := screenshotPath(t)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatalf("save the screenshot: %v", err)
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(png))

		// On a phone the page must not scroll sideways: wide tables
		// scroll inside their panels.
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
			t.Fatalf("narrow viewport: %v", err)
		}
		browsertest.Poll(t, ctx, "the narrow layout to settle", `document.documentElement.clientWidth <= 390`, 5*time.Second)
		if over := browsertest.Eval[int](t, ctx, `document.documentElement.scrollWidth - document.documentElement.clientWidth`); over > 0 {
			t.Errorf("at 390 px wide the page is %d px too wide", over)
		}
		if os.Getenv("LOCKHOST_SCREENSHOT") != "" {
			narrow, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("narrow screenshot: %v", err)
			}
			np := strings.TrimSuffix(path, filepath.Ext(path)) + "-narrow.png"
			if err := os.WriteFile(np, narrow, 0o644); err != nil {
				t.Fatalf("save the narrow screenshot: %v", err)
			}
			t.Logf("narrow screenshot: %s", np)
		}

		// The host's status server goes away: the page says so.
		stopWeb()
		select {
		case err := <-webDone:
			if err != nil {
				t.Errorf("web.Serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("web.Serve did not return with the page's stream open")
		}
		browsertest.Poll(t, ctx, "the page to say it is disconnected",
			`document.getElementById("conn").dataset.state === "disconnected" && document.getElementById("conn").textContent.includes("disconnected")`,
			15*time.Second)
	})

	t.Run("map pictures and charts", func(t *testing.T) {
		h, content, hc := colonyHost(t, 200*time.Millisecond)
		hosttest.Join(t, join.Config{Addr: h.Addr, Name: "Alice", Databases: hc.Databases, MapLoader: colony.MapLoader(content)})
		addr := serveFake(t, h.Server, web.Config{})
		ctx := tab(t, bctx)
		if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
			t.Fatalf("open the status page: %v", err)
		}
		// Both maps' pictures load from /maps/ID.png, in the maps' aspect
		// (200 by 100 cells).
		browsertest.Poll(t, ctx, "both map pictures loaded", `(() => {
			const imgs = [...document.querySelectorAll("#thumbs img")];
			return imgs.length === 2 && imgs.every((img) => img.complete && img.naturalWidth > 0);
		})()`, 30*time.Second)
		sizes := browsertest.Eval[[][]int](t, ctx, `[...document.querySelectorAll("#thumbs img")].map((img) => [img.naturalWidth, img.naturalHeight, img.width, img.height])`)
		for i, sz := range sizes {
			if sz[0] != 200 || sz[1] != 100 || sz[2] != 2*sz[3] {
				t.Errorf("map %d's picture: natural %dx%d, shown %dx%d; want 200x100 shown at 2:1", i, sz[0], sz[1], sz[2], sz[3])
			}
		}
		if !browsertest.Eval[bool](t, ctx, `document.getElementById("thumbs-none").hidden`) {
			t.Error("the page says there are no map pictures")
		}
		// The charts draw the samples: a line of at least 3 for the tick
		// rate and the bytes, and one for Alice's latency.
		browsertest.Poll(t, ctx, "charts with 3 samples and Alice's latency", `(() => {
			const n = (sel) => { const el = document.querySelector(sel); return el ? Number(el.dataset.points) : 0; };
			return n('#chart-tps polyline[data-series="ticks"]') >= 3 && n('#chart-bytes polyline[data-series="bytes"]') >= 3 &&
				n('#chart-latency polyline[data-series="Alice"]') >= 2;
		})()`, 30*time.Second)
		if got := browsertest.Eval[string](t, ctx, `document.getElementById("chart-latency-legend").textContent`); got != "Alice" {
			t.Errorf("latency legend %q, want Alice", got)
		}
		// The line has a point per sample the page fetched.
		if pts, n := browsertest.Eval[int](t, ctx, `document.querySelector('#chart-tps polyline').getAttribute("points").trim().split(/\s+/).length`),
			browsertest.Eval[int](t, ctx, `Number(document.getElementById("chart-tps").dataset.samples)`); pts != n || n < 3 {
			t.Errorf("tick-rate line of %d points for %d samples", pts, n)
		}
		if p := os.Getenv("LOCKHOST_SCREENSHOT"); p != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			p = strings.TrimSuffix(p, filepath.Ext(p)) + "-pictures.png"
			if err := os.WriteFile(p, png, 0o644); err != nil {
				t.Fatalf("save the screenshot: %v", err)
			}
			t.Logf("screenshot with map pictures and charts: %s", p)
		}
	})

	t.Run("hostile names are text", func(t *testing.T) {
		const bad = `<img src=x onerror="window.injected=1"><script>window.injected=2</script>`
		o := fullOverview(time.Now())
		o.Players[1].Name = bad
		o.Joins[1].Name = bad
		o.Desyncs[0].Name = bad
		o.Chat[1].Text = bad
		src := &fakeSource{o: o, live: true}
		addr := serveFake(t, src, web.Config{Agones: func() web.Agones {
			return web.Agones{State: "Allocated", Players: 2, HealthPings: 9, LastPing: time.Now().Add(-400 * time.Millisecond)}
		}, PortMapping: func() web.PortMapping {
			return web.PortMapping{State: "mapped", Method: "NAT-PMP", External: "198.51.100.1:30502", Join: "join 198.51.100.1:30502"}
		}})

		ctx := tab(t, bctx)
		if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
			t.Fatalf("open the status page: %v", err)
		}
		browsertest.Poll(t, ctx, "both player rows", `document.querySelectorAll("#players tbody tr").length === 2`, 30*time.Second)
		// Give an injected handler time to run, were there one.
		browsertest.Poll(t, ctx, "a few more updates", `Number(document.getElementById("tick").dataset.value) > 98770`, 20*time.Second)
		// The Agones card, shown from the JSON's "agones".
		if got := browsertest.Eval[string](t, ctx, `document.getElementById("agones").hidden ? "hidden" :
			document.getElementById("agones-state").textContent + " · " + document.getElementById("agones-sub").textContent`); got != "Allocated · 2 players · last health ping 0.4 s ago" {
			t.Errorf("the Agones card shows %q", got)
		}
		// The Internet card, shown from the JSON's "port_mapping".
		if got := browsertest.Eval[string](t, ctx, `document.getElementById("portmap").hidden ? "hidden" :
			document.getElementById("portmap-state").textContent + " · " + document.getElementById("portmap-sub").textContent`); got != "198.51.100.1:30502 · join 198.51.100.1:30502 · NAT-PMP" {
			t.Errorf("the Internet card shows %q", got)
		}
		if n := browsertest.Eval[int](t, ctx, `document.querySelectorAll("main img, main script").length`); n != 0 {
			t.Errorf("a player name became %d elements", n)
		}
		if v := browsertest.Eval[bool](t, ctx, `window.injected === undefined`); !v {
			t.Error("a player name ran script")
		}
		got := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#players td[data-field="name"], #joins td[data-field="name"], #desyncs td[data-field="name"], #chat td[data-field="text"]')].map((td) => td.textContent)`)
		count := 0
		for _, s := range got {
			if s == bad {
				count++
			}
		}
		if count != 4 {
			t.Errorf("the hostile name shows as text in %d cells, want 4 (players, joins, desyncs, chat): %q", count, got)
		}
		if !browsertest.Eval[bool](t, ctx, fmt.Sprintf(`[...document.querySelectorAll("#players tbody tr")].some((tr) => tr.dataset.player === %q)`, bad)) {
			t.Error("no player row keyed by the hostile name")
		}
		// Every panel has something in it here: worth a look too.
		if p := os.Getenv("LOCKHOST_SCREENSHOT"); p != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			p = strings.TrimSuffix(p, filepath.Ext(p)) + "-full.png"
			if err := os.WriteFile(p, png, 0o644); err != nil {
				t.Fatalf("save the screenshot: %v", err)
			}
			t.Logf("screenshot with every panel filled: %s", p)
		}
	})

	t.Run("token", func(t *testing.T) {
		src := &fakeSource{o: fullOverview(time.Now()), live: true}
		addr := serveFake(t, src, web.Config{Token: token})
		// Without the token: headless, there is no prompt to answer, so
		// the load fails on the credentials (or shows the 401 page).
		ctx := tab(t, bctx)
		if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
			if !strings.Contains(err.Error(), "ERR_INVALID_AUTH_CREDENTIALS") {
				t.Fatalf("open the status page without the token: %v", err)
			}
		} else if body := browsertest.Eval[string](t, ctx, `document.body.innerText`); !strings.Contains(body, "401") || strings.Contains(body, "98765") {
			t.Errorf("without the token the browser shows %q", body)
		}
		// With it, as the password a browser's prompt sends: the page and
		// its stream, which the browser sends the same credentials to.
		ctx = tab(t, bctx)
		u := url.URL{Scheme: "http", User: url.UserPassword("viewer", token), Host: addr, Path: "/"}
		if err := chromedp.Do(ctx, chromedp.Navigate(u.String())); err != nil {
			t.Fatalf("open the status page with the token: %v", err)
		}
		browsertest.Poll(t, ctx, "both player rows", `document.querySelectorAll("#players tbody tr").length === 2`, 30*time.Second)
		first := browsertest.Eval[float64](t, ctx, `Number(document.getElementById("tick").dataset.value)`)
		browsertest.Poll(t, ctx, "the tick to advance through the stream", fmt.Sprintf(`Number(document.getElementById("tick").dataset.value) > %v`, first), 20*time.Second)
	})

	// While time is held the card and the chart's caption show one
	// measured rate, and both say time is held, though the chart's last
	// sample, taken before the hold, shows the full rate.
	t.Run("holding", func(t *testing.T) {
		o := fullOverview(time.Now())
		o.Holding, o.TicksPerSecond = true, 0
		now := time.Now()
		src := &sampledSource{fakeSource: fakeSource{o: o, live: true}}
		for i := range 3 {
			src.samples = append(src.samples, host.Sample{At: now.Add(time.Duration(i-3) * 5 * time.Second), Tick: uint64(98000 + 300*i), TicksPerSecond: 60})
		}
		addr := serveFake(t, src, web.Config{})
		ctx := tab(t, bctx)
		if err := chromedp.Do(ctx, chromedp.Navigate("http://"+addr+"/")); err != nil {
			t.Fatalf("open the status page: %v", err)
		}
		browsertest.Poll(t, ctx, "the hold and the chart", `document.getElementById("holding").textContent === "holding" &&
			Number(document.getElementById("chart-tps").dataset.samples) === 3`, 30*time.Second)
		card := browsertest.Eval[string](t, ctx, `document.getElementById("tps").textContent`)
		caption := browsertest.Eval[string](t, ctx, `document.getElementById("chart-tps-now").textContent`)
		if !strings.HasPrefix(card, "0.0 ") || !strings.HasPrefix(caption, "0.0 ") || !strings.Contains(card, "holding") || !strings.Contains(caption, "holding") {
			t.Errorf("while holding, the speed card says %q and the chart %q; want both 0.0 and holding", card, caption)
		}
	})
}

// serveFake serves the status routes over src on a loopback port until the
// test ends, and returns the address.
func serveFake(t *testing.T, src web.Source, cfg web.Config) string {
	t.Helper()
	ln, err := web.Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = testkit.Quiet()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- web.Serve(ctx, ln, web.Handler(src, cfg), testkit.Quiet()) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("web.Serve: %v", err)
		}
	})
	return ln.Addr().String()
}
