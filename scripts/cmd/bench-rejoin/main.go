// Command bench-rejoin measures the rejoin from the world held
// (docs/protocol.md, section 6.6) through the real binaries on loopback:
// a host serves a generated world (64 MiB of raw state by default); two
// players join with the join tool, each sending --bot commands a second:
// Steady directly, Roamer through a link this tool cuts. For each drop
// (5 s, 60 s and 5 min by default) the link is cut (every connection
// reset, new ones refused) for that long, then restored; Roamer's
// Reconnector comes back by itself. For each it prints how Roamer came
// back (from the world it held, or with a download and why), the bytes
// its new connection read from the host until the host accepted its next
// hash report, against the bytes of its first join, and the times from
// the new connection to WorldReady and to that accepted report. Then a
// second host whose rejoin window is shorter than the drop shows the
// fallback: the host says why and the player downloads the world. It
// also prints the memory of the host's rejoin window per minute. With
// -storm it runs a rejoin storm instead (storm.go): chains of held-world
// rejoins that never reach WorldReady while players flood commands, and
// the longest gap between ticks with and without them. It prints
// figures; it asserts nothing.
//
//	go run ./scripts/cmd/bench-rejoin [-world-mib 64] [-bot 50] [-drops 5s,60s,5m] [-window-drop 20s]
//	go run ./scripts/cmd/bench-rejoin -storm [-world-mib 2] [-storm-players 6] [-bot 80] [-storm-age 150s] [-storm-for 20s] [-storm-spread]
//	(either form takes -host-bin OTHER-BUILD to measure another build of the host)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

func main() {
	mib := flag.Int("world-mib", 64, "the world's raw size, as host serve --world-mib")
	bot := flag.Float64("bot", 50, "commands a second each player sends, as join --bot")
	drops := flag.String("drops", "5s,60s,5m", "the drops to measure, comma-separated durations")
	windowDrop := flag.Duration("window-drop", 20*time.Second, "the drop on a second host whose --rejoin-window is half of it (0: skip)")
	stormMode := flag.Bool("storm", false, "run the rejoin storm instead of the drops (-world-mib defaults to 2 and -bot to 80 then)")
	stormPlayers := flag.Int("storm-players", 6, "with -storm: the chains rejoining, and the players flooding commands")
	stormAge := flag.Duration("storm-age", 150*time.Second, "with -storm: how old the chains' held point is when the storm starts")
	stormFor := flag.Duration("storm-for", 20*time.Second, "with -storm: how long the storm lasts")
	flag.StringVar(&hostBin, "host-bin", "", "a host binary to measure instead of building ./cmd/host (another build, for before and after)")
	stormSpread := flag.Bool("storm-spread", false, "with -storm: each rejoin of a chain names a position a tick past its previous one's, so no two share a replay")
	flag.Parse()
	if *stormMode {
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		sc := stormConfig{mib: 2, players: *stormPlayers, bot: 80, age: *stormAge, duration: *stormFor, spread: *stormSpread}
		if set["world-mib"] {
			sc.mib = *mib
		}
		if set["bot"] {
			sc.bot = *bot
		}
		if err := stormRun(sc); err != nil {
			fmt.Fprintln(os.Stderr, "bench-rejoin:", err)
			os.Exit(1)
		}
		return
	}
	var ds []time.Duration
	for _, f := range strings.Split(*drops, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-rejoin: -drops:", err)
			os.Exit(2)
		}
		ds = append(ds, d)
	}
	if err := run(*mib, *bot, ds, *windowDrop); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rejoin:", err)
		os.Exit(1)
	}
}

// hostBin is -host-bin: a host binary of another build to measure.
var hostBin string

// tools are the binaries built for the run.
type tools struct{ host, joiner, dir string }

// buildTools builds the host and join tools into a new directory, which
// the caller removes.
func buildTools() (tools, error) {
	dir, err := os.MkdirTemp("", "benchrejoin-")
	if err != nil {
		return tools{}, err
	}
	tl := tools{dir: dir}
	if tl.host, tl.joiner, err = procstat.HostAndJoin(dir, hostBin); err != nil {
		return tl, err
	}
	return tl, nil
}

// stormRun builds the tools and runs the storm.
func stormRun(sc stormConfig) error {
	tl, err := buildTools()
	if tl.dir != "" {
		defer os.RemoveAll(tl.dir)
	}
	if err != nil {
		return err
	}
	return runStorm(tl, sc)
}

func run(mib int, bot float64, drops []time.Duration, windowDrop time.Duration) error {
	tl, err := buildTools()
	if tl.dir != "" {
		defer os.RemoveAll(tl.dir)
	}
	if err != nil {
		return err
	}
	fmt.Printf("bench-rejoin: %d MiB world, two players sending %g commands a second each, Roamer behind a link cut for each drop\n\n", mib, bot)
	if err := tl.session(mib, bot, "30690", drops, "--rejoin-grace", "15m"); err != nil {
		return err
	}
	if windowDrop > 0 {
		fmt.Printf("\na host whose rejoin window (%v) is shorter than the drop:\n\n", windowDrop/2)
		return tl.session(mib, bot, "30692", []time.Duration{windowDrop}, "--rejoin-window", (windowDrop / 2).String())
	}
	return nil
}

// session runs one host with the two players and measures drops.
func (tl tools) session(mib int, bot float64, port string, drops []time.Duration, extra ...string) error {
	p, _ := strconv.Atoi(port)
	h, err := startHost(tl, mib, "127.0.0.1:"+port, fmt.Sprintf("127.0.0.1:%d", p+1), extra...)
	if err != nil {
		return err
	}
	defer h.stop()
	l, err := newLink(h.game)
	if err != nil {
		return err
	}
	defer l.close()
	steady := startPlayer(tl.joiner, h.game, "Steady", bot)
	defer steady.stop()
	roamer := startPlayer(tl.joiner, l.addr(), "Roamer", bot)
	defer roamer.stop()
	if err := roamer.waitLine("WorldReady", 1, 10*time.Minute); err != nil {
		return err
	}
	full := l.conn(0).down.Load()
	fmt.Printf("first join: %s read from the host (the whole world)\n", mb(full))
	if err := steady.waitLine("WorldReady", 1, 10*time.Minute); err != nil {
		return err
	}
	if err := h.windowFigures(); err != nil {
		return err
	}
	fmt.Printf("\n%-8s %-12s %12s %8s %10s %12s %14s\n", "drop", "rejoin", "bytes read", "of join", "ticks", "to ready", "to accepted")
	for i, d := range drops {
		if err := measureDrop(h, l, roamer, d, i+1, full); err != nil {
			return err
		}
	}
	fmt.Println("\nbytes read: what Roamer's new connection read from the host until the host accepted its next hash report;")
	fmt.Println("to ready / to accepted: from that connection's start to WorldReady and to that accepted report.")
	return h.rejoinCounters()
}

// measureDrop cuts the link for d, restores it and measures the rejoin,
// the n-th, once the host has accepted a report after it.
func measureDrop(h *hostProc, l *link, roamer *player, d time.Duration, n int, full int64) error {
	if err := h.waitAccepted("Roamer", 0); err != nil {
		return err
	}
	l.cut()
	time.Sleep(d)
	l.restore()
	if err := roamer.waitLine("reconnected:", n, d+10*time.Minute); err != nil {
		return err
	}
	seen := time.Now()
	line := roamer.lines("reconnected:")[n-1]
	c := l.last()
	ready := readyTick(line)
	if err := h.waitAccepted("Roamer", ready); err != nil {
		return err
	}
	accepted := time.Now()
	read := c.down.Load()
	how, ticks := "downloaded", "-"
	if m := heldLine.FindStringSubmatch(line); m != nil {
		how, ticks = "held world", m[1]
	} else if m := whyLine.FindStringSubmatch(line); m != nil {
		how = "downloaded: " + m[1]
	}
	fmt.Printf("%-8v %-12s %12s %7.3f%% %10s %12v %14v\n", d, how, mb(read), 100*float64(read)/float64(full), ticks,
		seen.Sub(c.opened).Round(time.Millisecond), accepted.Sub(c.opened).Round(time.Millisecond))
	fmt.Printf("         the tool said: %s\n", strings.TrimSpace(line))
	return nil
}

var (
	heldLine  = regexp.MustCompile(`from the world held: (\d+) ticks replayed`)
	whyLine   = regexp.MustCompile(`held world turned down: (\w+)`)
	readyLine = regexp.MustCompile(`WorldReady tick=(\d+)`)
)

// readyTick is the WorldReady tick a "reconnected:" line names.
func readyTick(line string) uint64 {
	m := readyLine.FindStringSubmatch(line)
	if m == nil {
		return 0
	}
	t, _ := strconv.ParseUint(m[1], 10, 64)
	return t
}

func mb(n int64) string { return fmt.Sprintf("%.3f MB", float64(n)/1e6) }

// hostProc is a running host serve.
type hostProc struct {
	cmd       *exec.Cmd
	logs      *syncbuf.Buffer
	game, web string
	started   time.Time
}

func startHost(tl tools, mib int, game, web string, extra ...string) (*hostProc, error) {
	args := append([]string{"serve", "--listen", game, "--http", web, "--world-mib", strconv.Itoa(mib), "--seed", "1",
		"--log-format", "json", "--conn-rate", "-1", "--data-dir", filepath.Join(tl.dir, "data-"+game[strings.LastIndexByte(game, ':')+1:])}, extra...)
	h := &hostProc{cmd: exec.Command(tl.host, args...), logs: &syncbuf.Buffer{}, game: game, web: web, started: time.Now()}
	h.cmd.Stderr = h.logs
	if err := h.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := h.overview(); err == nil {
			return h, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	h.stop()
	return nil, fmt.Errorf("the host did not come up:\n%s", h.logs.String())
}

func (h *hostProc) stop() {
	_ = h.cmd.Process.Signal(os.Interrupt)
	_ = h.cmd.Wait()
}

// overviewJSON is the part of the status JSON this tool reads.
type overviewJSON struct {
	Tick    uint64 `json:"tick"`
	Players []struct {
		Name     string `json:"name"`
		Accepted uint64 `json:"accepted_tick"`
	} `json:"players"`
	Stats struct {
		Commands          uint64         `json:"commands"`
		RejoinsHeld       int            `json:"rejoins_held"`
		RejoinsDownloaded int            `json:"rejoins_downloaded"`
		Replayed          uint64         `json:"rejoin_replayed_bytes"`
		Fallbacks         map[string]int `json:"rejoin_fallbacks"`
	} `json:"stats"`
	Window struct {
		Commands int    `json:"commands"`
		Bytes    int64  `json:"bytes"`
		From     uint64 `json:"from_tick"`
	} `json:"rejoin_window"`
}

func (h *hostProc) overview() (*overviewJSON, error) {
	resp, err := http.Get("http://" + h.web + "/api/overview")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var o overviewJSON
	return &o, json.NewDecoder(resp.Body).Decode(&o)
}

// waitAccepted waits until the host accepted a hash report of name at a
// tick past after.
func (h *hostProc) waitAccepted(name string, after uint64) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if o, err := h.overview(); err == nil {
			for _, p := range o.Players {
				if p.Name == name && p.Accepted > after {
					return nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the host accepted no report of %s past tick %d in 2 minutes", name, after)
}

// windowFigures prints the rejoin window's memory over the commands it
// holds: per minute at the rate measured over 10 s.
func (h *hostProc) windowFigures() error {
	a, err := h.overview()
	if err != nil {
		return err
	}
	time.Sleep(10 * time.Second)
	b, err := h.overview()
	if err != nil {
		return err
	}
	rate := float64(b.Stats.Commands-a.Stats.Commands) / 10
	perCmd := float64(b.Window.Bytes) / float64(max(1, b.Window.Commands))
	fmt.Printf("rejoin window: %d commands, %s (%.0f bytes each); at the %.0f commands/s measured, %.2f MiB a minute, %.2f MiB a minute at 100/s\n",
		b.Window.Commands, mb(b.Window.Bytes), perCmd, rate, rate*60*perCmd/(1<<20), 100*60*perCmd/(1<<20))
	return nil
}

// rejoinCounters prints the host's rejoin counters.
func (h *hostProc) rejoinCounters() error {
	o, err := h.overview()
	if err != nil {
		return err
	}
	fmt.Printf("host counted: %d rejoins from a held world (%s replayed), %d that downloaded, turned down: %v\n",
		o.Stats.RejoinsHeld, mb(int64(o.Stats.Replayed)), o.Stats.RejoinsDownloaded, o.Stats.Fallbacks)
	return nil
}
