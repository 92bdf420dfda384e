package host_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/wire"
)

// proxy forwards one TCP connection to target with a delay each way, and
// can freeze: stop forwarding without closing, as a cable pulled out.
type proxy struct {
	addr   string
	frozen atomic.Bool
}

func startProxy(t *testing.T, target string, delay time.Duration) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String()}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				return
			}
			mu.Lock()
			conns = append(conns, c, u)
			mu.Unlock()
			go p.pipe(c, u, delay)
			go p.pipe(u, c, delay)
		}
	}()
	return p
}

// pipe copies src to dst, each piece delay after it was read.
func (p *proxy) pipe(src, dst net.Conn, delay time.Duration) {
	type piece struct {
		at   time.Time
		data []byte
	}
	q := make(chan piece, 4096)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- piece{time.Now().Add(delay), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for pc := range q {
		time.Sleep(time.Until(pc.at))
		for p.frozen.Load() {
			time.Sleep(10 * time.Millisecond) // hold everything: no FIN, no data
		}
		if _, err := dst.Write(pc.data); err != nil {
			return
		}
	}
}

func TestSilentClientTimesOut(t *testing.T) {
	// 3 s: long enough that Alice, echoing every 100 ms keepalive, is never
	// silent that long on a loaded machine; short enough to wait for.
	h := startHost(t, host.Config{Timeout: 3 * time.Second, KeepaliveEvery: 100 * time.Millisecond}, locksteptest.New(1, 64))
	var mu sync.Mutex
	var notices []string
	alice := startJoiner(t, h.addr, "Alice", func(c *join.Config) {
		c.Notice = func(s string) { mu.Lock(); notices = append(notices, s); mu.Unlock() }
	})
	px := startProxy(t, h.addr, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bobLog := newHashLog()
	cfg := joinCfg(px.addr, "Bob", bobLog)
	cfg.HostTimeout = time.Hour // Bob must not give up first
	bob, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go bob.Run(ctx)
	waitFor(t, "Bob to play a while", func() bool { return bobLog.latest() > bob.Timings().ReadyTick+20 })
	px.frozen.Store(true) // Bob's machine goes silent: no FIN, nothing
	// waitFor gives up after 20 s, below the 30 s default Timeout: the drop
	// must come from the configured 1 s.
	waitFor(t, "Bob to be dropped as timed out", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range notices {
			if strings.Contains(n, "Bob left the session (timed out)") {
				return true
			}
		}
		return false
	})
	t0 := alice.log.latest()
	waitFor(t, "Alice to keep playing", func() bool { return alice.log.latest() > t0+20 })
}

func TestRTTNearInjectedDelay(t *testing.T) {
	h := startHost(t, host.Config{KeepaliveEvery: 100 * time.Millisecond}, locksteptest.New(1, 64))
	var mu sync.Mutex
	var bobRTT int32 = -1
	startJoiner(t, h.addr, "Alice", func(c *join.Config) {
		c.Players = func(ps []wire.PlayerInfo) {
			for _, p := range ps {
				if p.Name == "Bob" {
					mu.Lock()
					bobRTT = p.LatencyMs
					mu.Unlock()
				}
			}
		}
	})
	px := startProxy(t, h.addr, 40*time.Millisecond) // 80 ms round trip
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bob, err := join.Join(ctx, joinCfg(px.addr, "Bob", newHashLog()))
	if err != nil {
		t.Fatal(err)
	}
	go bob.Run(ctx)
	// Every sample crosses the proxy both ways, so no measured round trip
	// can be under 80 ms; the upper bound only catches a wrong unit or a
	// wait counted in, with room for any scheduling delay a loaded machine
	// adds to a loopback round trip.
	inRange := func(ms int32) bool { return ms >= 80 && ms <= 1000 }
	waitFor(t, "Bob's latency near 80 ms in Alice's list", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return inRange(bobRTT)
	})
	time.Sleep(1200 * time.Millisecond) // keepalive rounds refine it
	mu.Lock()
	defer mu.Unlock()
	t.Logf("Bob's latency as Alice sees it: %d ms (injected: 80 ms round trip)", bobRTT)
	if !inRange(bobRTT) {
		t.Fatalf("latency %d ms for an 80 ms round trip", bobRTT)
	}
}

func TestJoinerNoticesSilentHost(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 64))
	px := startProxy(t, h.addr, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := joinCfg(px.addr, "Bob", newHashLog())
	cfg.HostTimeout = 500 * time.Millisecond
	bob, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bob.Run(ctx) }()
	px.frozen.Store(true)
	// 20 s is below the 30 s default HostTimeout: the end must come from
	// the configured 500 ms.
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "went silent") {
			t.Fatalf("Run ended with %v, want the host gone silent", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the joiner did not notice the silent host")
	}

}
