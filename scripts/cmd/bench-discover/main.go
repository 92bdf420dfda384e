// Command bench-discover measures LAN discovery under a flood of probes:
// it answers discovery with the default limits on a port of its own, on
// loopback only, and counts how many of -tries honest discoveries (the
// join tool's, lan.Discover with its default wait, on the loopback
// interface) find it alone and then while -sources loopback addresses
// (127.0.1.1 on; each one socket, or with -fresh a new socket for every
// probe, so every probe comes from a source the host has not answered)
// send -rate probes a second each, every address within its own limit,
// so that only the limit on all sources together holds the host back. It prints the counts and what the host
// answered during the flood against that limit. It asserts nothing, and
// no probe leaves loopback.
// Run: go run ./scripts/cmd/bench-discover (or scripts/bench-discover).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/transport/lan"
)

// gamePort is the game port the host names; it tells its replies apart.
const gamePort = 30777

func main() {
	sources := flag.Int("sources", 300, "flooding loopback addresses")
	rate := flag.Float64("rate", 5, "probes a second from each flooding address (0: as fast as it can)")
	tries := flag.Int("tries", 10, "honest discoveries in each condition")
	warm := flag.Duration("warm", 2*time.Second, "how long the flood runs before the discoveries")
	fresh := flag.Bool("fresh", false, "send every flood probe from a new socket (a new source port)")
	flag.Parse()
	if err := run(*sources, *rate, *tries, *warm, *fresh); err != nil {
		fmt.Fprintln(os.Stderr, "bench-discover:", err)
		os.Exit(1)
	}
}

func run(sources int, rate float64, tries int, warm time.Duration, fresh bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ifaces, err := lan.ServedInterfaces(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		return err
	}
	pcs, err := lan.Listen(ctx, 0, ifaces)
	if err != nil {
		return err
	}
	defer func() {
		for _, pc := range pcs {
			pc.Close()
		}
	}()
	port := pcs[0].LocalAddr().(*net.UDPAddr).Port
	r := lan.NewResponder(func() status.Info { return status.Info{GameName: "bench", MaxPlayers: 8} },
		lan.Options{GamePort: gamePort, Accept: lan.LoopbackOnly})
	for _, pc := range pcs {
		go func() { _ = r.Serve(ctx, pc) }()
	}
	fmt.Printf("bench-discover: GOMAXPROCS=%d NumCPU=%d, %d flooding addresses at %v probes/s each (a new socket each: %v), %d tries, limit %d/s (burst %d) in all\n",
		runtime.GOMAXPROCS(0), runtime.NumCPU(), sources, rate, fresh, tries, lan.DefaultTotalRate, lan.DefaultTotalBurst)
	alone := discoveries(ctx, port, ifaces, tries)
	fmt.Printf("alone:   found %d of %d\n", alone, tries)

	stop, sent, err := flood(port, sources, rate, fresh)
	if err != nil {
		return err
	}
	time.Sleep(warm)
	replies0, dropped0 := r.Stats()
	start := time.Now()
	found := discoveries(ctx, port, ifaces, tries)
	elapsed := time.Since(start)
	replies1, dropped1 := r.Stats()
	stop()
	answered := replies1 - replies0
	fmt.Printf("flooded: found %d of %d\n", found, tries)
	fmt.Printf("during the discoveries (%v): %d probes sent by the flood in all, host answered %d (%.0f/s), dropped %d\n",
		elapsed.Round(time.Millisecond), sent.Load(), answered, float64(answered)/elapsed.Seconds(), dropped1-dropped0)
	return nil
}

// discoveries runs n discoveries one after another and returns how many
// found the host.
func discoveries(ctx context.Context, port int, ifaces []net.Interface, n int) int {
	found := 0
	for range n {
		hosts, err := lan.Discover(ctx, lan.DiscoverOptions{Port: port, Interfaces: ifaces})
		if err != nil {
			fmt.Fprintln(os.Stderr, "discover:", err)
			continue
		}
		for _, h := range hosts {
			if h.Addr.Port() == gamePort {
				found++
				break
			}
		}
	}
	return found
}

// flood sends probes to port on 127.0.0.1 from sources addresses, rate a
// second each (from a new socket each with fresh), until stop; sent
// counts them.
func flood(port, sources int, rate float64, fresh bool) (stop func(), sent *atomic.Uint64, err error) {
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
	probe := lan.AppendProbe(nil, 3)
	done := make(chan struct{})
	var wg sync.WaitGroup
	sent = &atomic.Uint64{}
	var conns []*net.UDPConn
	for i := range sources {
		from := netip.AddrFrom4([4]byte{127, byte(1 + i/250), 0, byte(1 + i%250)})
		pc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(from, 0)))
		if err != nil {
			for _, c := range conns {
				c.Close()
			}
			return nil, nil, fmt.Errorf("source %v: %w", from, err)
		}
		conns = append(conns, pc)
	}
	period := time.Duration(float64(time.Second) / max(rate, 1e-9))
	for i, pc := range conns {
		wg.Go(func() {
			defer pc.Close()
			var tick <-chan time.Time
			if rate > 0 {
				// Staggered over one period, so the flood is even rather
				// than a burst from every address at once.
				select {
				case <-done:
					return
				case <-time.After(period * time.Duration(i) / time.Duration(len(conns))):
				}
				t := time.NewTicker(period)
				defer t.Stop()
				tick = t.C
			}
			for {
				if tick != nil {
					select {
					case <-done:
						return
					case <-tick:
					}
				} else {
					select {
					case <-done:
						return
					default:
					}
				}
				if send(pc, probe, to, fresh) {
					sent.Add(1)
				}
			}
		})
	}
	return func() { close(done); wg.Wait() }, sent, nil
}

// send sends probe to to from pc, or from a new socket on pc's address
// with fresh, and reports whether it went.
func send(pc *net.UDPConn, probe []byte, to *net.UDPAddr, fresh bool) bool {
	if fresh {
		from := pc.LocalAddr().(*net.UDPAddr)
		one, err := net.ListenUDP("udp4", &net.UDPAddr{IP: from.IP})
		if err != nil {
			return false
		}
		defer one.Close()
		pc = one
	}
	_, err := pc.WriteTo(probe, to)
	return err == nil
}
