package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/wire"
)

// The storm (-storm): a host serves a small world, with time never held
// for a player that falls behind; Watch, a light client in this process,
// notes when bytes arrive from the host (a tick is sent every 1/60 s, so
// the longest gap between arrivals is the longest between ticks); six chain
// players join in this process, have a hash report accepted and drop,
// keeping their worlds' positions and reports; six players (the join
// tool) flood commands for -storm-age, then the chains rejoin from their
// held worlds, each taking the next token from Server_Session and
// dropping at once (never reaching WorldReady), again and again for
// -storm-for. It prints Watch's longest gap between two ticks with the
// flood alone and during the storm, and what the host answered.

// stormConfig is the storm's shape.
type stormConfig struct {
	mib      int           // world size
	players  int           // flooders, and chains
	bot      float64       // commands a second each flooder sends
	age      time.Duration // how old the chains' held point is when they rejoin
	duration time.Duration // how long the storm lasts
	spread   bool          // each rejoin of a chain names a position a tick past its previous one's
}

// stepLog is when bytes arrived for Watch, in order.
type stepLog struct {
	mu sync.Mutex
	at []time.Time
}

// arrived notes bytes arriving now.
func (l *stepLog) arrived() {
	l.mu.Lock()
	l.at = append(l.at, time.Now())
	l.mu.Unlock()
}

// timedConn notes every read that returns bytes in a stepLog.
type timedConn struct {
	net.Conn
	log *stepLog
}

func (c timedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.log.arrived()
	}
	return n, err
}

// gaps is the gaps between two arrivals within [from, to], ascending.
func (l *stepLog) gaps(from, to time.Time) []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gs []time.Duration
	for i := 1; i < len(l.at); i++ {
		if l.at[i-1].Before(from) || l.at[i].After(to) {
			continue
		}
		gs = append(gs, l.at[i].Sub(l.at[i-1]))
	}
	slices.Sort(gs)
	if len(gs) == 0 {
		gs = []time.Duration{0}
	}
	return gs
}

// window is what Watch and the host's process did over one stretch of
// time.
type window struct {
	gaps []time.Duration // ascending
	cpu  time.Duration   // the host's CPU time
	took time.Duration
}

// measure runs fn and returns the window it took.
func measure(l *stepLog, pid int, fn func()) window {
	start, cpu := time.Now(), procstat.CPU(pid)
	fn()
	end := time.Now()
	return window{gaps: l.gaps(start, end), cpu: procstat.CPU(pid) - cpu, took: end.Sub(start)}
}

func (w window) String() string {
	return fmt.Sprintf("longest gap %6.1f ms, p99.9 %6.1f ms, p99 %6.1f ms; host CPU %.2f s of %.0f s",
		procstat.Ms(w.gaps[len(w.gaps)-1]), procstat.Ms(procstat.Percentile(w.gaps, 0.999)), procstat.Ms(procstat.Percentile(w.gaps, 0.99)),
		w.cpu.Seconds(), w.took.Seconds())
}

// chain is a player that dropped holding its world: its token and what
// its rejoins name.
type chain struct {
	name  string
	token []byte
	held  *wire.HeldWorld
}

// checkRecorder keeps a simulation's world hash at every checkpoint, the
// last wire.MaxHeldChecks of them: the reports its client sent.
type checkRecorder struct {
	every  uint64
	mu     sync.Mutex
	checks []wire.HeldCheck
}

func (r *checkRecorder) step(sim lockstep.Sim) {
	if sim.Tick()%r.every != 0 {
		return
	}
	c := wire.HeldCheck{Tick: sim.Tick(), World: sim.WorldHash()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.checks) == wire.MaxHeldChecks {
		r.checks = slices.Delete(r.checks, 0, 1)
	}
	r.checks = append(r.checks, c)
}

func runStorm(tl tools, sc stormConfig) error {
	bundle, err := gamecontent.Load(nil, "")
	if err != nil {
		return err
	}
	h, err := startHost(tl, sc.mib, "127.0.0.1:30694", "127.0.0.1:30695", "--rejoin-grace", "30m",
		"--lag-policy", "drop", "--max-lag", "1000000",
		"--max-pending-per-addr", "64", "--max-players", "32", "--command-rate", fmt.Sprint(max(100, 2*sc.bot)))
	if err != nil {
		return err
	}
	defer h.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	base := join.Config{Addr: h.game, Databases: bundle.Summary(), MapLoader: colony.MapLoader(bundle.Content), Logger: quiet}
	steps := &stepLog{}
	wcfg := base
	wcfg.Name, wcfg.Light = "Watch", true
	wcfg.Dial = func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return timedConn{Conn: nc, log: steps}, nil
	}
	watch, err := join.Join(ctx, wcfg)
	if err != nil {
		return fmt.Errorf("join as Watch: %w", err)
	}
	go watch.Run(ctx)
	defer watch.Close()
	chains, err := dropChains(ctx, h, base, sc.players)
	if err != nil {
		return err
	}
	dropped := time.Now()
	how := "each chain from one position"
	if sc.spread {
		how = "each rejoin from a position of its own"
	}
	fmt.Printf("bench-rejoin storm: %d MiB world; %d chains dropped holding their worlds (%s); %d players flood %g commands a second each\n",
		sc.mib, len(chains), how, sc.players, sc.bot)
	for i := range sc.players {
		p := startPlayer(tl.joiner, h.game, fmt.Sprintf("Flood%d", i+1), sc.bot)
		defer p.stop()
	}
	time.Sleep(time.Until(dropped.Add(sc.age - sc.duration)))
	pid := h.cmd.Process.Pid
	calm := measure(steps, pid, func() { time.Sleep(sc.duration) })
	o, err := h.overview()
	if err != nil {
		return err
	}
	fmt.Printf("after %v: host at tick %d, %d commands stamped, rejoin window %d commands (%s)\n",
		sc.age, o.Tick, o.Stats.Commands, o.Window.Commands, mb(o.Window.Bytes))
	var res *stormResult
	during := measure(steps, pid, func() { res = storm(h.game, chains, sc.duration, sc.spread) })
	fmt.Printf("Watch, between two ticks from the host:\n  flood alone, the %v before the storm: %s\n  during the %v storm:                 %s\n",
		sc.duration, calm, sc.duration, during)
	fmt.Printf("longest gap during the storm / before it: %.2fx\n",
		float64(during.gaps[len(during.gaps)-1])/float64(max(1, calm.gaps[len(calm.gaps)-1])))
	fmt.Printf("storm: %d rejoins answered held (%s of replays), %d answered otherwise %v, %d refused %v, %d failed\n",
		res.held.Load(), mb(res.replayBytes.Load()), res.other.Load(), res.results(), res.refused.Load(), res.reasons(), res.failed.Load())
	return h.rejoinCounters()
}

// dropChains joins n chain players, waits until the host accepted a hash
// report of each, and drops them.
func dropChains(ctx context.Context, h *hostProc, base join.Config, n int) ([]chain, error) {
	var chains []chain
	for i := range n {
		cfg := base
		cfg.Name = fmt.Sprintf("Chain%d", i+1)
		rec := &checkRecorder{every: uint64(lockstep.DefaultHashEvery)}
		cfg.OnStep = rec.step
		s, err := join.Join(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("join as %s: %w", cfg.Name, err)
		}
		go s.Run(ctx)
		if err := h.waitAccepted(cfg.Name, 0); err != nil {
			return nil, err
		}
		token, _ := s.Token()
		s.Close()
		rec.mu.Lock()
		checks := slices.Clone(rec.checks)
		rec.mu.Unlock()
		if len(checks) == 0 {
			return nil, fmt.Errorf("%s dropped with no checkpoint taken", cfg.Name)
		}
		last := checks[len(checks)-1].Tick
		chains = append(chains, chain{name: cfg.Name, token: token, held: &wire.HeldWorld{Tick: last, Checks: checks}})
	}
	return chains, nil
}

// stormResult counts what the storm's rejoins were answered.
type stormResult struct {
	held, other, refused, failed atomic.Int64
	replayBytes                  atomic.Int64
	mu                           sync.Mutex
	byResult                     map[wire.RejoinResult]int
	byReason                     map[wire.Reason]int
}

func (r *stormResult) results() map[wire.RejoinResult]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps(r.byResult)
}

func (r *stormResult) reasons() map[wire.Reason]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps(r.byReason)
}

func maps[K comparable](m map[K]int) map[K]int {
	out := make(map[K]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// storm has every chain rejoin from its held world, take the next token
// and drop, over and over, for d; with spread, each rejoin names a
// position a tick past the chain's previous one, so that no two rejoins
// share a replay.
func storm(addr string, chains []chain, d time.Duration, spread bool) *stormResult {
	res := &stormResult{byResult: map[wire.RejoinResult]int{}, byReason: map[wire.Reason]int{}}
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for _, c := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token, held := c.token, *c.held
			for time.Now().Before(end) {
				ss, dc, err := rejoinOnce(addr, c.name, token, &held)
				if spread {
					held.Tick++
				}
				switch {
				case err != nil:
					res.failed.Add(1)
					time.Sleep(100 * time.Millisecond)
				case dc != nil:
					res.refused.Add(1)
					res.mu.Lock()
					res.byReason[dc.Reason]++
					res.mu.Unlock()
					time.Sleep(100 * time.Millisecond)
				case ss.Rejoin == wire.RejoinHeld:
					res.held.Add(1)
					res.replayBytes.Add(int64(len(ss.Replay)))
					token = ss.Token
				default:
					res.other.Add(1)
					res.mu.Lock()
					res.byResult[ss.Rejoin]++
					res.mu.Unlock()
					token = ss.Token
				}
			}
		}()
	}
	wg.Wait()
	return res
}

// rejoinOnce connects, rejoins with token naming held, and drops as
// soon as the host answers: its Server_Session, or its disconnect.
func rejoinOnce(addr, name string, token []byte, held *wire.HeldWorld) (*wire.ServerSession, *wire.ServerDisconnect, error) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(time.Minute))
	fr := wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)
	send := func(p wire.Packet) error { _, err := nc.Write(wire.MustMarshal(p)); return err }
	// until reads, answering clock rounds, up to a packet of id or the
	// host's disconnect.
	until := func(id wire.ID) (wire.Packet, error) {
		for {
			pid, body, err := fr.Next()
			if err != nil {
				return nil, err
			}
			if pid != id && pid != wire.IDServerDisconnect && pid != wire.IDServerClock {
				continue
			}
			p, err := wire.Decode(pid, body)
			if err != nil {
				return nil, err
			}
			if ck, ok := p.(*wire.ServerClock); ok {
				if err := send(&wire.ClientClock{Nonce: ck.Nonce, ClientTime: time.Now().UnixMicro()}); err != nil {
					return nil, err
				}
				continue
			}
			return p, nil
		}
	}
	if err := send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion, Codecs: []uint8{uint8(snapshot.Gzip), uint8(snapshot.Zstd)}}); err != nil {
		return nil, nil, err
	}
	p, err := until(wire.IDServerModList)
	if err != nil {
		return nil, nil, err
	}
	ml, ok := p.(*wire.ServerModList)
	if !ok {
		return nil, p.(*wire.ServerDisconnect), nil
	}
	if err := send(&wire.ClientDefs{Databases: ml.Databases}); err != nil {
		return nil, nil, err
	}
	if p, err = until(wire.IDServerDefsOK); err != nil {
		return nil, nil, err
	}
	if dc, ok := p.(*wire.ServerDisconnect); ok {
		return nil, dc, nil
	}
	if err := send(&wire.ClientUsername{Name: name, Token: token, Held: held}); err != nil {
		return nil, nil, err
	}
	if p, err = until(wire.IDServerSession); err != nil {
		return nil, nil, err
	}
	if dc, ok := p.(*wire.ServerDisconnect); ok {
		return nil, dc, nil
	}
	return p.(*wire.ServerSession), nil, nil
}
