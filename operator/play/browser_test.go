package play_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lockhost/lockhost/testing/browsertest"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

// browser starts a headless Chromium with a fresh profile and returns
// its context. A tab in the background must not be slowed: it plays in
// lockstep.
func browser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Start(t, "the browser player's test", browsertest.Foreground...)
}

// tools builds the host and join tools.
func tools(t *testing.T) (hostBin, joinBin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the tools and a browser")
	}
	bins := procstat.BuildTools(t, "github.com/lockhost/lockhost/cmd/host", "github.com/lockhost/lockhost/cmd/join")
	return bins[0], bins[1]
}

// start runs bin with args until the test ends and waits for its log
// (standard error, or standard output with toStdout) to match re;
// it returns the log and the first submatch.
func start(t *testing.T, bin string, re string, args ...string) (*syncbuf.Buffer, string) {
	t.Helper()
	log, m, _ := startCmd(t, bin, re, args...)
	return log, m
}

// startCmd is start, returning the command as well.
func startCmd(t *testing.T, bin string, re string, args ...string) (*syncbuf.Buffer, string, *exec.Cmd) {
	t.Helper()
	var log syncbuf.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr, cmd.Stdout = &log, &log
	m := procstat.StartUntil(t, cmd, &log, regexp.MustCompile(re), 120*time.Second)
	return &log, m[len(m)-1], cmd
}

// overview is the part of the status JSON the test reads.
type overview struct {
	Tick    uint64 `json:"tick"`
	Players []struct {
		Name       string `json:"name"`
		Status     string `json:"status"`
		Repairing  bool   `json:"repairing"`
		Unverified bool   `json:"unverified"`
	} `json:"players"`
	Maps []struct {
		ID          int32  `json:"id"`
		CheckedTick uint64 `json:"checked_tick"`
		Matched     bool   `json:"matched"`
	} `json:"maps"`
	Desyncs []struct {
		Name  string  `json:"name"`
		Event string  `json:"event"`
		Maps  []int32 `json:"maps"`
	} `json:"desyncs"`
	Stats struct {
		HashReports int `json:"hash_reports"`
		Desyncs     int `json:"desyncs"`
		Repaired    int `json:"repaired"`
		DesyncDrops int `json:"desync_drops"`
	} `json:"stats"`
}

func getOverview(t *testing.T, base string) overview {
	t.Helper()
	resp, err := http.Get(base + "/api/overview")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var o overview
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil {
		t.Fatalf("overview: %v", err)
	}
	return o
}

// screenshotPath is $LOCKHOST_PLAY_SCREENSHOT, else a file in the test's
// temporary folder.
func screenshotPath(t *testing.T) string {
	if p := os.Getenv("LOCKHOST_PLAY_SCREENSHOT"); p != "" {
		return p
	}
	return filepath.Join(t.TempDir(), "play.png")
}

// playSession starts the host with its status listener (/play), and the
// join tool as the native player Native, whose bot sends bot commands a
// second; it returns the /play base URL, both logs and a browser tab
// for the next four minutes.
func playSession(t *testing.T, bot string) (base string, hostLog, nativeLog *syncbuf.Buffer, ctx context.Context) {
	t.Helper()
	hostBin, joinBin := tools(t)
	bctx := browser(t)
	hostLog, game := start(t, hostBin, `msg=hosting addr=(\S+)`,
		"serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--maps", "2", "--map-size", "96",
		"--conn-rate", "-1", "--data-dir", t.TempDir())
	m := regexp.MustCompile(`msg="players may join from a browser" url=(http://\S+)/play`).FindStringSubmatch(hostLog.String())
	if m == nil {
		t.Fatalf("the host logs no /play URL:\n%s", hostLog.String())
	}
	nativeLog, _ = start(t, joinBin, `(WorldReady)`, game, "--name", "Native", "--bot", bot, "--no-input", "-q")
	ctx, cancel := context.WithTimeout(bctx, 4*time.Minute)
	t.Cleanup(cancel)
	return m[1], hostLog, nativeLog, ctx
}

// TestBrowserPlays: the real host with --http, the real join tool with a
// bot, and headless Chromium at /play?name=...&bot=... play together for
// 20 s. Both report their state hashes and the host accepts every one;
// a map corrupted in the browser's own copy is found by the host and
// repaired, and the page says so; the canvas shows the map drawn.
func TestBrowserPlays(t *testing.T) {
	base, hostLog, nativeLog, ctx := playSession(t, "4")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/play?name=Browser&bot=4&debug=1")); err != nil {
		t.Fatal(err)
	}
	browsertest.Poll(t, ctx, "the browser's WorldReady", `window.lockhostPage && lockhostPage.state().phase === "ready"`, 3*time.Minute)
	st := browsertest.Eval[map[string]any](t, ctx, `lockhostPage.state()`)
	t.Logf("browser WorldReady: %v; player %.0f; wasm %.0f bytes (%.0f raw) in %.0f ms",
		st["timings"], st["player_id"], browsertest.Eval[float64](t, ctx, `lockhostPage.wasmBytes`), browsertest.Eval[float64](t, ctx, `lockhostPage.wasmRaw`),
		browsertest.Eval[float64](t, ctx, `lockhostPage.loadMs`))

	playStart := time.Now()
	browsertest.Poll(t, ctx, "frames drawn", `lockhostPage.state().frames > 20`, time.Minute)
	interact(t, ctx, nativeLog)
	before := getOverview(t, base)
	if msg := browsertest.Eval[string](t, ctx, `lockhost.corrupt(0)`); msg != "" {
		t.Fatalf("corrupt: %s", msg)
	}
	browsertest.Poll(t, ctx, "the browser's repair", `(s => s.corrupted === 1 && s.desyncs >= 1 && s.repaired >= 1 && s.resyncs >= 1)(lockhostPage.state())`, 2*time.Minute)
	if wait := 20*time.Second - time.Since(playStart); wait > 0 {
		time.Sleep(wait) // the play period
	}
	checkCanvas(t, ctx)
	shot(t, ctx)
	after := getOverview(t, base)
	checkHost(t, before, after, hostLog.String(), nativeLog.String())
	t.Logf("host: %d hash reports compared (%d before the corruption), %d desyncs, %d repaired; browser: %v",
		after.Stats.HashReports, before.Stats.HashReports, after.Stats.Desyncs, after.Stats.Repaired, browsertest.Eval[map[string]any](t, ctx,
			`(s => ({tick: s.tick, frames: s.frames, desyncs: s.desyncs, repaired: s.repaired, resyncs: s.resyncs}))(lockhostPage.state())`))
}

// interact uses the page as a player does: help typed in the chat box
// lists the join tool's commands, a chat line reaches the native player
// and comes back to the page, a click on a pawn in the canvas selects
// it, and the map picker switches maps.
func interact(t *testing.T, ctx context.Context, nativeLog *syncbuf.Buffer) {
	t.Helper()
	typeLine := func(line string) {
		browsertest.Eval[bool](t, ctx, `(l => { document.getElementById("line").value = l; document.getElementById("say").requestSubmit(); return true; })(`+
			strconv.Quote(line)+`)`)
	}
	typeLine("help")
	browsertest.Poll(t, ctx, "help in the log", `document.getElementById("log").textContent.includes("spawn THING MAP X Y [COUNT]")`, time.Minute)
	typeLine("hello from the browser")
	for deadline := time.Now().Add(time.Minute); !strings.Contains(nativeLog.String(), "<Browser> hello from the browser"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the native player got no chat from the browser:\n%s", nativeLog.String())
		}
	}
	browsertest.Poll(t, ctx, "the chat line back in the page", `document.getElementById("log").textContent.includes("<Browser> hello from the browser")`, time.Minute)
	// The pawn is found where the page's own copy has it, and clicked.
	at, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`new Promise(done => {
		lockhost.command("pawns 0");
		const t = setInterval(() => {
			const m = document.getElementById("log").textContent.match(/pawn (\d+) \S+ at (\d+),(\d+)/);
			if (!m) return;
			clearInterval(t);
			const c = document.getElementById("map").getBoundingClientRect(), s = lockhostPage.state();
			const map = s.maps.find(x => x.id === 0);
			done({id: +m[1], x: c.left + (+m[2] + 0.5) * c.width / map.width, y: c.top + (+m[3] + 0.5) * c.height / map.height});
		}, 100);
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("find a pawn: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(at["x"], at["y"])); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`lockhostPage.state().selected !== 0`,
		chromedp.WithPollingTimeout(time.Minute), chromedp.WithPollingInterval(200*time.Millisecond))); err != nil {
		t.Fatalf("no pawn selected after a click on pawn %v: %v\npage log:\n%s", at, err, browsertest.Eval[string](t, ctx, `document.getElementById("log").textContent`))
	}
	t.Logf("clicked pawn %.0f at %.0f,%.0f: pawn %.0f selected", at["id"], at["x"], at["y"], browsertest.Eval[float64](t, ctx, `lockhostPage.state().selected`))
	// The map picker shows the other map, then the first again.
	for _, id := range []string{"1", "0"} {
		browsertest.Eval[bool](t, ctx, `(() => { const m = document.getElementById("maps"); m.value = "`+id+`"; m.dispatchEvent(new Event("change")); return true; })()`)
		browsertest.Poll(t, ctx, "map "+id+" shown", `lockhostPage.state().map === `+id, time.Minute)
	}
}

// checkHost checks the host's view after the play: both players playing
// and verified, hash reports compared all along, the one desync the
// browser's (found and repaired), none left, nobody dropped, and every
// map matched at a checkpoint after the repair.
func checkHost(t *testing.T, before, after overview, hostLog, nativeLog string) {
	t.Helper()
	names := map[string]bool{}
	for _, p := range after.Players {
		names[p.Name] = true
		if p.Status != "playing" || p.Repairing || p.Unverified {
			t.Errorf("player %s: status %s, repairing %v, unverified %v", p.Name, p.Status, p.Repairing, p.Unverified)
		}
	}
	if !names["Browser"] || !names["Native"] || len(after.Players) != 2 {
		t.Errorf("players %+v, want Browser and Native", after.Players)
	}
	if before.Stats.Desyncs != 0 || before.Stats.HashReports == 0 {
		t.Errorf("before the corruption: %+v, want hash reports and no desync", before.Stats)
	}
	s := after.Stats
	if s.HashReports <= before.Stats.HashReports || s.Desyncs != 1 || s.Repaired != 1 || s.DesyncDrops != 0 {
		t.Errorf("host stats %+v, want more hash reports, one desync, repaired, no drop\nhost log:\n%s", s, hostLog)
	}
	var detected, repaired bool
	for _, d := range after.Desyncs {
		if d.Name != "Browser" {
			t.Errorf("a desync of %s: %+v\nnative join:\n%s", d.Name, d, nativeLog)
		}
		detected = detected || d.Event == "detected" && len(d.Maps) == 1 && d.Maps[0] == 0
		repaired = repaired || d.Event == "repaired"
	}
	if !detected || !repaired {
		t.Errorf("desync events %+v, want map 0 of Browser detected and repaired", after.Desyncs)
	}
	for _, m := range after.Maps {
		if !m.Matched || m.CheckedTick <= before.Tick {
			t.Errorf("map %d: matched %v at tick %d, want matched after tick %d", m.ID, m.Matched, m.CheckedTick, before.Tick)
		}
	}
}

// checkCanvas reads the canvas back: the map is drawn, not blank.
func checkCanvas(t *testing.T, ctx context.Context) {
	t.Helper()
	got := browsertest.Eval[map[string]float64](t, ctx, `(() => {
		const c = document.getElementById("map"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		const colours = new Set(); let lit = 0;
		for (let i = 0; i < d.length; i += 4) {
			colours.add((d[i] << 16) | (d[i+1] << 8) | d[i+2]);
			if (d[i] + d[i+1] + d[i+2] > 30) lit++;
		}
		return {width: c.width, height: c.height, colours: colours.size, lit: lit / (d.length / 4)};
	})()`)
	t.Logf("canvas: %v", got)
	if got["width"] < 96 || got["colours"] < 8 || got["lit"] < 0.9 {
		t.Errorf("the canvas does not show a map: %v", got)
	}
}

// shot saves a screenshot of the page at screenshotPath.
func shot(t *testing.T, ctx context.Context) {
	t.Helper()
	shotTo(t, ctx, screenshotPath(t))
}

// shotTo saves a screenshot of the page at path.
func shotTo(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// TestBrowserPassword: on a host with a password the page is refused
// first, asks for the password, and joins with it (the challenge is
// answered in the page's WebAssembly, as the join tool answers it).
func TestBrowserPassword(t *testing.T) {
	hostBin, _ := tools(t)
	bctx := browser(t)
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("correct horse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostLog, _ := start(t, hostBin, `msg=hosting addr=(\S+)`, "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--maps", "1", "--map-size", "64", "--conn-rate", "-1", "--data-dir", t.TempDir(), "--password-file", pw)
	base := regexp.MustCompile(`msg="players may join from a browser" url=(http://\S+)/play`).FindStringSubmatch(hostLog.String())[1]
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/play?name=Pat")); err != nil {
		t.Fatal(err)
	}
	browsertest.Poll(t, ctx, "the password asked for", `!document.getElementById("pwlabel").hidden && !document.getElementById("joinform").hidden`, 2*time.Minute)
	if e := browsertest.Eval[string](t, ctx, `lockhostPage.state().error`); !strings.Contains(e, "BadPassword") {
		t.Fatalf("refusal %q, want BadPassword", e)
	}
	browsertest.Eval[bool](t, ctx, `(() => { document.getElementById("password").value = "correct horse"; document.getElementById("joinform").requestSubmit(); return true; })()`)
	browsertest.Poll(t, ctx, "WorldReady with the password", `lockhostPage.state().phase === "ready"`, 2*time.Minute)
	if !regexp.MustCompile(`msg="player ready" player=\d+ name=Pat status=playing`).MatchString(hostLog.String()) {
		t.Errorf("the host logs no Pat joined:\n%s", hostLog.String())
	}
}

// TestBrowserLeaves: a browser player that navigates away leaves the
// session, and the session never waits for it: the host logs its leave,
// not a dropped connection, and the native player is never told the
// session waits for it (neither while it catches up after its join nor
// once its page is gone). The same tab, back as a spectator, shows no
// controls for commands, which a spectator cannot send.
func TestBrowserLeaves(t *testing.T) {
	base, hostLog, nativeLog, ctx := playSession(t, "2")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/play?name=Browser&bot=2")); err != nil {
		t.Fatal(err)
	}
	browsertest.Poll(t, ctx, "the browser's WorldReady", `window.lockhostPage && lockhostPage.state().phase === "ready"`, 3*time.Minute)
	const spawnShown = `document.querySelector("input[name=mode][value=spawn]").offsetParent !== null`
	if !browsertest.Eval[bool](t, ctx, spawnShown) {
		t.Errorf("a player's page shows no spawn control")
	}
	browsertest.Poll(t, ctx, "frames drawn", `lockhostPage.state().frames > 20`, time.Minute)

	// Away to another page: the host must note a leave, whether it comes
	// at once or, without one, as a drop after the Idle timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	away := time.Now()
	gone := regexp.MustCompile(`msg="player (left|dropped)" player=\d+ name=Browser.*`)
	var how []string
	for deadline := time.Now().Add(90 * time.Second); how == nil; time.Sleep(100 * time.Millisecond) {
		if how = gone.FindStringSubmatch(hostLog.String()); how == nil && time.Now().After(deadline) {
			t.Fatalf("the host never noted Browser gone:\n%s", hostLog.String())
		}
	}
	t.Logf("host, %v after the page went away: %s", time.Since(away).Round(time.Millisecond), how[0])
	if how[1] != "left" {
		t.Errorf("the browser's page went away and the host counted a drop, not a leave: %s", how[0])
	}
	if waits := regexp.MustCompile(`notice: Waiting for Browser[^\n]*`).FindAllString(nativeLog.String(), -1); len(waits) > 0 {
		t.Errorf("the session waited for the browser: %q", waits)
	}

	// Back as a spectator: no select, move or spawn.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/play?name=Watcher&spectate=1")); err != nil {
		t.Fatal(err)
	}
	browsertest.Poll(t, ctx, "the spectator's WorldReady", `window.lockhostPage && lockhostPage.state().phase === "ready"`, 3*time.Minute)
	for _, mode := range []string{"select", "spawn"} {
		if browsertest.Eval[bool](t, ctx, `document.querySelector("input[name=mode][value=`+mode+`]").offsetParent !== null`) {
			t.Errorf("a spectator's page shows the %s control", mode)
		}
	}
	if browsertest.Eval[bool](t, ctx, `document.getElementById("thing").offsetParent !== null`) {
		t.Errorf("a spectator's page shows the spawn picker")
	}
}
