// Command bench-join measures joining through the real binaries on
// loopback: for worlds of about 8, 64 and 512 MiB of raw state it prints
// raw and compressed size, the host's join point build time, time to
// DefsOK, download, load, catch-up and connect-to-WorldReady, and the
// peak RSS of host and joiner; then sixteen joiners at once on the 64 MiB
// world against one join (host CPU seconds and peak RSS); then one join
// over an emulated internet link (toxiproxy: 100 ms round trip,
// 50 Mbit/s). It also measures, in the same run, raw loopback TCP
// throughput and decompression of the same compressed bytes, the two
// limits a join is judged against. It prints figures; it asserts nothing.
//
//	go run ./scripts/cmd/bench-join            # everything (several minutes)
//	go run ./scripts/cmd/bench-join -quick     # the 8 MiB world only, no link
//	go run ./scripts/cmd/bench-join -levels    # codecs and levels: size, build and inflate time
//	go run ./scripts/cmd/bench-join -openttd   # side by side with OpenTTD
//	go run ./scripts/cmd/bench-join -relay 64  # a relay host (the arbiter's upload) against a simulating host
//	go run ./scripts/cmd/bench-join -home-link # lockhost and OpenTTD over a 10 Mbit/s home link: join, drop, back in game
//	go run ./scripts/cmd/bench-join -zstd-levels 204 # zstd's levels and windows on a world's blobs
//
// None of these run in CI: they are benchmarks of minutes, run by hand.
// -home-link is described in homelink.go; it takes -world-mib,
// -openttd-size, -openttd-script, -host-bin, -join-bin and
// -lockhost-only as -openttd does, and its own -link-mbit, -link-rtt,
// -play, -down, -ottd-wait, -ottd-format and -compression. A quick check
// of it: -home-link -world-mib 8 -openttd-size 256 -play 3s -down 3s.
//
// -openttd runs OpenTTD's own loopback join benchmark,
// ../shared/bench/openttd-join-peer.sh from the repository root (-openttd-script
// or LOCKHOST_OPENTTD_PEER to point elsewhere; OTTD for the OpenTTD binary,
// default /usr/games/openttd; it needs the Debian packages openttd and
// openttd-opengfx, and is skipped with a message when the script or
// OpenTTD is missing), with savegame_format lzo, OpenTTD's fastest, and
// lockhost on the same raw size (OpenTTD's 4096² map, -openttd-size,
// against host serve --world-mib 204, -world-mib). Runs are interleaved:
// each of the -runs (3) runs one OpenTTD join, one lockhost join, then
// -joiners (4) at once on each side; every joiner on either side runs at
// nice 19, as it would on another machine. The script's first run
// generates and caches OpenTTD's save (minutes; it keeps it under its
// BASE). It prints min / median / max over the runs of: connect to in
// game (one joiner; with several, first connect to last in game), bytes
// on the wire per joiner, host CPU over the joins, peak memory of the
// host and of the largest joiner, and the host's slowest one-second tick
// rate during the joins (OpenTTD pauses while anyone joins), with
// lockhost's medians as ratios to OpenTTD's.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

// world is one world size to measure, as host serve flags.
type world struct {
	name  string
	flags []string
	cfg   colony.Config
}

func worlds() []world {
	mk := func(mib int) world {
		return world{name: fmt.Sprintf("%d MiB", mib),
			flags: []string{"--world-mib", strconv.Itoa(mib), "--seed", "1"},
			cfg:   colony.SizedConfig(int64(mib)<<20, 1)}
	}
	return []world{mk(8), mk(64), mk(512)}
}

func main() {
	quick := flag.Bool("quick", false, "only the smallest world, no emulated link")
	noLink := flag.Bool("no-link", false, "skip the emulated internet link")
	levels := flag.Bool("levels", false, "only compare codecs and levels on the 64 MiB world")
	ottd := flag.Bool("openttd", false, "only compare with OpenTTD side by side (see the package comment)")
	zstdMiB := flag.Int("zstd-levels", 0, "only compare zstd's levels and windows on the blobs of a world of this many MiB (as host serve --world-mib)")
	relayMiB := flag.Int("relay", 0, "only compare a join of a world of this many MiB through a relay host (the arbiter's upload) and a simulating host, -runs times each")
	script := os.Getenv(peerScriptEnv)
	if script == "" {
		script = defaultPeerScript
	}
	o := openttdOptions{ottd: os.Getenv("OTTD")}
	if o.ottd == "" {
		o.ottd = "/usr/games/openttd"
	}
	flag.StringVar(&o.script, "openttd-script", script, "with -openttd or -home-link: OpenTTD's join script (or set "+peerScriptEnv+")")
	flag.IntVar(&o.size, "openttd-size", 4096, "with -openttd or -home-link: OpenTTD's map edge")
	flag.IntVar(&o.worldMiB, "world-mib", 204, "with -openttd or -home-link: lockhost's world, of about OpenTTD's raw map size (4096² is 204 MiB)")
	flag.IntVar(&o.runs, "runs", 3, "with -openttd or -relay: runs of each side")
	flag.IntVar(&o.joiners, "joiners", 4, "with -openttd: joiners at once")
	flag.StringVar(&o.hostBin, "host-bin", "", "with -openttd or -home-link: a host binary to measure instead of building ./cmd/host (another build, for before and after)")
	flag.BoolVar(&o.lockhostOnly, "lockhost-only", false, "with -openttd or -home-link: measure lockhost alone (to compare two builds with -host-bin and -join-bin)")
	flag.StringVar(&o.joinBin, "join-bin", "", "with -openttd or -home-link: a join binary to measure instead of building ./cmd/join")
	home := flag.Bool("home-link", false, "only lockhost and OpenTTD over an emulated home link: a first join and getting back in game after a drop, each side (minutes; see homelink.go)")
	h := homeOptions{}
	flag.Float64Var(&h.link.mbit, "link-mbit", 10, "with -home-link: the link's bandwidth each way, Mbit/s")
	flag.DurationVar(&h.link.rtt, "link-rtt", 50*time.Millisecond, "with -home-link: the link's round trip")
	flag.DurationVar(&h.play, "play", 10*time.Second, "with -home-link: in game this long before the drop")
	flag.DurationVar(&h.down, "down", 5*time.Second, "with -home-link: the link down this long")
	flag.DurationVar(&h.ottdWait, "ottd-wait", 20*time.Second, "with -home-link: watch OpenTTD's client this long for a reconnect by itself before starting it again")
	flag.StringVar(&h.ottdFormat, "ottd-format", "lzma", "with -home-link: OpenTTD's savegame_format, the codec of its map transfer")
	flag.StringVar(&h.compression, "compression", "", "with -home-link: host serve --compression (default: the host's)")
	flag.Parse()
	var err error
	switch {
	case *levels:
		err = compareLevels(worlds()[1])
	case *ottd:
		err = runOpenTTD(o)
	case *home:
		h.openttdOptions = o
		err = withTools(o.hostBin, o.joinBin, func(b *bench) error { return b.homeLink(h) })
	case *zstdMiB > 0:
		err = compareZstd(*zstdMiB)
	case *relayMiB > 0:
		err = runRelay(*relayMiB, o.runs)
	default:
		err = run(*quick, *noLink)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-join:", err)
		os.Exit(1)
	}
}

// runOpenTTD builds the tools and runs the comparison with OpenTTD.
func runOpenTTD(o openttdOptions) error {
	return withTools(o.hostBin, o.joinBin, func(b *bench) error { return b.openttd(o) })
}

// runRelay builds the tools and compares relay and simulating joins.
func runRelay(mib, runs int) error {
	return withTools("", "", func(b *bench) error { return b.compareRelay(mib, runs) })
}

// withTools runs fn with a bench whose host and join tools are hostBin
// and joinBin, or built from ./cmd/host and ./cmd/join when empty, in a
// directory of its own removed after.
func withTools(hostBin, joinBin string, fn func(*bench) error) error {
	dir, err := os.MkdirTemp("", "benchjoin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Ports of its own, so two runs at once do not meet.
	b := &bench{dir: dir, port: 20000 + os.Getpid()%800*50, host: hostBin, joiner: joinBin}
	fmt.Printf("bench-join: GOMAXPROCS=%d NumCPU=%d %s/%s %s (a shared machine: compare within one run)\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if b.host == "" {
		if b.host, err = procstat.BuildTool(dir, "./cmd/host"); err != nil {
			return err
		}
	}
	if b.joiner == "" {
		if b.joiner, err = procstat.BuildTool(dir, "./cmd/join"); err != nil {
			return err
		}
	}
	return fn(b)
}

type bench struct {
	dir          string
	host, joiner string
	port         int
}

func run(quick, noLink bool) error {
	dir, err := os.MkdirTemp("", "benchjoin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{dir: dir, port: 30600}
	fmt.Printf("bench-join: GOMAXPROCS=%d NumCPU=%d %s/%s %s (a shared machine: compare within one run)\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if b.host, err = procstat.BuildTool(dir, "./cmd/host"); err != nil {
		return err
	}
	if b.joiner, err = procstat.BuildTool(dir, "./cmd/join"); err != nil {
		return err
	}
	tcp, err := loopbackThroughput(1 << 30)
	if err != nil {
		return err
	}
	fmt.Printf("limit: raw loopback TCP %.0f MiB/s (1 GiB, one connection)\n\n", tcp/(1<<20))

	ws := worlds()
	if quick {
		ws = ws[:1]
	}
	fmt.Printf("%-8s %9s %9s %9s %8s %8s %8s %8s %8s %9s %9s %9s %9s\n", "world", "raw", "gzip", "gunzip", "build", "DefsOK",
		"download", "load", "catch-up", "ready*", "total", "host RSS", "join RSS")
	for _, w := range ws {
		if err := b.single(w); err != nil {
			return fmt.Errorf("%s world: %w", w.name, err)
		}
	}
	fmt.Println("  gunzip: one core inflating the same world's compressed blobs, in this process")
	fmt.Println("  ready*: connect to WorldReady without the catch-up; build: the host's join point (off its tick)")
	if quick {
		return nil
	}
	fmt.Println()
	if err := b.many(ws[1], 16); err != nil {
		return fmt.Errorf("16 joiners: %w", err)
	}
	if noLink {
		return nil
	}
	fmt.Println()
	return b.link(ws[1])
}

// hostProc is a running host serve.
type hostProc struct {
	cmd  *exec.Cmd
	logs *logTail
	addr string
}

// startHost starts a host serving w and waits until it is listening and,
// unless lazy (--lazy-join-points: built when a joiner first asks), has its
// first join point built.
func (b *bench) startHost(w world, lazy bool) (*hostProc, error) {
	b.port++
	addr := fmt.Sprintf("127.0.0.1:%d", b.port)
	// At debug level: the host logs each join point it builds there, which
	// the bench waits for and counts.
	args := append([]string{"serve", "--listen", addr, "--log-format", "json", "--log-level", "debug", "--max-players", "32", "--conn-rate", "-1"}, w.flags...)
	if lazy {
		args = append(args, "--lazy-join-points")
	}
	cmd := exec.Command(b.host, args...)
	logs := &logTail{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &hostProc{cmd: cmd, logs: logs, addr: addr}
	deadline := time.Now().Add(3 * time.Minute)
	// Wait for the host to be listening and to have its first join point
	// built in the background, as a host that has been up a while has.
	for !logs.has(`"msg":"hosting"`) || (!lazy && !logs.has(`"msg":"join point built"`)) {
		if time.Now().After(deadline) {
			h.stop()
			return nil, fmt.Errorf("host did not start:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return h, nil
}

func (h *hostProc) stop() {
	h.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		<-done
	}
}

// joinResult is what one join tool run printed and cost.
type joinResult struct {
	timings map[string]time.Duration
	bytes   float64 // compressed
	raw     float64
	rss     int64 // KiB
	wall    time.Duration
}

var (
	readyLine = regexp.MustCompile(`^WorldReady .*`)
	field     = regexp.MustCompile(`(\w[\w-]*)=([0-9.]+(?:µs|ms|s|m|h|ns)[0-9.msµ]*)`)
	sizes     = regexp.MustCompile(`world=([0-9.]+)(B|KiB|MiB) compressed/([0-9.]+)(B|KiB|MiB) raw`)
)

func (b *bench) join(addr, name string, extra ...string) (*joinResult, error) {
	args := append([]string{addr, "--name", name, "--exit-after-ready", "-q", "--timeout", "10m"}, extra...)
	return b.runJoin(exec.Command(b.joiner, args...), name)
}

// joinNice is join with the join tool at nice 19, as another machine
// would be: it does not take the host's cores from it.
func (b *bench) joinNice(addr, name string) (*joinResult, error) {
	return b.runJoin(exec.Command("nice", "-n", "19", b.joiner, addr, "--name", name, "--exit-after-ready", "-q", "--timeout", "10m"), name)
}

func (b *bench) runJoin(cmd *exec.Cmd, name string) (*joinResult, error) {
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("join %s: %v\n%s%s", name, err, out.String(), errOut.String())
	}
	r := &joinResult{timings: map[string]time.Duration{}, wall: time.Since(start)}
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if readyLine.MatchString(l) {
			line = l
		}
	}
	if line == "" {
		return nil, fmt.Errorf("join %s printed no WorldReady line:\n%s", name, out.String())
	}
	for _, m := range field.FindAllStringSubmatch(line, -1) {
		if d, err := time.ParseDuration(m[2]); err == nil {
			r.timings[m[1]] = d
		}
	}
	if m := sizes.FindStringSubmatch(line); m != nil {
		r.bytes, r.raw = unit(m[1], m[2]), unit(m[3], m[4])
	}
	r.rss = maxRSS(cmd.ProcessState)
	return r, nil
}

func unit(v, u string) float64 {
	f, _ := strconv.ParseFloat(v, 64)
	switch u {
	case "KiB":
		return f * (1 << 10)
	case "MiB":
		return f * (1 << 20)
	}
	return f
}

func (b *bench) single(w world) error {
	h, err := b.startHost(w, false)
	if err != nil {
		return err
	}
	defer h.stop()
	r, err := b.join(h.addr, "Solo")
	if err != nil {
		return err
	}
	build := h.logs.duration("build_ms")
	gunzip, err := gunzipTime(w)
	if err != nil {
		return err
	}
	t := r.timings
	ready := t["total"] - t["catch-up"]
	fmt.Printf("%-8s %8.1fM %8.1fM %8.0fms %6.0fms %6.0fms %6.0fms %6.0fms %6.0fms %7.0fms %7.0fms %8.0fM %8.0fM\n",
		w.name, r.raw/(1<<20), r.bytes/(1<<20), procstat.Ms(gunzip), procstat.Ms(build),
		procstat.Ms(t["connect"]+t["handshake"]), procstat.Ms(t["download"]), procstat.Ms(t["load"]),
		procstat.Ms(t["catch-up"]), procstat.Ms(ready), procstat.Ms(t["total"]), float64(h.peakRSS())/1024, float64(r.rss)/1024)
	return nil
}

// many compares the host's CPU for one join with sixteen at once. Both
// hosts build their join point when the first joiner asks (lazily), so
// both pay for one compression; the CPU the host spends ticking anyway,
// measured while idle just before, is taken out.
func (b *bench) many(w world, n int) error {
	one, err := b.joinsCPU(w, 1, true)
	if err != nil {
		return err
	}
	many, err := b.joinsCPU(w, n, true)
	if err != nil {
		return err
	}
	ready, err := b.joinsCPU(w, n, false)
	if err != nil {
		return err
	}
	fmt.Printf("%d joiners at once on the %s world (lazy join points: each host compresses once):\n", n, w.name)
	for _, r := range []struct {
		name string
		c    cpuRun
	}{{"1 join", one}, {fmt.Sprintf("%d joins", n), many}} {
		fmt.Printf("  %-9s all WorldReady in %5.2f s; join points built %d; host CPU %.2f s, %.2f s less %.2f s of ticking; host RSS %4.0f MiB before, peak %4.0f MiB (+%.0f MiB)\n",
			r.name, r.c.wall.Seconds(), r.c.builds, r.c.cpu.Seconds(), r.c.cpu.Seconds()-r.c.idle.Seconds(), r.c.idle.Seconds(),
			float64(r.c.rssBefore)/1024, float64(r.c.rssPeak)/1024, float64(r.c.rssPeak-r.c.rssBefore)/1024)
	}
	fmt.Printf("  host CPU ratio %d joins / 1 join: %.2f (%.2f less ticking); compressed world %.1f MiB, so 3x is %.0f MiB\n", n,
		many.cpu.Seconds()/one.cpu.Seconds(), (many.cpu-many.idle).Seconds()/(one.cpu-one.idle).Seconds(),
		float64(many.compressed)/(1<<20), 3*float64(many.compressed)/(1<<20))
	fmt.Printf("  by default (join point kept ready): %d joins all WorldReady in %.2f s; host RSS %.0f MiB before, peak %.0f MiB (+%.0f MiB)\n",
		n, ready.wall.Seconds(), float64(ready.rssBefore)/1024, float64(ready.rssPeak)/1024, float64(ready.rssPeak-ready.rssBefore)/1024)
	return nil
}

type cpuRun struct {
	cpu, idle, wall    time.Duration
	rssBefore, rssPeak int64 // KiB
	compressed         float64
	builds             int
}

func (b *bench) joinsCPU(w world, n int, lazy bool) (r cpuRun, err error) {
	h, err := b.startHost(w, lazy)
	if err != nil {
		return r, err
	}
	defer h.stop()
	// The host's ticking CPU, over two seconds of nothing else.
	idleStart, idleCPU := time.Now(), h.cpu()
	time.Sleep(2 * time.Second)
	idleRate := float64(h.cpu()-idleCPU) / float64(time.Since(idleStart))
	r.rssBefore = h.peakRSS()
	before := h.cpu()
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.join(h.addr, fmt.Sprintf("Many%02d", i))
		}()
	}
	wg.Wait()
	r.wall = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	r.cpu = h.cpu() - before
	r.idle = time.Duration(idleRate * float64(r.wall))
	r.rssPeak = h.peakRSS()
	r.compressed = float64(h.logs.number("bytes"))
	r.builds = strings.Count(h.logs.String(), `"msg":"join point built"`)
	return r, nil
}

// link joins through toxiproxy emulating 100 ms round trip and 50 Mbit/s.
func (b *bench) link(w world) error {
	l := link{rtt: 100 * time.Millisecond, mbit: 50}
	tp, err := startToxiproxy(b.dir, "127.0.0.1:18474")
	if err != nil {
		return err
	}
	defer tp.stop()
	h, err := b.startHost(w, false)
	if err != nil {
		return err
	}
	defer h.stop()
	listen := fmt.Sprintf("127.0.0.1:%d", b.port+1000)
	if err := tp.proxy("lockhost", listen, h.addr, l); err != nil {
		return err
	}
	r, err := b.join(listen, "Remote")
	if err != nil {
		return err
	}
	dl := r.timings["download"]
	achieved := r.bytes * 8 / dl.Seconds()
	fmt.Printf("emulated link (toxiproxy: %s), %s world: %.1f MiB in %.2f s = %.1f Mbit/s, %.0f%% of the link; connect to WorldReady %.2f s (catch-up %.2f s)\n",
		l, w.name, r.bytes/(1<<20), dl.Seconds(), achieved/1e6, 100*achieved/(l.mbit*1e6), r.timings["total"].Seconds(), r.timings["catch-up"].Seconds())
	return nil
}

// gunzipTime builds the same world in this process, compresses it as the
// host does, and times one core inflating every blob.
func gunzipTime(w world) (time.Duration, error) {
	content, _, err := colony.DefaultContent()
	if err != nil {
		return 0, err
	}
	sim, err := colony.New(content, w.cfg)
	if err != nil {
		return 0, err
	}
	p, err := snapshot.Build(sim, snapshot.BuildOptions{Compression: snapshot.Compression{Codec: snapshot.Zstd}})
	if err != nil {
		return 0, err
	}
	sim = nil
	runtime.GC()
	start := time.Now()
	blobs := []snapshot.Blob{p.World}
	for _, m := range p.Maps {
		blobs = append(blobs, m.Blob)
	}
	for _, bl := range blobs {
		if _, err := snapshot.Decompress(bl, 1<<31); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// compareLevels builds the world's join point with each codec at several
// levels on one core and inflates it on one core, to choose the codec
// and its default level (snapshot.DefaultLevel, DefaultZstdLevel). Every
// figure is from this run; ratios to gzip at its default level are what
// carry over to another machine.
func compareLevels(w world) error {
	content, _, err := colony.DefaultContent()
	if err != nil {
		return err
	}
	sim, err := colony.New(content, w.cfg)
	if err != nil {
		return err
	}
	fmt.Printf("codecs and levels on the %s world, one core (build includes encoding and hashing):\n", w.name)
	var base struct{ size, build, inflate float64 }
	for _, c := range []snapshot.Compression{
		{Codec: snapshot.Gzip, Level: snapshot.DefaultLevel}, {Codec: snapshot.Gzip, Level: 1}, {Codec: snapshot.Gzip, Level: 6},
		{Codec: snapshot.Zstd, Level: 1}, {Codec: snapshot.Zstd, Level: 3}, {Codec: snapshot.Zstd, Level: 6}, {Codec: snapshot.Zstd, Level: 10},
	} {
		// The fastest of three runs each: the machine is shared.
		var p *snapshot.Point
		build, inflate := time.Duration(1<<62), time.Duration(1<<62)
		for range 3 {
			runtime.GC()
			start := time.Now()
			if p, err = snapshot.Build(sim, snapshot.BuildOptions{Compression: c, Workers: 1}); err != nil {
				return err
			}
			build = min(build, time.Since(start))
		}
		blobs := []snapshot.Blob{p.World}
		for _, m := range p.Maps {
			blobs = append(blobs, m.Blob)
		}
		for range 3 {
			runtime.GC()
			start := time.Now()
			for _, bl := range blobs {
				if _, err := snapshot.Decompress(bl, 1<<31); err != nil {
					return err
				}
			}
			inflate = min(inflate, time.Since(start))
		}
		size := float64(p.CompressedSize())
		if base.size == 0 {
			base.size, base.build, base.inflate = size, build.Seconds(), inflate.Seconds()
		}
		fmt.Printf("  %-7s %6.1f MiB of %6.1f MiB (%4.1f%%, %4.2fx gzip:%d)  build %6.0f ms (%4.2fx)  inflate %5.0f ms (%4.2fx, %4.0f MiB/s raw)\n",
			c, size/(1<<20), float64(p.RawSize())/(1<<20), 100*size/float64(p.RawSize()), size/base.size, snapshot.DefaultLevel,
			procstat.Ms(build), build.Seconds()/base.build, procstat.Ms(inflate), inflate.Seconds()/base.inflate,
			float64(p.RawSize())/(1<<20)/inflate.Seconds())
	}
	return nil
}

// loopbackThroughput sends n bytes over one loopback TCP connection.
func loopbackThroughput(n int64) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 256<<10)
		for sent := int64(0); sent < n; sent += int64(len(buf)) {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	start := time.Now()
	got, err := io.Copy(io.Discard, c)
	if err != nil {
		return 0, err
	}
	return float64(got) / time.Since(start).Seconds(), nil
}

func (h *hostProc) cpu() time.Duration { return procstat.CPU(h.cmd.Process.Pid) }

func (h *hostProc) peakRSS() int64 { return procstat.PeakRSS(h.cmd.Process.Pid) }

// logTail keeps a process's JSON log lines.
type logTail struct {
	syncbuf.Buffer
}

func (l *logTail) has(s string) bool { return strings.Contains(l.String(), s) }

// number returns the last value of a numeric field in the log.
func (l *logTail) number(key string) float64 {
	var v float64
	for _, line := range strings.Split(l.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if f, ok := m[key].(float64); ok {
			v = f
		}
	}
	return v
}

// duration returns the last value of a *_ms field in the log.
func (l *logTail) duration(key string) time.Duration {
	return time.Duration(l.number(key) * float64(time.Millisecond))
}
