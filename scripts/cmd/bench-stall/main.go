// Command bench-stall measures how much clients that connect and stall delay
// a real joiner: it hosts the default world on loopback, times joins
// (connect to WorldReady) with no other clients, then again while N
// clients hold connections open without finishing the handshake (half
// send nothing, half send a frame header and stop), each from its own
// loopback address so the per-address rate limit does not hide them.
// It prints figures; it asserts nothing. Run: go run ./scripts/cmd/bench-stall
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
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/testing/procstat"
)

func main() {
	stallers := flag.Int("stallers", 200, "clients that connect and stall")
	joins := flag.Int("joins", 5, "joins timed in each condition")
	flag.Parse()
	if err := run(*stallers, *joins); err != nil {
		fmt.Fprintln(os.Stderr, "bench-stall:", err)
		os.Exit(1)
	}
}

func run(stallers, joins int) error {
	content, set, err := colony.DefaultContent()
	if err != nil {
		return err
	}
	world, err := colony.New(content, colony.Config{Seed: 1})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Default limits, except a handshake deadline longer than the run so
	// the stallers stay connected throughout.
	srv, err := host.New(host.Config{Logger: quiet, Limits: host.LimitConfig{MaxPlayers: 64}, Timeouts: host.TimeoutConfig{Handshake: time.Minute}, Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond}},
		host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()}, world)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	addr := ln.Addr().String()

	timeJoins := func(label string) (time.Duration, error) {
		var ds []time.Duration
		for i := 0; i < joins; i++ {
			start := time.Now()
			s, err := join.Join(ctx, join.Config{Addr: addr, Name: fmt.Sprintf("%s%d", label, i), Databases: set.Summary(),
				Loader: colony.Loader(content), Logger: quiet})
			if err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(start))
			s.Close()
			time.Sleep(250 * time.Millisecond) // within the per-address rate limit
		}
		slices.Sort(ds)
		fmt.Printf("%-28s joins %d: median %7.1f ms  min %7.1f  max %7.1f\n",
			label, joins, procstat.Ms(ds[len(ds)/2]), procstat.Ms(ds[0]), procstat.Ms(ds[len(ds)-1]))
		return ds[len(ds)/2], nil
	}

	fmt.Printf("bench-stall: GOMAXPROCS=%d NumCPU=%d, default world 4x250^2\n", runtime.GOMAXPROCS(0), runtime.NumCPU())
	base, err := timeJoins("alone")
	if err != nil {
		return err
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	t0 := time.Now()
	for i := 0; i < stallers; i++ {
		ip := net.IPv4(127, 0, byte(1+i/250), byte(2+i%250))
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("staller %d from %s: %w", i, ip, err)
		}
		if i%2 == 1 {
			c.Write([]byte{0, 0}) // half a frame header, then nothing
		}
		conns = append(conns, c)
	}
	fmt.Printf("%d stallers connected in %.1f ms, each from its own address\n", stallers, procstat.Ms(time.Since(t0)))
	loaded, err := timeJoins(fmt.Sprintf("stalled%d", stallers))
	if err != nil {
		return err
	}
	fmt.Printf("delay added by %d stalled clients: %+.1f ms on the median join\n", stallers, procstat.Ms(loaded-base))
	return nil
}
