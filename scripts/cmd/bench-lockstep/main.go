// Command bench-lockstep measures the lockstep engine: a host process runs
// the default world at 1x while N light bots (they take part in lockstep
// and acknowledge ticks but do not simulate, so the figures are the host's
// and not N simulations sharing two cores) send commands as fast as asked.
// It prints commands per second achieved, the latency from a command's
// submission to its arrival at every client (p50, p99), the tick interval
// seen by a client (jitter), the host's CPU, and the catch-up rate of the
// default world. It prints figures; it asserts nothing.
//
//	go run ./scripts/cmd/bench-lockstep [-bots 32] [-rate 10000] [-seconds 10]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

func main() {
	bots := flag.Int("bots", 32, "light bot clients")
	rate := flag.Float64("rate", 10000, "commands per second, all bots together")
	seconds := flag.Float64("seconds", 10, "how long the bots send")
	flag.Parse()
	if err := run(*bots, *rate, time.Duration(*seconds*float64(time.Second))); err != nil {
		fmt.Fprintln(os.Stderr, "bench-lockstep:", err)
		os.Exit(1)
	}
}

// bot is one light client and what it saw.
type bot struct {
	sess   *join.Session
	id     int32
	sent   []time.Time           // when this bot sent its k-th command
	got    map[int32][]time.Time // by sender: when its k-th command arrived here
	errRun error
}

func run(nbots int, rate float64, dur time.Duration) error {
	fmt.Printf("bench-lockstep: GOMAXPROCS=%d NumCPU=%d (host in its own process; %d light bots in this one)\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), nbots)
	if err := catchUp(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "benchlockstep-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hostBin, err := procstat.BuildTool(dir, "./cmd/host")
	if err != nil {
		return err
	}
	addr := "127.0.0.1:30700"
	perBot := rate / float64(nbots)
	cmd, hostErr, err := startHost(hostBin, addr, nbots, perBot)
	if err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()

	content, set, err := colony.DefaultContent()
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bots, err := joinBots(ctx, addr, nbots, content, set, quiet, hostErr)
	if err != nil {
		return err
	}
	watching, watcherTicks, err := joinWatcher(ctx, addr, content, set, quiet)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, b := range append(bots, watching) {
		wg.Add(1)
		go func() { defer wg.Done(); b.errRun = b.sess.Run(ctx) }()
	}
	time.Sleep(500 * time.Millisecond) // settle
	for len(watcherTicks) > 0 {
		<-watcherTicks
	}

	cpu0 := procstat.CPU(cmd.Process.Pid)
	start := time.Now()
	sendAll(bots, start, dur, perBot)
	sendDur := time.Since(start)
	time.Sleep(500 * time.Millisecond) // let the last commands arrive
	cpu := procstat.CPU(cmd.Process.Pid) - cpu0
	wall := time.Since(start)
	cancel()
	wg.Wait()
	close(watcherTicks)

	lat, sent, complete := latencies(bots)
	ivs := intervals(watcherTicks)
	fmt.Printf("commands: %d sent by %d bots in %.1f s = %.0f/s asked %.0f/s; %d (%.1f%%) arrived at every bot\n",
		sent, nbots, sendDur.Seconds(), float64(sent)/sendDur.Seconds(), rate, complete, 100*float64(complete)/float64(max(1, sent)))
	fmt.Printf("latency, submit to arrival at all %d bots: p50 %.1f ms  p99 %.1f ms  max %.1f ms  (one tick = %.1f ms)\n",
		nbots, procstat.Ms(procstat.Percentile(lat, 0.50)), procstat.Ms(procstat.Percentile(lat, 0.99)),
		procstat.Ms(procstat.Percentile(lat, 1)), 1000.0/60)
	fmt.Printf("tick interval seen by a simulating client: %s\n", stats(ivs))
	fmt.Printf("host CPU: %.2f s over %.1f s (%.0f%% of one core)\n", cpu.Seconds(), wall.Seconds(), 100*cpu.Seconds()/wall.Seconds())
	return sessionError(bots, watching)
}

// startHost starts the host program hostBin serving on addr, with room
// for nbots players and a few more and a command rate well above perBot
// a second; the host's standard error goes to the buffer returned.
func startHost(hostBin, addr string, nbots int, perBot float64) (*exec.Cmd, *syncbuf.Buffer, error) {
	cmd := exec.Command(hostBin, "serve", "--listen", addr, "--max-players", strconv.Itoa(nbots+8), "--conn-rate", "-1",
		"--command-rate", strconv.Itoa(int(perBot*4)+100), "--log-level", "warn")
	hostErr := &syncbuf.Buffer{} // written by the host while read here
	cmd.Stderr = hostErr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return cmd, hostErr, nil
}

// joinWatcher joins the client whose tick arrivals are timed, a bot that
// simulates for real: the time of each of its steps goes to the channel
// returned, unless it is full.
func joinWatcher(ctx context.Context, addr string, content *colony.Content, set *defs.Set, quiet *slog.Logger) (*bot, chan time.Time, error) {
	watcherTicks := make(chan time.Time, 1<<16)
	watcher, err := join.Join(ctx, join.Config{Addr: addr, Name: "Watcher", Databases: set.Summary(),
		MapLoader: colony.MapLoader(content), Logger: quiet,
		OnStep: func(lockstep.Sim) {
			select {
			case watcherTicks <- time.Now():
			default:
			}
		}})
	if err != nil {
		return nil, nil, err
	}
	return &bot{sess: watcher}, watcherTicks, nil
}

// joinBots joins nbots light bots to the host at addr, each noting when
// every command arrived; the host may still be starting.
func joinBots(ctx context.Context, addr string, nbots int, content *colony.Content, set *defs.Set, quiet *slog.Logger, hostErr *syncbuf.Buffer) ([]*bot, error) {
	bots := make([]*bot, nbots)
	for i := range bots {
		b := &bot{got: map[int32][]time.Time{}}
		bots[i] = b
		cfg := join.Config{Addr: addr, Name: fmt.Sprintf("Bot%02d", i), Databases: set.Summary(),
			MapLoader: colony.MapLoader(content), Logger: quiet, Light: true,
			OnApply: func(c lockstep.Command) {
				b.got[c.Player] = append(b.got[c.Player], time.Now())
			}}
		var s *join.Session
		var err error
		for try := 0; ; try++ { // the host may still be starting
			s, err = join.Join(ctx, cfg)
			if err == nil || try == 50 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			return nil, fmt.Errorf("bot %d: %v\n%s", i, err, hostErr.String())
		}
		b.sess, b.id = s, s.Info().PlayerID
	}
	return bots, nil
}

// sendAll has every bot send commands at perBot a second from start for
// dur.
func sendAll(bots []*bot, start time.Time, dur time.Duration, perBot float64) {
	speed := lockstep.SetSpeed(1) // always valid, changes nothing: a pure engine round trip
	var sendWG sync.WaitGroup
	for _, b := range bots {
		sendWG.Add(1)
		go func() {
			defer sendWG.Done()
			interval := time.Duration(float64(time.Second) / perBot)
			next := time.Now()
			for time.Since(start) < dur {
				// Send what is due, then sleep: a steady rate without one
				// timer per command.
				for !next.After(time.Now()) {
					b.sent = append(b.sent, time.Now())
					if b.sess.Send(speed.MapID, speed.Kind, speed.Payload) != nil {
						return
					}
					next = next.Add(interval)
				}
				time.Sleep(time.Until(next))
			}
		}()
	}
	sendWG.Wait()
}

// latencies are the times from each command's sending to its arrival at
// the last of the bots, in order, of the complete of the sent commands
// that arrived everywhere.
func latencies(bots []*bot) (lat []time.Duration, sent, complete int) {
	for _, s := range bots {
		sent += len(s.sent)
	next:
		for k, t0 := range s.sent {
			var last time.Time
			for _, r := range bots {
				arr := r.got[s.id]
				if k >= len(arr) {
					continue next // never arrived everywhere
				}
				if arr[k].After(last) {
					last = arr[k]
				}
			}
			complete++
			lat = append(lat, last.Sub(t0))
		}
	}
	slices.Sort(lat)
	return lat, sent, complete
}

// intervals are the gaps in milliseconds between the ticks a simulating
// client stepped.
func intervals(ticks <-chan time.Time) []float64 {
	var ivs []float64
	var prev time.Time
	for t := range ticks {
		if !prev.IsZero() {
			ivs = append(ivs, float64(t.Sub(prev))/float64(time.Millisecond))
		}
		prev = t
	}
	return ivs
}

// sessionError reports the first session, of the bots and then the
// watcher, that ended with an error of its own during the run. A session
// ended by the end of the run (its context cancelled) returns nil or
// context.Canceled, and is not reported.
func sessionError(bots []*bot, watcher *bot) error {
	failed := func(b *bot) bool { return b.errRun != nil && !errors.Is(b.errRun, context.Canceled) }
	for i, b := range bots {
		if failed(b) {
			return fmt.Errorf("bot %d: %w", i, b.errRun)
		}
	}
	if failed(watcher) {
		return fmt.Errorf("watcher: %w", watcher.errRun)
	}
	return nil
}

func stats(v []float64) string {
	if len(v) == 0 {
		return "no ticks"
	}
	slices.Sort(v)
	var sum, sq float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	return fmt.Sprintf("%d intervals, mean %.2f ms, std dev %.2f ms, p99 %.2f ms, max %.2f ms",
		len(v), mean, math.Sqrt(sq/float64(len(v))), procstat.Percentile(v, 0.99), v[len(v)-1])
}

// catchUp measures how fast the default world simulates from a join point
// taken 600 ticks into a game.
func catchUp() error {
	content, _, err := colony.DefaultContent()
	if err != nil {
		return err
	}
	w, err := colony.New(content, colony.Config{Seed: 1})
	if err != nil {
		return err
	}
	for i := 0; i < 600; i++ {
		w.Step()
	}
	raw, err := snapshot.Cut(w)
	if err != nil {
		return err
	}
	sim, err := colony.Loader(content)(raw.World, raw.Maps)
	if err != nil {
		return err
	}
	f, err := lockstep.NewFollower(sim, nil)
	if err != nil {
		return err
	}
	const n = 6000
	f.Grant(sim.Tick() + n)
	start := time.Now()
	if _, err := f.Run(n); err != nil {
		return err
	}
	rate := n / time.Since(start).Seconds()
	fmt.Printf("catch-up of the default world: %d ticks in %.0f ms = %.0f ticks/s, %.0fx real time at 60 ticks/s\n",
		n, procstat.Ms(time.Since(start)), rate, rate/60)
	return nil
}
