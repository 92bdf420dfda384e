package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/testing/procstat"
)

// The side-by-side comparison with OpenTTD (-openttd): OpenTTD's own
// loopback join benchmark (a shell script run as it is, with
// savegame_format lzo, its fastest) and lockhost on the same raw world
// size, interleaved run by run, both sides' joiners at nice 19. See the
// package comment for what is printed.

// peerScriptEnv overrides where the OpenTTD join script is.
const peerScriptEnv = "LOCKHOST_OPENTTD_PEER"

// defaultPeerScript is the OpenTTD join script, relative to the repository
// root (scripts/bench-join runs from there).
const defaultPeerScript = "../shared/bench/openttd-join-peer.sh"

// openttdOptions are the -openttd mode's settings.
type openttdOptions struct {
	script   string // the OpenTTD join script
	ottd     string // the OpenTTD binary
	size     int    // OpenTTD's map edge
	worldMiB int    // lockhost's world of the same raw size
	runs     int
	joiners  int
	hostBin  string // prebuilt binaries to measure, if set
	joinBin  string
	// lockhostOnly skips OpenTTD: lockhost's figures alone, to compare
	// two builds of it (-host-bin, -join-bin).
	lockhostOnly bool
}

// tps shows a worst tick rate: -1 is a pause.
func tps(v float64) string {
	if v < 0 {
		return "paused"
	}
	return fmt.Sprintf("%.0f", v)
}

// sample is one side's figures for one scenario of one run.
type sample struct {
	join     time.Duration // connect to in game; with several joiners, first connect to last in game
	bytes    float64       // on the wire per joiner
	hostCPU  float64       // seconds, over the joins
	hostPeak float64       // MiB, the host process's peak
	joinPeak float64       // MiB, the largest joiner's peak
	worstTPS float64       // the host's slowest one-second tick rate during the joins; -1 paused
	held     bool          // lockhost held time for a lagging joiner
}

// openttd runs the comparison, or says why it cannot.
func (b *bench) openttd(o openttdOptions) error {
	if o.lockhostOnly {
		fmt.Println("lockhost only (-lockhost-only): OpenTTD is not run")
	} else if _, err := os.Stat(o.script); err != nil {
		fmt.Printf("bench-join -openttd: skipped: no OpenTTD join script at %s (set -openttd-script or %s)\n", o.script, peerScriptEnv)
		return nil
	} else if _, err := exec.LookPath(o.ottd); err != nil {
		fmt.Printf("bench-join -openttd: skipped: OpenTTD is not installed at %s (Debian packages openttd, openttd-opengfx; or set OTTD)\n", o.ottd)
		return nil
	}
	w := world{name: fmt.Sprintf("%d MiB", o.worldMiB), flags: []string{"--world-mib", strconv.Itoa(o.worldMiB), "--seed", "1"}}
	fmt.Printf("OpenTTD %d² (savegame_format lzo) against lockhost --world-mib %d, %d runs interleaved, joiners at nice 19;\n",
		o.size, o.worldMiB, o.runs)
	fmt.Printf("OpenTTD's script: %s (its first run generates and caches the save, which takes minutes)\n\n", o.script)
	var ottd1, ottdN, lh1, lhN []sample
	step := func(r int, name string, into *[]sample, f func() (sample, error)) error {
		s, err := f()
		if err != nil {
			return fmt.Errorf("run %d, %s: %w", r, name, err)
		}
		*into = append(*into, s)
		fmt.Printf("run %d, %-22s join %6.2f s, %6.1f MiB/joiner, host CPU %5.2f s, host peak %5.0f MiB, joiner peak %5.0f MiB, worst tick/s %s\n",
			r, name+":", s.join.Seconds(), s.bytes/(1<<20), s.hostCPU, s.hostPeak, s.joinPeak, tps(s.worstTPS))
		return nil
	}
	for r := 1; r <= o.runs; r++ {
		if !o.lockhostOnly {
			if err := step(r, "OpenTTD, one join", &ottd1, func() (sample, error) { return b.ottdJoin(o, 1) }); err != nil {
				return err
			}
		}
		if err := step(r, "lockhost, one join", &lh1, func() (sample, error) { return b.lockhostJoin(w, 1) }); err != nil {
			return err
		}
		if !o.lockhostOnly {
			if err := step(r, fmt.Sprintf("OpenTTD, %d at once", o.joiners), &ottdN, func() (sample, error) { return b.ottdJoin(o, o.joiners) }); err != nil {
				return err
			}
		}
		if err := step(r, fmt.Sprintf("lockhost, %d at once", o.joiners), &lhN, func() (sample, error) { return b.lockhostJoin(w, o.joiners) }); err != nil {
			return err
		}
	}
	fmt.Println()
	if !o.lockhostOnly {
		printSide("OpenTTD lzo, one join", ottd1, nil)
	}
	printSide("lockhost, one join", lh1, ottd1)
	if !o.lockhostOnly {
		printSide(fmt.Sprintf("OpenTTD lzo, %d at once", o.joiners), ottdN, nil)
	}
	printSide(fmt.Sprintf("lockhost, %d at once", o.joiners), lhN, ottdN)
	ones := make([]float64, len(lh1))
	for i := range lh1 {
		ones[i] = lhN[i].join.Seconds() / lh1[i].join.Seconds()
	}
	fmt.Printf("\nlockhost %d at once / one join, run by run: %s\n", o.joiners, minMedMax(ones, "%.2fx"))
	if !o.lockhostOnly {
		rel := make([]float64, len(lh1))
		for i := range lh1 {
			rel[i] = lh1[i].join.Seconds() / ottd1[i].join.Seconds()
		}
		fmt.Printf("lockhost one join / OpenTTD lzo one join, run by run: %s\n", minMedMax(rel, "%.2fx"))
	}
	fmt.Println("  join: connect to in game (OpenTTD: its 'Connected to' to its first 'Sent ACK'; lockhost: the join tool's connect to")
	fmt.Println("  WorldReady, catch-up included); with several joiners, the first connect to the last in game.")
	fmt.Println("  bytes: on the wire per joiner (OpenTTD: the client socket's bytes_received; lockhost: the host's bytes sent, all")
	fmt.Println("  packets, divided by the joiners). host CPU: over the joins. peaks: the process's peak RSS (the whole run).")
	fmt.Println("  worst tick/s: the host's slowest one-second window during the joins; OpenTTD pauses while a client joins.")
	return nil
}

// printSide prints min/median/max of each figure, with ratios to ref's
// medians when ref is given.
func printSide(name string, s, ref []sample) {
	get := func(s []sample, f func(sample) float64) []float64 {
		out := make([]float64, len(s))
		for i, x := range s {
			out[i] = f(x)
		}
		return out
	}
	rows := []struct {
		what, format string
		f            func(sample) float64
	}{
		{"join s", "%.2f", func(x sample) float64 { return x.join.Seconds() }},
		{"MiB on the wire per joiner", "%.1f", func(x sample) float64 { return x.bytes / (1 << 20) }},
		{"host CPU s", "%.2f", func(x sample) float64 { return x.hostCPU }},
		{"host peak MiB", "%.0f", func(x sample) float64 { return x.hostPeak }},
		{"joiner peak MiB", "%.0f", func(x sample) float64 { return x.joinPeak }},
		{"worst tick/s", "%.0f", func(x sample) float64 { return x.worstTPS }},
	}
	fmt.Printf("%s (min / median / max of %d):\n", name, len(s))
	for _, r := range rows {
		v := get(s, r.f)
		line := fmt.Sprintf("  %-28s %s", r.what, minMedMax(v, r.format))
		if r.what == "worst tick/s" && slices.Contains(v, -1) {
			line = fmt.Sprintf("  %-28s paused in %d of %d runs", r.what, count(v, -1), len(v))
		} else if ref != nil && r.what != "worst tick/s" {
			if m := procstat.Median(get(ref, r.f)); m > 0 {
				line += fmt.Sprintf("   (%.2fx OpenTTD's median)", procstat.Median(v)/m)
			}
		}
		fmt.Println(line)
	}
	held := 0
	for _, x := range s {
		if x.held {
			held++
		}
	}
	if strings.HasPrefix(name, "lockhost") {
		fmt.Printf("  %-28s %d of %d runs\n", "time held for a joiner", held, len(s))
	}
}

func count(v []float64, x float64) int {
	n := 0
	for _, y := range v {
		if y == x {
			n++
		}
	}
	return n
}

func minMedMax(v []float64, format string) string {
	s := slices.Clone(v)
	slices.Sort(s)
	return fmt.Sprintf(format+" / "+format+" / "+format, s[0], procstat.Median(s), s[len(s)-1])
}

var rawRows = regexp.MustCompile(`Raw rows: (\S+)`)

// errConnectHang is OpenTTD 13's client stuck before connecting (a race
// in its connecter, more likely on a busy machine); the script retries it
// three times itself.
var errConnectHang = errors.New("an OpenTTD client hung before connecting")

// ottdJoin runs OpenTTD's script for n joiners at once on its map and
// reads its rows; when a client hangs before connecting in every try of
// the script, it runs the script again, up to three times.
func (b *bench) ottdJoin(o openttdOptions, n int) (s sample, err error) {
	for range 3 {
		if s, err = b.ottdJoinOnce(o, n); !errors.Is(err, errConnectHang) {
			return s, err
		}
		fmt.Printf("  (%v; running OpenTTD's script again)\n", err)
	}
	return s, err
}

func (b *bench) ottdJoinOnce(o openttdOptions, n int) (sample, error) {
	cmd := exec.Command("bash", o.script)
	// A client at nice 19 on a busy machine may take longer than the
	// script's 15 s to start connecting: that is not its connecter race.
	env := append(os.Environ(), "SAVEFMT=lzo", "REPEAT=1", "CLIENT_NICE=19", "OTTD="+o.ottd, "CONNECT_WATCHDOG=45")
	if n == 1 {
		env = append(env, "SIZES="+strconv.Itoa(o.size), "MULTI_N=0")
	} else {
		// A blank SIZES (not empty: the script's default would apply)
		// runs only the joiners at once.
		env = append(env, "SIZES= ", "MULTI_SIZE="+strconv.Itoa(o.size), "MULTI_N="+strconv.Itoa(n))
	}
	cmd.Env = env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%v\n%s%s", err, out.String(), tail(errOut.String(), 2000))
	}
	m := rawRows.FindStringSubmatch(out.String())
	if m == nil {
		return sample{}, fmt.Errorf("the script printed no 'Raw rows:' line:\n%s%s", out.String(), tail(errOut.String(), 2000))
	}
	rows, err := readRows(m[1])
	if err != nil {
		return sample{}, err
	}
	if len(rows) != n {
		return sample{}, fmt.Errorf("%d result rows for %d joiners in %s", len(rows), n, m[1])
	}
	var s sample
	first, last := 1e18, 0.0
	for _, r := range rows {
		if r[16] == "connect-hang" {
			return sample{}, fmt.Errorf("%w (%s)", errConnectHang, m[1])
		}
		if r[16] != "ok" {
			return sample{}, fmt.Errorf("a joiner ended %q (%s)", r[16], m[1])
		}
		conn, joined := num(r[5]), num(r[8])
		first, last = min(first, conn), max(last, joined)
		s.bytes += num(r[9]) / float64(n)
		s.hostPeak = num(r[10]) / 1024
		s.joinPeak = max(s.joinPeak, num(r[11])/1024)
		s.hostCPU = num(r[12])
	}
	s.join = time.Duration((last - first) * float64(time.Second))
	s.worstTPS = -1 // pause_on_join: the server stops while anyone joins
	if phases, err := os.ReadFile(filepath.Join(filepath.Dir(m[1]), rows[0][0], "phases.txt")); err == nil &&
		regexp.MustCompile(`(?m)^paused=-?$`).Match(phases) {
		s.worstTPS = 0 // not paused; the script does not measure its tick rate
	}
	return s, nil
}

// readRows reads the script's tab-separated result rows (19 fields each).
func readRows(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if r := strings.Split(sc.Text(), "\t"); len(r) >= 19 {
			rows = append(rows, r)
		} else if sc.Text() != "" {
			return nil, fmt.Errorf("%s: a failed run: %q", path, sc.Text())
		}
	}
	return rows, sc.Err()
}

func num(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// lockhostJoin starts a host on w (its join point built, as on a host up
// for a while), runs n join tools at once at nice 19 and measures them.
func (b *bench) lockhostJoin(w world, n int) (sample, error) {
	b.port++
	status := fmt.Sprintf("127.0.0.1:%d", b.port) // startHost listens on the next port
	w.flags = append(slices.Clone(w.flags), "--http", status)
	h, err := b.startHost(w, false)
	if err != nil {
		return sample{}, err
	}
	defer h.stop()
	sentBefore, err := metric("http://"+status+"/metrics", "lockhost_bytes_sent_total")
	if err != nil {
		return sample{}, fmt.Errorf("host metrics: %w", err)
	}
	cpuBefore := h.cpu()
	samp := startTickSampler("http://" + status + "/metrics")
	var wg sync.WaitGroup
	res := make([]*joinResult, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = b.joinNice(h.addr, fmt.Sprintf("Peer%d", i))
		}()
	}
	wg.Wait()
	worst, held := samp.stop()
	if err := errors.Join(errs...); err != nil {
		return sample{}, err
	}
	s := sample{hostCPU: (h.cpu() - cpuBefore).Seconds(), hostPeak: float64(h.peakRSS()) / 1024, worstTPS: worst, held: held}
	sentAfter, err := metric("http://"+status+"/metrics", "lockhost_bytes_sent_total")
	if err != nil {
		return sample{}, fmt.Errorf("host metrics: %w", err)
	}
	s.bytes = (sentAfter - sentBefore) / float64(n)
	// All start together: the slowest connect-to-ready is when the last
	// is in, counted from the first connect.
	for _, r := range res {
		s.join = max(s.join, r.timings["total"])
		s.joinPeak = max(s.joinPeak, float64(r.rss)/1024)
	}
	return s, nil
}

// metric reads one unlabelled value from a Prometheus text page.
func metric(url, name string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("no %s in %s", name, url)
}

// tickSampler polls the host's own tick rate (lockhost_ticks_per_second:
// ticks over its last window of at least a second) and whether it held
// time for a lagging player, every 100 ms.
type tickSampler struct {
	url   string
	stopc chan struct{}
	done  chan struct{}
	start time.Time
	at    []time.Time
	tps   []float64
	held  bool
}

func startTickSampler(url string) *tickSampler {
	s := &tickSampler{url: url, stopc: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(s.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := metric(s.url, "lockhost_ticks_per_second"); err == nil {
				s.at, s.tps = append(s.at, time.Now()), append(s.tps, v)
			}
			if v, err := metric(s.url, "lockhost_session_holding"); err == nil && v > 0 {
				s.held = true
			}
			select {
			case <-s.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// stop ends sampling and returns the slowest rate the host measured over
// a window inside the joins (those read a second or more after they
// started; the last one when they took less), and whether time was held.
func (s *tickSampler) stop() (worst float64, held bool) {
	close(s.stopc)
	<-s.done
	worst = -1
	for i, at := range s.at {
		if at.Sub(s.start) >= time.Second || i == len(s.at)-1 {
			if worst < 0 || s.tps[i] < worst {
				worst = s.tps[i]
			}
		}
	}
	return max(worst, 0), s.held
}
