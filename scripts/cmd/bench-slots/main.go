// Command bench-slots measures whether slow readers can keep an honest
// joiner out of the world, through the real binaries on loopback. A host
// serves a generated world (-world-mib, 64 MiB of raw state by default)
// with --max-upload-slots 2 --max-upload-rate 8Mbit; the command times an
// honest join (the join tool, connect to WorldReady) alone, then while 2
// and then 10 slow readers hold or wait for the upload slots: raw clients,
// each from its own loopback address, that take every world chunk at once
// but acknowledge only -slow-ack bytes a second (above the host's minimum
// download rate), connected -settle before the honest joiner comes. It
// prints each time and its ratio to the time alone.
//
// Then, on a host of a smaller world (-small-world-mib, so that the case
// ends in minutes), a slow but honest joiner, the join tool through a
// relay that passes it -slow-link bytes a second, joins alone and then
// while 2 slow readers run (connected -slow-settle before it): it must
// still reach WorldReady. Every join gives up after -give-up. It prints
// figures; it asserts nothing.
//
//	go run ./scripts/cmd/bench-slots [-world-mib 64] [-give-up 2m] [-host-bin OTHER-BUILD]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// opts are the command's flags.
type opts struct {
	worldMiB, smallMiB int
	rate               string
	slots              int
	slowAck, slowLink  int
	settle, giveUp     time.Duration
	slowSettle         time.Duration
	shareWindow        string
	readers            []int
	hostBin            string
}

func main() {
	var o opts
	readers := flag.String("readers", "2,10", "the numbers of slow readers to time the honest join with, comma-separated")
	flag.IntVar(&o.worldMiB, "world-mib", 64, "the world's raw size, as host serve --world-mib (0: skip the honest joins)")
	flag.IntVar(&o.smallMiB, "small-world-mib", 4, "the world's raw size for the slow honest joiner's case (0: skip that case)")
	flag.StringVar(&o.rate, "rate", "8Mbit", "host serve --max-upload-rate")
	flag.IntVar(&o.slots, "slots", 2, "host serve --max-upload-slots")
	flag.IntVar(&o.slowAck, "slow-ack", 40<<10, "bytes a second a slow reader acknowledges")
	flag.IntVar(&o.slowLink, "slow-link", 20<<10, "bytes a second the slow honest joiner's link passes from the host")
	flag.DurationVar(&o.settle, "settle", 20*time.Second, "how long the slow readers run before the honest joiner comes")
	flag.DurationVar(&o.slowSettle, "slow-settle", 2*time.Second, "how long the slow readers run before the slow honest joiner comes (they must not have finished the smaller world)")
	flag.StringVar(&o.shareWindow, "share-window", "", "host serve --slot-share-window (empty: the host's default)")
	flag.StringVar(&o.hostBin, "host-bin", "", "a host binary to measure instead of building ./cmd/host (another build, for before and after)")
	flag.DurationVar(&o.giveUp, "give-up", 2*time.Minute, "how long a join may take before it counts as failed")
	flag.Parse()
	for _, f := range strings.Split(*readers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "bench-slots: -readers: %q is not a count\n", f)
			os.Exit(2)
		}
		o.readers = append(o.readers, n)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-slots:", err)
		os.Exit(1)
	}
}

func run(o opts) error {
	dir, err := os.MkdirTemp("", "benchslots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{o: o, dir: dir}
	if b.host, b.joiner, err = procstat.HostAndJoin(dir, o.hostBin); err != nil {
		return err
	}
	bundle, err := gamecontent.Load(nil, "")
	if err != nil {
		return err
	}
	for _, d := range bundle.Summary() {
		b.dbs = append(b.dbs, wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash})
	}
	window := ""
	if o.shareWindow != "" {
		window = " --slot-share-window " + o.shareWindow
	}
	fmt.Printf("bench-slots: GOMAXPROCS=%d NumCPU=%d; host serve --max-upload-slots %d --max-upload-rate %s%s; slow readers acknowledge %d B/s, the honest joiner comes %v after them; joins give up after %v\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), o.slots, o.rate, window, o.slowAck, o.settle, o.giveUp)

	if o.worldMiB > 0 {
		if err := b.bigWorld(); err != nil {
			return err
		}
	}
	if o.smallMiB <= 0 {
		return nil
	}
	h, err := b.serve(o.smallMiB)
	if err != nil {
		return err
	}
	defer h.stop()
	fmt.Printf("\n%d MiB world, %.2f MB compressed; the slow honest joiner's link passes %d B/s\n", o.smallMiB, h.world/1e6, o.slowLink)
	slow := func() (time.Duration, error) {
		relay, err := newSlowLink(h.game, o.slowLink)
		if err != nil {
			return 0, err
		}
		defer relay.Close()
		return b.join(relay.Addr(), "SlowHonest")
	}
	var slowAlone time.Duration
	for _, n := range []int{0, 2} {
		label := fmt.Sprintf("slow honest join, %d slow readers", n)
		d, err := b.withReaders(h, n, o.slowSettle, slow)
		if err != nil {
			fmt.Printf("%-34s   failed: %v\n", label, err)
			continue
		}
		if n == 0 {
			slowAlone = d
			fmt.Printf("%-34s %8.1f s\n", label, d.Seconds())
			continue
		}
		fmt.Printf("%-34s %8.1f s  %5.2fx alone\n", label, d.Seconds(), d.Seconds()/slowAlone.Seconds())
	}
	return nil
}

// bigWorld times the honest join alone and with each number of slow
// readers, on a host of the -world-mib world.
func (b *bench) bigWorld() error {
	o := b.o
	h, err := b.serve(o.worldMiB)
	if err != nil {
		return err
	}
	defer h.stop()
	fmt.Printf("\n%d MiB world, %.2f MB compressed\n", o.worldMiB, h.world/1e6)
	alone, err := b.join(h.game, "Alone")
	if err != nil {
		return fmt.Errorf("the honest join alone: %w", err)
	}
	fmt.Printf("%-34s %8.1f s\n", "honest join alone", alone.Seconds())
	for _, n := range o.readers {
		d, err := b.withReaders(h, n, o.settle, func() (time.Duration, error) { return b.join(h.game, fmt.Sprintf("Honest%d", n)) })
		label := fmt.Sprintf("honest join, %d slow readers", n)
		if err != nil {
			fmt.Printf("%-34s   failed: %v\n", label, err)
			continue
		}
		fmt.Printf("%-34s %8.1f s  %5.2fx alone\n", label, d.Seconds(), d.Seconds()/alone.Seconds())
	}
	return nil
}

// bench is one run's tools and settings.
type bench struct {
	o            opts
	dir          string
	host, joiner string
	dbs          []wire.DefSummary
	hosts        int
}

// served is one host process.
type served struct {
	game, web string
	world     float64 // the join point's compressed size
	stop      func()
}

// serve starts a host of a mib MiB world and waits for its first join
// point.
func (b *bench) serve(mib int) (*served, error) {
	b.hosts++
	game, web := procstat.MustFreeAddr(), procstat.MustFreeAddr()
	logs := &syncbuf.Buffer{}
	args := []string{"serve", "--listen", game, "--http", web, "--world-mib", strconv.Itoa(mib), "--seed", "1",
		"--max-upload-slots", strconv.Itoa(b.o.slots), "--max-upload-rate", b.o.rate, "--max-players", "32",
		"--log-format", "json", "--log-level", "debug", "--conn-rate", "-1", // debug: the join point built line
		"--data-dir", filepath.Join(b.dir, fmt.Sprintf("data%d", b.hosts))}
	if b.o.shareWindow != "" {
		args = append(args, "--slot-share-window", b.o.shareWindow)
	}
	cmd := exec.Command(b.host, args...)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &served{game: game, web: web, stop: func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if m := built.FindStringSubmatch(logs.String()); m != nil {
			h.world, _ = strconv.ParseFloat(m[1], 64)
			return h, nil
		}
		if time.Now().After(deadline) {
			h.stop()
			return nil, fmt.Errorf("no join point built:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var built = regexp.MustCompile(`"msg":"join point built".*?"bytes":([0-9]+)`)

// join runs the join tool to WorldReady and returns its time.
func (b *bench) join(addr, name string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.o.giveUp+10*time.Second)
	defer cancel()
	// The terrain is always downloaded: made locally it would spare the
	// slow link a part of the world that the handshake's round trip
	// through the throttling relay decides, run by run.
	cmd := exec.CommandContext(ctx, b.joiner, addr, "--name", name, "--exit-after-ready", "-q", "--no-input",
		"--timeout", b.o.giveUp.String(), "--no-reconnect", "--make-terrain", "never")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("join %s after %.1f s: %v: %s", name, time.Since(start).Seconds(), err, lastLine(out.String()))
	}
	return time.Since(start), nil
}

// withReaders runs n slow readers for the settle time and then fn, and
// stops them; it prints what they did and waits for the host's uplink to
// empty.
func (b *bench) withReaders(h *served, n int, settle time.Duration, fn func() (time.Duration, error)) (time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	rs := make([]*reader, n)
	for i := range rs {
		rs[i] = &reader{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i].run(ctx, fmt.Sprintf("127.0.0.%d", 10+i), h.game, fmt.Sprintf("Slow%d", i), b.dbs, b.o.slowAck)
		}()
		time.Sleep(100 * time.Millisecond)
	}
	if n > 0 {
		time.Sleep(settle)
	}
	d, err := fn()
	cancel()
	wg.Wait()
	if n > 0 {
		var acked uint64
		var dropped []string
		for i, r := range rs {
			acked += r.acked.Load()
			if why := r.why(); why != "" {
				dropped = append(dropped, fmt.Sprintf("Slow%d: %s", i, why))
			}
		}
		fmt.Printf("%-34s the %d slow readers acknowledged %.2f MB in all", "", n, float64(acked)/1e6)
		if len(dropped) > 0 {
			fmt.Printf("; dropped by the host: %s", strings.Join(dropped, "; "))
		}
		fmt.Println()
	}
	waitIdle(h.web)
	return d, err
}

// waitIdle waits, up to a minute, for the host's uplink to send and queue
// nothing, so the next case starts clean.
func waitIdle(web string) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var o struct {
			Uploads struct {
				Sending []json.RawMessage `json:"sending"`
				Waiting []string          `json:"waiting"`
			} `json:"uploads"`
		}
		resp, err := http.Get("http://" + web + "/api/overview")
		if err != nil {
			continue
		}
		err = json.NewDecoder(resp.Body).Decode(&o)
		resp.Body.Close()
		if err == nil && len(o.Uploads.Sending) == 0 && len(o.Uploads.Waiting) == 0 {
			return
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndex(s, "\n")+1:]
}
