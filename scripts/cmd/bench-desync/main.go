// Command benchdesync measures desync detection and repair in process over
// loopback TCP, at the real tick rate: a host with the colony world (the
// default world unless -world-mib), a watcher (Bob) and a player (Alice)
// whose map is corrupted on purpose, one map at a time at random ticks,
// each after the previous repair. It prints, per desync, the detection
// latency in ticks (corruption to the checkpoint that found it) and in
// wall time, the repair time (detection to matching hashes), the repair's
// bytes against the whole world's, and Bob's longest gap between two
// ticks meanwhile; then the host's cost of its own checkpoints and a
// client's cost of hashing. It prints figures; it asserts nothing.
// Run: scripts/bench-desync
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/procstat"
)

func main() {
	desyncs := flag.Int("desyncs", 10, "desyncs to cause, one after another")
	worldMiB := flag.Int("world-mib", 0, "generate a world of about this many MiB (0: the default world)")
	every := flag.Int("hash-every", lockstep.DefaultHashEvery, "ticks between hash checks")
	flag.Parse()
	if err := run(*desyncs, *worldMiB, *every); err != nil {
		fmt.Fprintln(os.Stderr, "benchdesync:", err)
		os.Exit(1)
	}
}

// events is what the watcher and the player saw.
type events struct {
	mu       sync.Mutex
	detected map[uint64]time.Time // checkpoint tick -> when Bob heard
	repaired map[uint64]join.DesyncEvent
	stepAt   []time.Time
}

func run(n, worldMiB, every int) error {
	bundle, err := gamecontent.Load(nil, "")
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	world, srv, err := newHost(bundle, quiet, n, worldMiB, every)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	ev := &events{detected: map[uint64]time.Time{}, repaired: map[uint64]join.DesyncEvent{}}
	base := join.Config{Addr: ln.Addr().String(), Databases: bundle.Summary(), MapLoader: colony.MapLoader(bundle.Content), Logger: quiet}
	bobCfg := watcher(base, ev)
	bob, err := join.Join(ctx, bobCfg)
	if err != nil {
		return fmt.Errorf("join as Bob: %w", err)
	}
	go bob.Run(ctx)

	c := &corrupter{}
	c.at.Store(math.MaxUint64)
	aliceCfg := base
	aliceCfg.Name = "Alice"
	aliceCfg.OnStep = c.onStep
	alice, err := join.Join(ctx, aliceCfg)
	if err != nil {
		return fmt.Errorf("join as Alice: %w", err)
	}
	go alice.Run(ctx)
	b := &bench{srv: srv, ev: ev, c: c, maps: len(world.MapIDs()), every: every, worldBytes: alice.Timings().Bytes}
	printHeader(b.maps, alice.Timings(), every)
	// Bob's ticks with no desync at all, for comparison.
	time.Sleep(3 * time.Second)
	quietGap := maxGap(ev, time.Now().Add(-2*time.Second), time.Now())
	for i := 0; i < n; i++ {
		if err := b.desync(i); err != nil {
			return err
		}
	}
	printSummary(srv.Overview().Stats, every, b.lat, b.detectMs, b.repairMs, b.gaps, quietGap)
	// The world is the host's: stop the session before touching it here.
	alice.Close()
	bob.Close()
	cancel()
	<-served
	printHashCosts(world)
	return nil
}

// corrupter is Alice's part: she corrupts map target once per arming,
// the given number of ticks after the arming.
type corrupter struct {
	at            atomic.Uint64 // the tick to corrupt at, MaxUint64 when not armed
	arm           atomic.Uint64 // ticks from the next step to the corruption, 0 when not armed
	target        atomic.Int32
	corruptedAt   atomic.Int64 // unix nanoseconds
	corruptedTick atomic.Uint64
}

// onStep is Alice's OnStep: it arms and corrupts.
func (c *corrupter) onStep(sim lockstep.Sim) {
	if off := c.arm.Swap(0); off > 0 {
		c.at.Store(sim.Tick() + off)
	}
	if sim.Tick() >= c.at.Load() {
		c.at.Store(math.MaxUint64)
		_ = sim.(*colony.World).Perturb(c.target.Load())
		c.corruptedTick.Store(sim.Tick())
		c.corruptedAt.Store(time.Now().UnixNano())
	}
}

// bench is the desyncs' run: the host, what Bob saw, Alice's corrupter,
// and the figures of each desync so far.
type bench struct {
	srv        *host.Server
	ev         *events
	c          *corrupter
	maps       int
	every      int
	worldBytes uint64

	lat                      []float64
	detectMs, repairMs, gaps []float64
}

// desync causes desync i on a random map, waits for its repair, prints
// its row of the table and keeps its figures.
func (b *bench) desync(i int) error {
	ev, c := b.ev, b.c
	before := b.srv.Overview().Stats
	m := int32(rand.IntN(b.maps))
	c.target.Store(m)
	c.arm.Store(uint64(1 + rand.IntN(3*b.every))) // anywhere in the next three intervals
	rep, found := waitRepaired(ev, &c.corruptedTick, time.Now().Add(30*time.Second))
	if !found {
		return fmt.Errorf("desync %d was not repaired within 30 s", i+1)
	}
	ct := c.corruptedTick.Load()
	ev.mu.Lock()
	detAt := ev.detected[rep.Tick]
	ev.mu.Unlock()
	det := detAt.Sub(time.Unix(0, c.corruptedAt.Load()))
	repDone := detAt.Add(rep.Repair)
	gap := maxGap(ev, time.Unix(0, c.corruptedAt.Load()), repDone.Add(100*time.Millisecond))
	after := b.srv.Overview().Stats
	bytes := after.ResyncBytes - before.ResyncBytes
	fmt.Printf("%3d %4d %8d %7d tk %10.1f %10d %10d %8.1f%% %9s\n", i+1, m, ct, rep.Tick-ct,
		procstat.Ms(det), rep.Repair.Milliseconds(), bytes, 100*float64(bytes)/float64(b.worldBytes), gap.Round(time.Millisecond))
	b.lat = append(b.lat, float64(rep.Tick-ct))
	b.detectMs = append(b.detectMs, procstat.Ms(det))
	b.repairMs = append(b.repairMs, float64(rep.Repair.Milliseconds()))
	b.gaps = append(b.gaps, procstat.Ms(gap))
	c.corruptedTick.Store(0)
	time.Sleep(300 * time.Millisecond)
	return nil
}

// printHashCosts times a checkpoint of every map of world, on one
// goroutine and on all, and a clone.
func printHashCosts(world *colony.World) {
	const reps = 10
	timeIt := func(fn func()) float64 {
		start := time.Now()
		for i := 0; i < reps; i++ {
			fn()
		}
		return procstat.Ms(time.Since(start)) / reps
	}
	one := lockstep.Hasher{}
	par := lockstep.Hasher{Workers: runtime.GOMAXPROCS(0)}
	fmt.Printf("a checkpoint of every map, parts included: %.3f ms on one goroutine, %.3f ms on %d; a clone costs %.3f ms\n",
		timeIt(func() { one.Take(world) }), timeIt(func() { par.Take(world) }), runtime.GOMAXPROCS(0),
		timeIt(func() { world.Clone() }))
}

// printHeader describes the world the joiners downloaded (t) and heads
// the table of desyncs.
func printHeader(maps int, t join.Timings, every int) {
	fmt.Printf("world: %d maps, %.1f KiB compressed (%.1f KiB raw); hash every %d ticks at 60 ticks/s; GOMAXPROCS=%d\n",
		maps, float64(t.Bytes)/1024, float64(t.RawBytes)/1024, every, runtime.GOMAXPROCS(0))
	fmt.Printf("\n%3s %4s %8s %10s %10s %10s %10s %9s %9s\n", "#", "map", "at tick", "latency", "detect ms", "repair ms", "bytes", "of world", "Bob gap")
}

// newHost generates the world (the default one, or one of about worldMiB
// MiB) and a host of it that checks hashes every `every` ticks and allows
// n desyncs and more.
func newHost(bundle *gamecontent.Bundle, log *slog.Logger, n, worldMiB, every int) (*colony.World, *host.Server, error) {
	wcfg := colony.Config{Seed: 1}
	if worldMiB > 0 {
		wcfg = colony.SizedConfig(int64(worldMiB)<<20, 1)
	}
	world, err := colony.New(bundle.Content, wcfg)
	if err != nil {
		return nil, nil, err
	}
	srv, err := host.New(host.Config{Logger: log, Desync: host.DesyncConfig{HashEvery: every, Limit: n + 1}, Admission: host.AdmissionConfig{ConnRate: -1}},
		hostcontent.Content(bundle, log), world)
	if err != nil {
		return nil, nil, err
	}
	return world, srv, nil
}

// waitRepaired waits until deadline for the repair of the desync made at
// corruptedTick (0 until it is made) and takes it from ev.
func waitRepaired(ev *events, corruptedTick *atomic.Uint64, deadline time.Time) (rep join.DesyncEvent, found bool) {
	for !found && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		ev.mu.Lock()
		for k, d := range ev.repaired {
			if k >= corruptedTick.Load() && corruptedTick.Load() != 0 {
				rep, found = d, true
				delete(ev.repaired, k)
			}
		}
		ev.mu.Unlock()
	}
	return rep, found
}

// watcher is base for Bob, who only watches: his desync events and the
// times of his steps go to ev.
func watcher(base join.Config, ev *events) join.Config {
	bobCfg := base
	bobCfg.Name = "Bob"
	bobCfg.Desync = func(d join.DesyncEvent) {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		switch d.Kind {
		case join.DesyncDetected:
			ev.detected[d.Tick] = time.Now()
		case join.DesyncRepaired:
			ev.repaired[d.Tick] = d
		}
	}
	bobCfg.OnStep = func(lockstep.Sim) {
		ev.mu.Lock()
		ev.stepAt = append(ev.stepAt, time.Now())
		ev.mu.Unlock()
	}
	return bobCfg
}

// printSummary prints the figures of all the desyncs.
func printSummary(st host.Stats, every int, lat, detectMs, repairMs, gaps []float64, quietGap time.Duration) {
	fmt.Printf("detection latency: median %.0f ticks, max %.0f (the interval is %d)\n", procstat.Median(lat), slices.Max(lat), every)
	fmt.Printf("corruption to detection: median %.0f ms, max %.0f ms\n", procstat.Median(detectMs), slices.Max(detectMs))
	fmt.Printf("repair (detection to matching hashes): median %.1f ms, max %.0f ms\n", procstat.Median(repairMs), slices.Max(repairMs))
	fmt.Printf("Bob's longest gap between ticks around a repair: median %.1f ms, max %.1f ms (%.1f ms in 2 s with no desync)\n",
		procstat.Median(gaps), slices.Max(gaps), procstat.Ms(quietGap))
	fmt.Printf("host: %d map repairs, %d world repairs, %d repaired, %.1f KiB sent in repairs\n",
		st.MapResyncs, st.WorldResyncs, st.Repaired, float64(st.ResyncBytes)/1024)
	fmt.Printf("host checkpoints: %d (%d skipped), mean %.3f ms on the session goroutine (a clone; hashing runs elsewhere)\n",
		st.Checkpoints, st.CheckpointsSkipped, procstat.Ms(st.HashTime)/float64(max(1, st.Checkpoints)))
}

func maxGap(ev *events, from, to time.Time) time.Duration {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var g time.Duration
	for i := 1; i < len(ev.stepAt); i++ {
		if ev.stepAt[i].Before(from) || ev.stepAt[i-1].After(to) {
			continue
		}
		g = max(g, ev.stepAt[i].Sub(ev.stepAt[i-1]))
	}
	return g
}
