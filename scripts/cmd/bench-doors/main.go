// Command bench-doors measures two of the doors round 4 opened, through
// the real binaries on loopback, each against a host of the default world
// serving --http with its default limits.
//
// The WebSocket backlog (-part ws): it times -joins honest joins over
// WebSocket (the join tool: join ws://.../ws --exit-after-ready, one after
// another, from 127.0.0.1) alone, then while -one-dialers flooding dialers
// from one other loopback address (127.0.0.2) keep upgrading to /ws, and
// then while -wide-each dialers from each of -wide-addrs addresses do
// (127.0.1.1 on, -wide-per-net addresses to a /24). A flooding dialer
// upgrades and then sends nothing, so the host holds the connection in its
// handshake until it closes it; one the host closes or refuses (503) is
// dialed again at once, so the upgrades keep coming. The flood runs -warm
// before the first honest join. It prints, for each condition, how many
// joins reached WorldReady, each join's time and the exit codes and last
// lines of the ones that did not, and how many of the flood's upgrades the
// host answered 503, upgraded, or failed otherwise. The join tool asks
// again while the host answers 503 (a build from before that would exit),
// so after the joins -probes single upgrades from 127.0.0.1, -probe-every
// apart and never retried, show how often the host turned an honest
// address away itself.
//
// The browser player's file (-part wasm): it measures the host's tick rate
// (from the tick of /api/overview over -window, by the host's own clock,
// and the lowest ticks_per_second the host reported meanwhile) alone, then
// while -clients clients loop GET /play/lockhost.wasm without taking gzip
// (Accept-Encoding: identity), then while they loop HEAD of it, and prints
// the rates, the host's CPU time a second (procstat.CPU) and the requests
// completed in the window. With -player a
// player (the join tool over the game port, from WorldReady on) plays
// throughout, so the host may also hold time for it when it falls behind;
// the share of the overview's reads that found the host holding is
// printed too.
//
// The clients run in this process, on the host's cores, as an attacker on
// the same machine would. -host-bin measures another build's host (from
// before a fix, say) with the same benchmark and this build's join tool.
// It prints figures; it asserts nothing.
//
//	go run ./scripts/cmd/bench-doors [-part ws|wasm|both] [-host-bin OTHER-BUILD]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/transport/ws"
)

// opts are the command's flags.
type opts struct {
	part                 string
	hostBin              string
	joins, probes        int
	probeEvery           time.Duration
	oneDialers           int
	wideAddrs, wideEach  int
	widePerNet           int
	warm, giveUp, settle time.Duration
	clients              int
	window               time.Duration
	player               bool
}

func main() {
	var o opts
	flag.StringVar(&o.part, "part", "both", "what to measure: ws (the WebSocket backlog), wasm (the browser player's file) or both")
	flag.StringVar(&o.hostBin, "host-bin", "", "a host binary to measure instead of building ./cmd/host (another build, for before and after)")
	flag.IntVar(&o.joins, "joins", 5, "honest joins timed in each condition of -part ws")
	flag.IntVar(&o.probes, "probes", 20, "single honest upgrades (from 127.0.0.1, not retried) in each condition of -part ws, after the joins")
	flag.DurationVar(&o.probeEvery, "probe-every", 150*time.Millisecond, "the time between two honest upgrades")
	flag.IntVar(&o.oneDialers, "one-dialers", 48, "flooding dialers from the one address 127.0.0.2")
	flag.IntVar(&o.wideAddrs, "wide-addrs", 300, "flooding addresses of the wide flood (127.0.1.1 on)")
	flag.IntVar(&o.wideEach, "wide-each", 2, "flooding dialers from each address of the wide flood")
	flag.IntVar(&o.widePerNet, "wide-per-net", 50, "addresses of the wide flood in each /24 (127.0.1.0/24, 127.0.2.0/24, ...)")
	flag.DurationVar(&o.warm, "warm", 2*time.Second, "how long a flood runs before the first honest join")
	flag.DurationVar(&o.giveUp, "give-up", time.Minute, "how long an honest join may take before it is stopped and counted as failed")
	flag.DurationVar(&o.settle, "settle", 2*time.Second, "the pause after a flood or the clients stop, before the next condition")
	flag.IntVar(&o.clients, "clients", 16, "clients looping requests for /play/lockhost.wasm")
	flag.DurationVar(&o.window, "window", 5*time.Second, "how long the tick rate is measured in each condition of -part wasm")
	flag.BoolVar(&o.player, "player", false, "in -part wasm, have a player (the join tool) in the session throughout")
	flag.Parse()
	if o.part != "ws" && o.part != "wasm" && o.part != "both" {
		fmt.Fprintf(os.Stderr, "bench-doors: -part %q: want ws, wasm or both\n", o.part)
		os.Exit(2)
	}
	if o.widePerNet < 1 || o.widePerNet > 254 || o.wideAddrs > 254*o.widePerNet {
		fmt.Fprintln(os.Stderr, "bench-doors: -wide-per-net must be 1 to 254, and -wide-addrs at most 254 times it (the /24s 127.0.1.0 to 127.0.254.0)")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-doors:", err)
		os.Exit(1)
	}
}

// bench is one run's tools and settings.
type bench struct {
	o            opts
	dir          string
	host, joiner string
	hosts, names int
}

func run(o opts) error {
	dir, err := os.MkdirTemp("", "benchdoors-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{o: o, dir: dir}
	if b.host, b.joiner, err = procstat.HostAndJoin(dir, o.hostBin); err != nil {
		return err
	}
	fmt.Printf("bench-doors: GOMAXPROCS=%d NumCPU=%d; host %s\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), b.host)
	if o.part != "wasm" {
		if err := b.backlog(); err != nil {
			return err
		}
	}
	if o.part != "ws" {
		if err := b.wasm(); err != nil {
			return err
		}
	}
	return nil
}

// served is one host process.
type served struct {
	game string // the --listen address
	pid  int
	web  string // the --http address
	stop func()
}

// serve starts a host of the default world with --http and waits until
// it takes players. A host that refuses --discovery-port -1 (an older
// build) answers discovery on a free port of its own instead.
func (b *bench) serve() (*served, error) {
	h, logs, err := b.serveWith("-1")
	if err != nil && strings.Contains(logs, "discovery-port") {
		h, _, err = b.serveWith(fmt.Sprint(freeUDPPort()))
	}
	return h, err
}

func (b *bench) serveWith(discovery string) (*served, string, error) {
	b.hosts++
	game, web := procstat.MustFreeAddr(), procstat.MustFreeAddr()
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(b.host, "serve", "--listen", game, "--http", web, "--discovery-port", discovery,
		"--data-dir", filepath.Join(b.dir, fmt.Sprintf("data%d", b.hosts)))
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	h := &served{game: game, web: web, pid: cmd.Process.Pid, stop: func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
	}}
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if s := logs.String(); strings.Contains(s, "msg=hosting") || strings.Contains(s, `"msg":"hosting"`) {
			return h, s, nil
		}
		select {
		case <-done:
			return nil, logs.String(), fmt.Errorf("host exited:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			h.stop()
			return nil, logs.String(), fmt.Errorf("host not up after 5 min:\n%s", logs.String())
		}
	}
}

// backlog is -part ws.
func (b *bench) backlog() error {
	o := b.o
	h, err := b.serve()
	if err != nil {
		return err
	}
	defer h.stop()
	url := "ws://" + h.web + "/ws"
	nets := (o.wideAddrs + o.widePerNet - 1) / o.widePerNet
	fmt.Printf("\nA. The WebSocket backlog: %d honest joins (join %s --exit-after-ready) in each condition, from 127.0.0.1, one after another; a flood runs %v before them\n",
		o.joins, url, o.warm)
	fmt.Printf("%-44s %7s  %-44s %12s %11s  %s\n", "condition", "ready", "join times, s (exit code of a failed one)", "honest 503", "flood 503", "flood upgraded / other failures / upgrades a second")
	one, wide := floodSources(o)
	conds := []struct {
		label   string
		sources []netip.Addr
	}{
		{"alone", nil},
		{fmt.Sprintf("%d dialers from 127.0.0.2", o.oneDialers), one},
		{fmt.Sprintf("%d dialers from %d addresses in %d /24s", len(wide), o.wideAddrs, nets), wide},
	}
	var notes []string
	for _, c := range conds {
		var f *flood
		if len(c.sources) > 0 {
			f = startFlood(url, c.sources)
			time.Sleep(o.warm)
		}
		var ready int
		var times []string
		for range o.joins {
			r := b.join(url)
			if r.code == 0 && r.ready {
				ready++
				times = append(times, fmt.Sprintf("%.2f", r.took.Seconds()))
				continue
			}
			times = append(times, fmt.Sprintf("%.2f(%s)", r.took.Seconds(), r.exit()))
			notes = append(notes, fmt.Sprintf("%s, %s: exit %s after %.2f s: %s", c.label, r.name, r.exit(), r.took.Seconds(), r.last))
		}
		var pr probeStats
		for i := range o.probes {
			if i > 0 {
				time.Sleep(o.probeEvery)
			}
			pr.add(probe(url))
		}
		if pr.firstOther != "" {
			notes = append(notes, fmt.Sprintf("%s: the first honest upgrade that failed otherwise: %s", c.label, pr.firstOther))
		}
		floodCol, rest := "-", ""
		if f != nil {
			s := f.stop()
			floodCol = fmt.Sprint(s.busy)
			rest = fmt.Sprintf("%d / %d / %.0f", s.upgraded, s.other, float64(s.busy+s.upgraded)/s.took.Seconds())
			if s.firstOther != "" {
				notes = append(notes, fmt.Sprintf("%s: the flood's first other failure: %s", c.label, s.firstOther))
			}
			time.Sleep(o.settle)
		}
		honest := fmt.Sprintf("%d of %d", pr.busy, o.probes)
		if pr.other > 0 {
			honest += fmt.Sprintf(" (+%d other)", pr.other)
		}
		fmt.Printf("%-44s %3d/%-3d  %-44s %12s %11s  %s\n", c.label, ready, o.joins, strings.Join(times, " "), honest, floodCol, rest)
	}
	for _, n := range notes {
		fmt.Println("  " + n)
	}
	return nil
}

// floodSources are the dialers' addresses, one entry a dialer: -one-dialers
// from 127.0.0.2, and -wide-each from each of -wide-addrs addresses,
// -wide-per-net to a /24 (127.0.1.1 on).
func floodSources(o opts) (one, wide []netip.Addr) {
	for i := range o.wideAddrs {
		a := netip.AddrFrom4([4]byte{127, 0, byte(1 + i/o.widePerNet), byte(1 + i%o.widePerNet)})
		for range o.wideEach {
			wide = append(wide, a)
		}
	}
	one = make([]netip.Addr, o.oneDialers)
	for i := range one {
		one[i] = netip.MustParseAddr("127.0.0.2")
	}
	return one, wide
}

// joinResult is one honest join's outcome.
type joinResult struct {
	name    string
	took    time.Duration
	code    int  // the exit code; -1 when it was stopped or did not run
	ready   bool // it printed WorldReady
	stopped bool // it was stopped at -give-up
	last    string
}

func (r joinResult) exit() string {
	if r.stopped {
		return "stopped at give-up"
	}
	return fmt.Sprint(r.code)
}

// join runs the join tool to WorldReady over url.
func (b *bench) join(url string) joinResult {
	b.names++
	r := joinResult{name: fmt.Sprintf("Honest%d", b.names), code: -1}
	ctx, cancel := context.WithTimeout(context.Background(), b.o.giveUp)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.joiner, url, "--name", r.name, "--exit-after-ready", "-q", "--no-input")
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	r.took = time.Since(start)
	r.ready = strings.Contains(out.String(), "WorldReady")
	r.last = lastLine(out.String())
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		r.stopped = true
	case err == nil:
		r.code = 0
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		r.last = err.Error()
	}
	return r
}

// flood is dialers that keep upgrading to a WebSocket URL and hold what
// they get.
type flood struct {
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	start    time.Time
	upgraded atomic.Int64
	busy     atomic.Int64 // answered 503
	other    atomic.Int64
	mu       sync.Mutex
	first    string // the first other failure
}

// floodStats are what a flood saw.
type floodStats struct {
	upgraded, busy, other int64
	firstOther            string
	took                  time.Duration
}

// startFlood starts one dialer from each of sources (an address may
// appear more than once).
func startFlood(url string, sources []netip.Addr) *flood {
	ctx, cancel := context.WithCancel(context.Background())
	f := &flood{cancel: cancel, start: time.Now()}
	for _, src := range sources {
		f.wg.Go(func() { f.dial(ctx, url, src) })
	}
	return f
}

// stop ends the flood, closes its connections and returns its counts.
func (f *flood) stop() floodStats {
	took := time.Since(f.start)
	f.cancel()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return floodStats{upgraded: f.upgraded.Load(), busy: f.busy.Load(), other: f.other.Load(), firstOther: f.first, took: took}
}

// dial upgrades from src again and again until ctx ends: an upgraded
// connection sends nothing and is held until the host closes it, a
// refused one is dialed again at once.
func (f *flood) dial(ctx context.Context, url string, src netip.Addr) {
	d := &net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0)), Timeout: 5 * time.Second}
	client := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				// Closed with a reset, so the flood's thousands of
				// connections leave no TIME_WAIT to run out of ports.
				_ = tc.SetLinger(0)
			}
			return c, err
		},
	}}
	for ctx.Err() == nil {
		c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client, Subprotocols: []string{ws.Subprotocol}})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
				f.busy.Add(1)
				continue
			}
			f.other.Add(1)
			f.mu.Lock()
			if f.first == "" {
				f.first = err.Error()
			}
			f.mu.Unlock()
			time.Sleep(5 * time.Millisecond) // not a busy loop on a local failure
			continue
		}
		f.upgraded.Add(1)
		c.SetReadLimit(1 << 20)
		for {
			if _, _, err := c.Read(ctx); err != nil {
				break
			}
		}
		c.CloseNow()
	}
}

// probeStats count single honest upgrades.
type probeStats struct {
	busy, other int
	firstOther  string
}

func (p *probeStats) add(busy bool, err error) {
	switch {
	case busy:
		p.busy++
	case err != nil:
		p.other++
		if p.firstOther == "" {
			p.firstOther = err.Error()
		}
	}
}

// probe upgrades to url once from 127.0.0.1 and closes what it gets; it
// reports whether the host answered 503, or another failure.
func probe(url string) (busy bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client, Subprotocols: []string{ws.Subprotocol}})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
			return true, nil
		}
		return false, err
	}
	c.CloseNow()
	return false, nil
}

// wasm is -part wasm.
func (b *bench) wasm() error {
	o := b.o
	h, err := b.serve()
	if err != nil {
		return err
	}
	defer h.stop()
	wasmURL := "http://" + h.web + "/play/lockhost.wasm"
	fmt.Printf("\nB. The browser player's file: the host's tick rate over %v alone and while %d clients loop requests for %s with Accept-Encoding: identity\n",
		o.window, o.clients, wasmURL)
	if o.player {
		stop, err := b.play(h.game)
		if err != nil {
			return err
		}
		defer stop()
		fmt.Printf("a player (join %s, no --exit-after-ready) plays throughout\n", h.game)
	}
	fmt.Printf("%-36s %9s %16s %8s %9s %10s %12s %10s\n", "condition", "ticks/s", "lowest reported", "holding", "host CPU", "requests", "MB read", "not 200")
	time.Sleep(time.Second) // the first ticks
	for _, method := range []string{"", http.MethodGet, http.MethodHead} {
		label := "alone"
		var l *looper
		if method != "" {
			label = fmt.Sprintf("%d clients %s (identity)", o.clients, method)
			l = startLoopers(wasmURL, method, o.clients)
			time.Sleep(time.Second) // under way
		}
		var req0, bytes0, bad0 int64
		if l != nil {
			req0, bytes0, bad0 = l.done.Load(), l.bytes.Load(), l.bad.Load()
		}
		cpu0, t0 := procstat.CPU(h.pid), time.Now()
		rate, lowest, holding, err := tickRate(h.web, o.window)
		cpu := (procstat.CPU(h.pid) - cpu0).Seconds() / time.Since(t0).Seconds()
		var req, read, bad int64
		if l != nil {
			req, read, bad = l.done.Load()-req0, l.bytes.Load()-bytes0, l.bad.Load()-bad0
			l.stop()
		}
		if err != nil {
			fmt.Printf("%-36s   failed: %v\n", label, err)
		} else if l == nil {
			fmt.Printf("%-36s %9.1f %16.1f %7.0f%% %7.2f/s %10s %12s %10s\n", label, rate, lowest, 100*holding, cpu, "-", "-", "-")
		} else {
			fmt.Printf("%-36s %9.1f %16.1f %7.0f%% %7.2f/s %10d %12.1f %10d\n", label, rate, lowest, 100*holding, cpu, req, float64(read)/1e6, bad)
		}
		time.Sleep(o.settle)
	}
	return nil
}

// overview is what the bench reads of /api/overview.
type overview struct {
	At             time.Time `json:"at"`
	Tick           uint64    `json:"tick"`
	TicksPerSecond float64   `json:"ticks_per_second"`
	Holding        bool      `json:"holding"`
}

func readOverview(web string) (overview, error) {
	var o overview
	resp, err := http.Get("http://" + web + "/api/overview")
	if err != nil {
		return o, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return o, fmt.Errorf("/api/overview: %s", resp.Status)
	}
	return o, json.NewDecoder(resp.Body).Decode(&o)
}

// tickRate is the host's ticks a second over window, by the tick and time
// of its overview's snapshots at the two ends, and the lowest
// ticks_per_second it reported meanwhile (read every 250 ms), and the
// share of those reads that found it holding time for a player.
func tickRate(web string, window time.Duration) (rate, lowest, holding float64, err error) {
	first, err := readOverview(web)
	if err != nil {
		return 0, 0, 0, err
	}
	lowest = -1
	last := first
	reads, held := 0, 0
	for end := time.Now().Add(window); time.Now().Before(end); {
		time.Sleep(250 * time.Millisecond)
		o, err := readOverview(web)
		if err != nil {
			return 0, 0, 0, err
		}
		if reads++; o.Holding {
			held++
		}
		if lowest < 0 || o.TicksPerSecond < lowest {
			lowest = o.TicksPerSecond
		}
		last = o
	}
	span := last.At.Sub(first.At).Seconds()
	if span <= 0 {
		return 0, 0, 0, fmt.Errorf("the overview's snapshot did not move in %v", window)
	}
	return float64(last.Tick-first.Tick) / span, max(lowest, 0), float64(held) / float64(max(reads, 1)), nil
}

// play runs a player, the join tool over the game port, until stop, and
// waits for its WorldReady.
func (b *bench) play(game string) (stop func(), err error) {
	out := &syncbuf.Buffer{}
	cmd := exec.Command(b.joiner, game, "--name", "Player", "-q", "--no-input")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-done
	}
	for deadline := time.Now().Add(time.Minute); !strings.Contains(out.String(), "WorldReady"); time.Sleep(50 * time.Millisecond) {
		select {
		case <-done:
			return nil, fmt.Errorf("the player exited before WorldReady:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("the player not ready after a minute:\n%s", out.String())
		}
	}
	return stop, nil
}

// looper is clients that request a URL again and again.
type looper struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   atomic.Int64 // requests completed (the body read to its end)
	bytes  atomic.Int64 // body bytes read
	bad    atomic.Int64 // completed with a status other than 200
}

func startLoopers(url, method string, n int) *looper {
	ctx, cancel := context.WithCancel(context.Background())
	l := &looper{cancel: cancel}
	for range n {
		l.wg.Go(func() {
			// A client that takes no gzip: Go's transport would otherwise
			// ask for it by itself.
			client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, method, url, nil)
				if err != nil {
					return
				}
				req.Header.Set("Accept-Encoding", "identity")
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						time.Sleep(5 * time.Millisecond)
					}
					continue
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				l.bytes.Add(n)
				if err != nil {
					continue
				}
				l.done.Add(1)
				if resp.StatusCode != http.StatusOK {
					l.bad.Add(1)
				}
			}
		})
	}
	return l
}

func (l *looper) stop() {
	l.cancel()
	l.wg.Wait()
}

func freeUDPPort() int {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).Port
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}
