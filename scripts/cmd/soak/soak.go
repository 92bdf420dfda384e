package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// soak is one run: the host, the slots and what happened.
type soak struct {
	cfg    Config
	bundle *gamecontent.Bundle
	srv    *host.Server
	ctx    context.Context // the run's: every bot's session derives from it
	start  time.Time

	mu         sync.Mutex
	slots      []*slot
	serial     uint64
	peakOnline int

	joins     sync.WaitGroup // joins under way
	bots      sync.WaitGroup // every bot's goroutines
	injecting sync.WaitGroup // desyncs waiting for their repair

	n        counters
	hostile  hostileCounts
	probs    problems
	probe    probe
	hostTick atomic.Uint64
	peakG    atomic.Int64
}

// counters are the soak's events, safe from any goroutine.
type counters struct {
	joins, rejoins, leaves, drops atomic.Int64
	// rejoinsHeld came back from the world they held (the host replayed
	// the commands missed); rejoinsDownloaded were sent the world, and
	// fallbacks counts why, for those that named a held world.
	rejoinsHeld, rejoinsDownloaded atomic.Int64
	fallbacks                      [wire.RejoinResults]atomic.Int64
	sent, applied, refused         atomic.Int64
	// injected desyncs were armed, perturbed made; detected and repaired
	// are what the corrupted bots were told and swapped in.
	injected, perturbed, detected, repaired atomic.Int64
}

// problems are what went wrong during the run, by kind; each kind with
// any becomes one failed check.
type problems struct {
	mu                       sync.Mutex
	join, disconnect, desync list
}

// list counts problems of one kind and keeps the first few.
type list struct {
	n     int
	first []string
}

// problem records a problem of the kind l.
func (s *soak) problem(l *list, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.probs.mu.Lock()
	defer s.probs.mu.Unlock()
	l.n++
	if len(l.first) < 3 {
		l.first = append(l.first, msg)
	}
	s.cfg.Logger.Warn("soak problem", "msg", msg)
}

func (s *soak) problemsOf(l *list) (int, []string) {
	s.probs.mu.Lock()
	defer s.probs.mu.Unlock()
	return l.n, append([]string(nil), l.first...)
}

// sample is the process's state at one moment.
type sample struct {
	at         time.Duration // since the start
	clients    int
	goroutines int
	heapLive   uint64 // bytes of live objects (HeapAlloc after a GC)
	heapInuse  uint64 // bytes of the spans holding them (HeapInuse)
	rss        int64  // KiB
}

// Run runs one soak and reports it on cfg.Out. The Result says which
// checks failed; the error is for a soak that could not run at all.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "lockhost-soak-")
		if err != nil {
			return nil, fmt.Errorf("temp dir: %w", err)
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	bundle, err := gamecontent.Load(nil, "")
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	cfg.Out = &lockedWriter{w: cfg.Out} // progress lines come from another goroutine
	s := &soak{cfg: cfg, bundle: bundle, start: time.Now()}
	return s.run(ctx)
}

// lockedWriter serialises writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// run runs the soak: the host alone, every client joined, the soak
// proper, everyone gone and the host stopped, with the samples and
// checks of each step in res.
func (s *soak) run(parent context.Context) (*Result, error) {
	cfg := s.cfg
	res := &Result{Config: cfg}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s.ctx = ctx

	res.Pre = s.sample(true)
	res.RSSStart = res.Pre.rss

	savePath := filepath.Join(cfg.Dir, "soak.lhsave")
	world, srv, err := s.newHost(savePath)
	if err != nil {
		return nil, err
	}
	stopMon := s.startMonitor(ctx)
	defer stopMon()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	h := serve(ctx, srv, ln)
	defer h.abandon()
	fmt.Fprintf(cfg.Out, "soak: %d clients (%d full, %d light) for %v, seed %d; host on %s, hash every %d ticks, autosave every %v (keep %d), %.1f commands/s per bot, a chaos event every %v on average; GOMAXPROCS=%d\n",
		cfg.Clients, cfg.Full, cfg.Clients-cfg.Full, cfg.Duration, cfg.Seed, ln.Addr(), cfg.HashEvery, cfg.Autosave, cfg.Keep,
		cfg.Rate, cfg.ChaosEvery, runtime.GOMAXPROCS(0))

	// The host alone: the baseline its goroutines must come back to.
	time.Sleep(500 * time.Millisecond)
	res.Base = s.steady(time.Second)

	// Every slot gets its relay and its bot.
	err = s.openSlots(ln.Addr().String())
	defer func() {
		for _, sl := range s.slots {
			sl.relay.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	defer s.stopAll()
	if err := s.initialJoins(); err != nil {
		return nil, err
	}
	res.InitialJoins = int(s.n.joins.Load())
	res.JoinTime = time.Since(s.start)
	fmt.Fprintf(cfg.Out, "[%s] %d clients joined; warming up for %v\n", s.elapsed(), res.InitialJoins, cfg.Warmup)

	if err := s.soakFor(ctx, res, ln.Addr().String()); err != nil {
		return nil, err
	}

	// Everyone leaves: the host's goroutines must come back to the
	// baseline, then everything of the host's once it stops.
	if err := s.leaveAndStop(res, srv, h.stop, h.served); err != nil {
		return nil, err
	}
	h.stopped = true
	res.HostUptime = time.Since(h.start)
	res.HostStats = srv.Overview().Stats
	stopMon()
	res.AfterStop = s.waitGoroutines(res.Pre.goroutines, settleGoroutines)
	// The kernel updates the high-water mark lazily: a sample may be
	// higher.
	res.RSSPeak = max(peakRSS(), res.Warm.rss, res.End.rss)
	s.finalChecks(res, savePath, world)
	return res, nil
}

// startMonitor runs s.monitor on its own goroutine until the returned
// stop, which waits for it to return and may be called again.
func (s *soak) startMonitor(ctx context.Context) (stop func()) {
	monCtx, stopMon := context.WithCancel(ctx)
	monDone := make(chan struct{})
	go func() { defer close(monDone); s.monitor(monCtx) }()
	return func() { stopMon(); <-monDone }
}

// serving is the host's Serve on its own goroutine.
type serving struct {
	stop    context.CancelFunc // ends Serve
	served  chan error         // Serve's return
	start   time.Time
	stopped bool // the run stopped the host and saw Serve return
}

// serve runs srv's Serve on ln until ctx ends or the returned serving's
// stop.
func serve(ctx context.Context, srv *host.Server, ln net.Listener) *serving {
	hostCtx, stopHost := context.WithCancel(ctx)
	h := &serving{stop: stopHost, served: make(chan error, 1), start: time.Now()}
	go func() { h.served <- srv.Serve(hostCtx, ln) }()
	return h
}

// abandon stops the host if the run did not, waiting up to a minute for
// Serve to return.
func (h *serving) abandon() {
	if !h.stopped {
		h.stop()
		select {
		case <-h.served:
		case <-time.After(time.Minute): // reported already; do not hang
		}
	}
	h.stop()
}

// soakFor is the soak proper, for the configured duration: the warm-up,
// then the figures the end is compared with, then the chaos; then it
// settles the population back to the warm-up's and takes the figures
// compared with those.
func (s *soak) soakFor(ctx context.Context, res *Result, addr string) error {
	soakStart := time.Now()
	end := soakStart.Add(s.cfg.Duration)
	if !sleepCtx(ctx, s.cfg.Warmup) {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	s.warmSample(res, end)
	s.chaosWithHostiles(ctx, addr, end)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	res.Soaked = time.Since(soakStart)
	fmt.Fprintf(s.cfg.Out, "[%s] chaos over; settling\n", s.elapsed())
	s.endSample(res)
	return nil
}

// newHost generates the world and the host of it that autosaves to
// savePath, and keeps the host in s.srv.
func (s *soak) newHost(savePath string) (*colony.World, *host.Server, error) {
	world, err := colony.New(s.bundle.Content, colony.Config{Seed: s.cfg.Seed})
	if err != nil {
		return nil, nil, fmt.Errorf("generate world: %w", err)
	}
	hostCfg := s.hostConfig(savePath)
	srv, err := host.New(hostCfg, hostcontent.Content(s.bundle, hostCfg.Logger), world)
	if err != nil {
		return nil, nil, fmt.Errorf("host: %w", err)
	}
	s.srv = srv
	return world, srv, nil
}

// openSlots gives every client slot its relay to the host at addr; the
// slots opened before an error stay in s.slots, to be closed.
func (s *soak) openSlots(addr string) error {
	for i := 0; i < s.cfg.Clients; i++ {
		r, err := testkit.NewRelay(addr)
		if err != nil {
			return err
		}
		s.slots = append(s.slots, &slot{full: i < s.cfg.Full, relay: r})
	}
	return nil
}

// warmSample takes the figures after the warm-up that the end is
// compared with.
func (s *soak) warmSample(res *Result, end time.Time) {
	res.Warm = s.steady(time.Second)
	s.heapProfile("heap-warm.pprof")
	fmt.Fprintf(s.cfg.Out, "[%s] warm-up sample: %d clients, %d goroutines, live heap %s, RSS %s; chaos until %s\n",
		s.elapsed(), res.Warm.clients, res.Warm.goroutines, mib(res.Warm.heapLive), kib(res.Warm.rss), end.Sub(s.start).Round(time.Second))
}

// chaosWithHostiles runs the chaos until end with the hostile clients of
// the host at addr beside it.
func (s *soak) chaosWithHostiles(ctx context.Context, addr string, end time.Time) {
	hostileCtx, stopHostile := context.WithCancel(ctx)
	hostileDone := make(chan struct{})
	go func() { defer close(hostileDone); s.hostiles(hostileCtx, addr) }()
	s.chaos(end)
	stopHostile()
	<-hostileDone
}

// endSample settles the population back to the warm-up's, takes the
// figures compared with the warm-up's and checks sync and the light bots.
func (s *soak) endSample(res *Result) {
	s.settle(res)
	res.End = s.steady(time.Second)
	s.heapProfile("heap-end.pprof")
	s.checkSync(res)
	s.checkLight(res)
}

// leaveAndStop has every client leave, waits for the host's goroutines to
// come back to the baseline, then stops the host (stopHost) and waits up
// to a minute for its Serve to return on served.
func (s *soak) leaveAndStop(res *Result, srv *host.Server, stopHost func(), served <-chan error) error {
	s.stopAll()
	for _, sl := range s.slots {
		sl.relay.Close()
	}
	res.AfterLeave = s.waitGoroutines(res.Base.goroutines, settleGoroutines)

	res.HostStats = srv.Overview().Stats
	stopHost()
	select {
	case err := <-served:
		if err != nil {
			res.fail("host", "the host's Serve returned an error: %v", err)
		}
		return nil
	case <-time.After(time.Minute):
		return errors.New("the host did not stop within a minute")
	}
}

// finalChecks checks the saves and the hostile clients' effect once the
// host stopped, collects the figures and prints the report.
func (s *soak) finalChecks(res *Result, savePath string, world *colony.World) {
	s.checkSaves(res, savePath, world)
	s.checkHostile(res, res.Soaked-s.cfg.Warmup)
	s.collect(res)
	res.Wall = time.Since(s.start)
	res.report(s.cfg.Out)
}

// Goroutines once the clients, then the host, are gone: the count is
// given settleGoroutines to come back to where it was and must then be
// within the slack (after every client left, the host may still be
// finishing a join point or an autosave; after it stopped, nothing of it
// may remain but a runtime goroutine or two).
const (
	settleGoroutines = 5 * time.Second
	leakSlack        = 10
	stopSlack        = 5
)

// soakDropCooldown is the host's cool-down after a drop for lagging or
// desyncs, which the hostile clients wait out.
const soakDropCooldown = 5 * time.Second

// gameName is the soak's game, announced to joiners and written in its
// saves.
const gameName = "lockhost soak"

// hostConfig is the host of the soak: the default world's settings of
// host serve, room for every bot, no connection rate limit (every bot
// comes from one address), and a desync limit no injection reaches
// (they are on purpose; a drop for desyncing then means a repair that
// did not work).
func (s *soak) hostConfig(savePath string) host.Config {
	cfg := s.cfg
	meta := hostcontent.SaveMeta(s.bundle, gameName)
	return host.Config{
		GameName: gameName,
		// The bots join from one address, up to 8 at once plus the
		// chaos's; the hostile clients each have their own, all in
		// 127.0.0.0/24, so the share per network is lifted.
		// Short enough for the hostile clients to be dropped within a
		// short soak, long enough for a loaded machine's bots.
		Observer: observer{&s.hostile},
		Save: host.SaveConfig{Path: savePath, Every: cfg.Autosave, Keep: cfg.Keep,
			Meta: func() saves.Meta { return meta }},
		Logger: cfg.Logger.With("side", "host"),
		AfterTick: func(res lockstep.TickResult, sim lockstep.Sim) {
			s.n.applied.Add(int64(len(res.Accepted)))
			s.n.refused.Add(int64(len(res.Rejected)))
			t := sim.Tick()
			s.hostTick.Store(t)
			if p := s.probe.tick.Load(); res.Stepped && p != 0 && t == p {
				s.probe.host(sim)
			}
		},
		Limits:    host.LimitConfig{MaxPlayers: cfg.Clients + 16},
		Admission: host.AdmissionConfig{ConnRate: -1, MaxPendingPerAddr: 16, MaxPendingPerPrefix: -1},
		Timeouts:  host.TimeoutConfig{DownloadStall: 5 * time.Second},
		Join:      host.JoinConfig{MinDownloadRate: 256 << 10},
		Lag:       host.LagConfig{MaxHold: 10 * time.Second, DropCooldown: soakDropCooldown},
		Desync:    host.DesyncConfig{ResyncTimeout: 15 * time.Second, HashEvery: cfg.HashEvery, Limit: 1 << 20},
	}
}

// initialJoins fills every slot, a few joins at a time.
func (s *soak) initialJoins() error {
	const parallel = 8
	for i := 0; i < len(s.slots); i += parallel {
		s.mu.Lock()
		for _, sl := range s.slots[i:min(i+parallel, len(s.slots))] {
			s.startJoin(sl, false)
		}
		s.mu.Unlock()
		s.joins.Wait()
		if s.ctx.Err() != nil {
			return s.ctx.Err()
		}
	}
	if n := s.online(); n != len(s.slots) {
		_, first := s.problemsOf(&s.probs.join)
		return fmt.Errorf("only %d of %d clients could join: %v", n, len(s.slots), first)
	}
	return nil
}

// online counts the slots with a bot in the session.
func (s *soak) online() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onlineLocked()
}

func (s *soak) onlineLocked() int {
	n := 0
	for _, sl := range s.slots {
		if sl.state == slotOnline || sl.state == slotLeaving {
			n++
		}
	}
	return n
}

func (s *soak) noteOnlineLocked() {
	s.peakOnline = max(s.peakOnline, s.onlineLocked())
}

// settle lets every join and repair under way finish, fills the slots
// the chaos left empty (the warm-up's population again) and waits for
// the host to see everyone playing and caught up.
func (s *soak) settle(res *Result) {
	if !waitGroup(&s.joins, time.Minute) {
		res.fail("settle", "joins still under way a minute after the chaos stopped")
	}
	if !waitGroup(&s.injecting, time.Minute) {
		res.fail("settle", "desync repairs still under way a minute after the chaos stopped")
	}
	s.mu.Lock()
	for _, sl := range s.slots {
		if sl.state == slotEmpty {
			s.startJoin(sl, true)
		}
	}
	s.mu.Unlock()
	if !waitGroup(&s.joins, time.Minute) {
		res.fail("settle", "refilling joins still under way after a minute")
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s.hostSettled() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
}

// hostSettled is true when the host lists exactly the online bots, all
// playing, none repairing, none far behind.
func (s *soak) hostSettled() bool {
	o := s.srv.Overview()
	if len(o.Players) != s.online() {
		return false
	}
	for _, p := range o.Players {
		if p.Status != "playing" || p.Repairing || p.TicksBehind > lightLagBound {
			return false
		}
	}
	st := s.srv.Overview().Stats
	return st.Repaired == st.Desyncs
}

// stopAll ends every bot's session gracefully and waits for them.
func (s *soak) stopAll() {
	s.mu.Lock()
	var bs []*bot
	for _, sl := range s.slots {
		if sl.bot != nil {
			bs = append(bs, sl.bot)
		}
	}
	s.mu.Unlock()
	for _, b := range bs {
		b.ending.CompareAndSwap(endNone, endStop)
		b.cancel()
	}
	waitGroup(&s.joins, time.Minute)
	waitGroup(&s.injecting, time.Minute)
	// Joins that finished meanwhile.
	s.mu.Lock()
	for _, sl := range s.slots {
		if b := sl.bot; b != nil {
			b.ending.CompareAndSwap(endNone, endStop)
			b.cancel()
		}
	}
	s.mu.Unlock()
	waitGroup(&s.bots, time.Minute)
}

// monitor keeps the peaks and prints a progress line now and then.
func (s *soak) monitor(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	next := s.start.Add(s.cfg.Progress)
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			g := int64(runtime.NumGoroutine())
			if g > s.peakG.Load() {
				s.peakG.Store(g)
			}
			if now.After(next) {
				next = next.Add(s.cfg.Progress)
				s.progress()
			}
		}
	}
}

// progress prints one line: elapsed, clients online, joins, commands,
// desyncs repaired, goroutines, RSS.
func (s *soak) progress() {
	repaired := s.srv.Overview().Stats.Repaired
	fmt.Fprintf(s.cfg.Out, "[%s] online %d/%d, joins %d (%d rejoins), leaves %d, drops %d, commands %d sent %d applied, desyncs %d injected %d repaired, goroutines %d, RSS %s\n",
		s.elapsed(), s.online(), s.cfg.Clients, s.n.joins.Load(), s.n.rejoins.Load(), s.n.leaves.Load(), s.n.drops.Load(),
		s.n.sent.Load(), s.n.applied.Load(), s.n.perturbed.Load(), repaired, runtime.NumGoroutine(), kib(currentRSS()))
}

func (s *soak) elapsed() string {
	return time.Since(s.start).Round(time.Second).String()
}

// sample takes the process's figures; with gc it collects garbage first
// so the heap is what is live.
func (s *soak) sample(gc bool) sample {
	if gc {
		runtime.GC()
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return sample{at: time.Since(s.start), clients: s.online(), goroutines: runtime.NumGoroutine(),
		heapLive: ms.HeapAlloc, heapInuse: ms.HeapInuse, rss: currentRSS()}
}

// heapProfile writes a heap profile into cfg.HeapProfiles, if set.
func (s *soak) heapProfile(name string) {
	if s.cfg.HeapProfiles == "" {
		return
	}
	path := filepath.Join(s.cfg.HeapProfiles, name)
	f, err := os.Create(path)
	if err == nil {
		err = pprof.WriteHeapProfile(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(s.cfg.Out, "heap profile %s: %v\n", path, err)
	}
}

// steady samples over a while and keeps the fewest goroutines seen, so a
// goroutine that lives for a moment (a keepalive, a join point being
// built) does not count as held.
func (s *soak) steady(d time.Duration) sample {
	best := s.sample(true)
	for end := time.Now().Add(d); time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		best.goroutines = min(best.goroutines, runtime.NumGoroutine())
	}
	return best
}

// waitGoroutines waits up to d for the goroutines to drop to at most
// limit and returns the last count.
func (s *soak) waitGoroutines(limit int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := runtime.NumGoroutine()
		if n <= limit || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitGroup waits for wg for at most d.
func waitGroup(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// sleepCtx sleeps for d unless ctx ends first (false then).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
