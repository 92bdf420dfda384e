// Command bench-browser prints the browser player's figures: the size of
// the embedded WebAssembly player (as served, gzipped, and raw), and,
// for the default world and the 64 MiB world (host serve --world-mib
// 64), the browser's time to WorldReady in headless Chromium and its
// catch-up rate, beside the native join tool's in the same run (over TCP
// and over the same WebSocket). It runs the real host and join tools on
// loopback; it prints figures and asserts nothing.
//
//	go run ./scripts/cmd/bench-browser                 # default and 64 MiB worlds
//	go run ./scripts/cmd/bench-browser -worlds default # the default world only
//	go run ./scripts/cmd/bench-browser -runs 3         # three of each, interleaved
//
// It needs chromium on PATH (Debian: apt-get install -y chromium).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/lockhost/lockhost/operator/play"
	"github.com/lockhost/lockhost/testing/browsertest"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

func main() {
	worlds := flag.String("worlds", "default,64", "worlds to join: default (host serve's own) and sizes in MiB (--world-mib)")
	runs := flag.Int("runs", 1, "joins of each kind per world")
	flag.Parse()
	if err := run(strings.Split(*worlds, ","), *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench-browser:", err)
		os.Exit(1)
	}
}

func run(worlds []string, runs int) error {
	gz := play.Wasm()
	fmt.Printf("wasm player: %s served (gzip), %s raw\n", mib(uint64(len(gz))), mib(uint64(play.RawSize(gz))))
	dir, err := os.MkdirTemp("", "bench-browser")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hostBin, joinBin, err := procstat.BuildHostAndJoin(dir)
	if err != nil {
		return err
	}
	bctx, stop, err := browser(dir)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("%-8s %-14s %10s %10s %10s %10s %12s %14s\n", "world", "joiner", "ready ms", "download", "load", "catch-up", "ticks", "ticks/s")
	for _, w := range worlds {
		if err := bench(bctx, hostBin, joinBin, dir, strings.TrimSpace(w), runs); err != nil {
			return fmt.Errorf("world %s: %w", w, err)
		}
	}
	return nil
}

// result is one join's figures.
type result struct {
	total, download, load, catchUp float64 // ms
	ticks                          uint64
	rate                           float64
	// page is, for the browser, the time from opening /play to
	// WorldReady (the player's download and compile, player, included).
	page, player float64
}

func (r result) print(world, who string) {
	fmt.Printf("%-8s %-14s %10.0f %10.0f %10.0f %10.0f %12d %14.0f", world, who, r.total, r.download, r.load, r.catchUp, r.ticks, r.rate)
	if r.page > 0 {
		fmt.Printf("   (page opened to WorldReady %.0f ms, the player's download and compile %.0f ms of it)", r.page, r.player)
	}
	fmt.Println()
}

// bench starts a host with world w and joins it runs times each from
// the browser, the join tool over TCP and the join tool over WebSocket.
func bench(bctx context.Context, hostBin, joinBin, dir, w string, runs int) error {
	args := []string{"serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--conn-rate", "-1", "--data-dir", filepath.Join(dir, "data-"+w)}
	if w != "default" {
		if _, err := strconv.Atoi(w); err != nil {
			return fmt.Errorf("world %q: want default or a size in MiB", w)
		}
		args = append(args, "--world-mib", w, "--seed", "1")
	}
	host, log, err := startHost(hostBin, args)
	if err != nil {
		return err
	}
	defer host.stop()
	game := regexp.MustCompile(`msg=hosting addr=(\S+)`).FindStringSubmatch(log.String())[1]
	web := regexp.MustCompile(`url=(http://\S+)/play`).FindStringSubmatch(log.String())[1]
	wsURL := "ws" + strings.TrimPrefix(web, "http") + "/ws"
	for i := range runs {
		r, err := browserJoin(bctx, web, fmt.Sprintf("Web%d", i))
		if err != nil {
			return err
		}
		r.print(w, "browser (ws)")
		for _, via := range []struct{ name, addr string }{{"join tool tcp", game}, {"join tool ws", wsURL}} {
			r, err := nativeJoin(joinBin, via.addr, fmt.Sprintf("Native%d", i))
			if err != nil {
				return err
			}
			r.print(w, via.name)
		}
	}
	return nil
}

// hostProc is a running host.
type hostProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (h *hostProc) stop() {
	_ = h.cmd.Process.Signal(os.Interrupt)
	<-h.done
}

// startHost runs the host tool and waits until it takes players.
func startHost(bin string, args []string) (*hostProc, *syncbuf.Buffer, error) {
	var log syncbuf.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	h := &hostProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(h.done) }()
	for deadline := time.Now().Add(5 * time.Minute); !strings.Contains(log.String(), "msg=hosting"); time.Sleep(50 * time.Millisecond) {
		select {
		case <-h.done:
			return nil, nil, fmt.Errorf("host exited:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			h.stop()
			return nil, nil, fmt.Errorf("host not up after 5 min:\n%s", log.String())
		}
	}
	return h, &log, nil
}

var readyLine = regexp.MustCompile(`download=(\S+) load=(\S+) catch-up=(\S+) total=(\S+) .* caught-up=(\d+) ticks \(([\d.]+) ticks/s\)`)

// nativeJoin runs the join tool to WorldReady and reads its timings.
func nativeJoin(bin, addr, name string) (result, error) {
	out, err := exec.Command(bin, addr, "--name", name, "--exit-after-ready", "-q").CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("join %s: %w\n%s", addr, err, out)
	}
	m := readyLine.FindStringSubmatch(string(out))
	if m == nil {
		return result{}, fmt.Errorf("join %s: no WorldReady line:\n%s", addr, out)
	}
	d := func(s string) float64 {
		v, _ := time.ParseDuration(s)
		return float64(v.Microseconds()) / 1000
	}
	ticks, _ := strconv.ParseUint(m[5], 10, 64)
	rate, _ := strconv.ParseFloat(m[6], 64)
	return result{total: d(m[4]), download: d(m[1]), load: d(m[2]), catchUp: d(m[3]), ticks: ticks, rate: rate}, nil
}

// browser starts headless Chromium with the flags of the browser tests.
func browser(dir string) (context.Context, func(), error) {
	path, err := browsertest.Find()
	if err != nil {
		return nil, nil, err
	}
	return browsertest.Launch(path, filepath.Join(dir, "chromium"), browsertest.Foreground...)
}

// browserJoin opens /play in a new tab, waits for WorldReady and reads
// the join's timings from the page; the tab is closed after, so the
// player leaves.
func browserJoin(bctx context.Context, web, name string) (result, error) {
	tctx, cancelTab := chromedp.NewContext(bctx)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(tctx, 10*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(web+"/play?name="+name)); err != nil {
		return result{}, err
	}
	if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`window.lockhostPage && ["ready", "error"].includes(lockhostPage.state().phase)`,
		chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		return result{}, fmt.Errorf("browser WorldReady: %w", err)
	}
	t, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(s => s.phase === "ready" ?
		{...s.timings, page_ms: lockhostPage.readyAt, player_ms: lockhostPage.loadMs} : {error: s.error})(lockhostPage.state())`))
	if err != nil {
		return result{}, err
	}
	if e, ok := t["error"]; ok {
		return result{}, fmt.Errorf("browser join: %v", e)
	}
	f := func(k string) float64 { v, _ := t[k].(float64); return v }
	return result{total: f("total_ms"), download: f("download_ms"), load: f("load_ms"), catchUp: f("catch_up_ms"),
		ticks: uint64(f("catch_up_ticks")), rate: f("catch_up_rate"), page: f("page_ms"), player: f("player_ms")}, nil
}

func mib(n uint64) string { return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20)) }
