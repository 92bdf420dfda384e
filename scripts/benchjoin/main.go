// Command benchjoin measures joining on loopback: join time (connect to
// WorldReady) by world size, several joiners at once, the size of the
// world raw and compressed, and the catch-up rate in ticks per second.
// It prints figures; it asserts nothing. Run: go run ./scripts/benchjoin
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/lockhost/lockhost/colony"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

func main() {
	joins := flag.Int("joins", 5, "sequential joins per world size")
	together := flag.Int("together", 4, "joiners at once")
	ticks := flag.Int("ticks", 2000, "ticks simulated for the catch-up rate")
	flag.Parse()
	if err := run(*joins, *together, *ticks); err != nil {
		fmt.Fprintln(os.Stderr, "benchjoin:", err)
		os.Exit(1)
	}
}

type size struct {
	name       string
	maps, side int
}

func run(joins, together, ticks int) error {
	content, set, err := colony.DefaultContent()
	if err != nil {
		return err
	}
	fmt.Printf("benchjoin: GOMAXPROCS=%d NumCPU=%d %s/%s\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	sizes := []size{{"small 1x100^2", 1, 100}, {"default 4x250^2", 4, 250}, {"large 8x500^2", 8, 500}}
	for _, sz := range sizes {
		world, err := colony.New(content, colony.Config{Maps: sz.maps, Width: sz.side, Height: sz.side, Seed: 1})
		if err != nil {
			return err
		}
		if err := sizeAndCatchUp(sz, world, content, ticks); err != nil {
			return err
		}
		world, _ = colony.New(content, colony.Config{Maps: sz.maps, Width: sz.side, Height: sz.side, Seed: 1})
		if err := joinTimes(sz, world, content, set.Summary(), joins, together); err != nil {
			return err
		}
	}
	return nil
}

// sizeAndCatchUp prints the snapshot sizes, the time to cut and compress,
// and how fast a loaded copy simulates.
func sizeAndCatchUp(sz size, world *colony.World, content *colony.Content, ticks int) error {
	t0 := time.Now()
	raw, err := snapshot.Cut(world)
	if err != nil {
		return err
	}
	cut := time.Since(t0)
	t1 := time.Now()
	pt, err := raw.Compress(snapshot.DefaultLevel)
	if err != nil {
		return err
	}
	comp := time.Since(t1)
	maps := make([]lockstep.MapBlob, len(raw.Maps))
	copy(maps, raw.Maps)
	sim, err := colony.Loader(content)(raw.World, maps)
	if err != nil {
		return err
	}
	f, err := lockstep.NewFollower(sim, nil)
	if err != nil {
		return err
	}
	f.Grant(sim.Tick() + uint64(ticks))
	t2 := time.Now()
	if _, err := f.Run(ticks); err != nil {
		return err
	}
	rate := float64(ticks) / time.Since(t2).Seconds()
	fmt.Printf("%-16s raw %8.1f KiB  gzip %7.1f KiB (%.1f%%)  cut %6.2f ms  compress %6.2f ms  catch-up %7.0f ticks/s (%d ticks)\n",
		sz.name, float64(pt.RawSize())/1024, float64(pt.CompressedSize())/1024, 100*float64(pt.CompressedSize())/float64(pt.RawSize()),
		ms(cut), ms(comp), rate, ticks)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// joinTimes hosts world on loopback and measures real joins through the
// whole protocol.
func joinTimes(sz size, world *colony.World, content *colony.Content, sum []defs.Summary, joins, together int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// A join point older than the join itself is never reused here, so
	// every join pays for a fresh cut and compression.
	srv, err := host.New(host.Config{Logger: quiet(), MaxPlayers: 64, JoinPointMaxAge: time.Millisecond},
		host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: sum}, world)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	joinOnce := func(name string) (join.Timings, error) {
		s, err := join.Join(ctx, join.Config{Addr: ln.Addr().String(), Name: name, Databases: sum, Loader: colony.Loader(content), Logger: quiet()})
		if err != nil {
			return join.Timings{}, err
		}
		t := s.Timings()
		s.Close()
		return t, nil
	}
	var totals []time.Duration
	var last join.Timings
	for i := 0; i < joins; i++ {
		t, err := joinOnce(fmt.Sprintf("seq%d", i))
		if err != nil {
			return err
		}
		totals = append(totals, t.Total)
		last = t
	}
	slices.Sort(totals)
	fmt.Printf("%-16s join (connect to WorldReady), %d sequential: median %6.1f ms  min %6.1f  max %6.1f  [last: handshake %.1f download %.1f load %.1f catch-up %.1f ms]\n",
		sz.name, joins, ms(totals[len(totals)/2]), ms(totals[0]), ms(totals[len(totals)-1]),
		ms(last.Handshake), ms(last.Download), ms(last.Load), ms(last.CatchUp))

	var wg sync.WaitGroup
	res := make([]time.Duration, together)
	errs := make([]error, together)
	start := time.Now()
	for i := 0; i < together; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t, err := joinOnce(fmt.Sprintf("par%d", i))
			res[i], errs[i] = t.Total, err
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	slices.Sort(res)
	fmt.Printf("%-16s %d joiners at once: all WorldReady in %6.1f ms (slowest %6.1f ms, fastest %6.1f ms)\n",
		sz.name, together, ms(wall), ms(res[len(res)-1]), ms(res[0]))
	return nil
}
