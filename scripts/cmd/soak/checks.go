package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/wire"
)

// Bounds of the checks.
const (
	// lightLagBound is how far behind the host's tick a client's last
	// acknowledged tick may be at the end (two seconds at 60 ticks/s,
	// the host's default MaxLag; a client acknowledges every 50 ms).
	lightLagBound = 120
	// goroutineGrowth and goroutineSlack bound the goroutines at the
	// end against the warm-up with the same number of clients:
	// warm-up*(1+growth) + slack.
	goroutineGrowth = 0.10
	goroutineSlack  = 50
	// heapGrowth and heapSlack bound the live heap after a forced GC at
	// the end against the warm-up: warm-up*growth + slack. The world
	// grows a little as bots spawn things, and clients that join later
	// load the bigger world.
	heapGrowth = 1.5
	heapSlack  = 32 << 20
	// probeAhead is how many ticks ahead of the host the sync probe is
	// taken, so every client is still before it.
	probeAhead = 90
)

// Result is a finished soak: the figures and the checks that failed.
type Result struct {
	Config Config
	// Failures has one line per failed check; empty is a pass.
	Failures []string
	// Checked lists every check made, passed or not.
	Checked []string

	// Wall is the whole run; JoinTime the initial joins; Soaked the
	// warm-up and the chaos (Config.Duration, give or take an event);
	// HostUptime from the host's start to its stop.
	Wall, JoinTime, Soaked, HostUptime time.Duration
	// What the hostile clients met: squatters dropped as too slow, the
	// lag griefer's and desync looper's drops and refused rejoins, and
	// the flood's connections.
	HostileSquatDrops, HostileLagDrops, HostileLagRefused, HostileDesyncDrops, HostileDesyncRefused, HostileFlood int64
	// Pre is before the host, Base the host alone, Warm after warm-up,
	// End after the chaos with the warm-up's population.
	Pre, Base, Warm, End sample
	// AfterLeave is the goroutines once every client left (host still
	// up), AfterStop once the host stopped too; PeakGoroutines the most
	// seen (sampled every second).
	AfterLeave, AfterStop, PeakGoroutines int
	// RSSStart is the resident set before the host, RSSPeak the
	// process's highest, in KiB.
	RSSStart, RSSPeak int64

	// InitialJoins filled the slots at the start; Joins counts every
	// successful join, Rejoins those with a session token among them.
	// Leaves and Drops are the chaos's graceful leaves and cut
	// connections; PeakOnline the most clients in the session at once.
	InitialJoins, Joins, Rejoins, Leaves, Drops, PeakOnline int
	// RejoinsHeld of the Rejoins came back from the world they held
	// (docs/protocol.md, section 6.6), RejoinsDownloaded were sent the
	// world; RejoinFallbacks counts, by reason, the held worlds the host
	// turned down.
	RejoinsHeld, RejoinsDownloaded int
	RejoinFallbacks                map[string]int
	// Sent is the commands the bots sent; Applied and Refused what the
	// host made of them.
	Sent, Applied, Refused int64
	// Injected desyncs were armed, Perturbed made; Detected and Repaired
	// are what the corrupted clients were told and swapped in.
	Injected, Perturbed, Detected, Repaired int64
	// SyncChecked is how many full clients were compared with the host;
	// LightChecked how many light ones were seen acknowledging.
	SyncChecked, LightChecked int
	// HostStats are the host's counters once it stopped.
	HostStats host.Stats
	// Autosaves is how many the host wrote; FinalTick and AutosaveTick
	// the ticks of the final save and of the newest autosave.
	Autosaves               int
	FinalTick, AutosaveTick uint64
	// JoinProblems, Disconnects and DesyncProblems count failed joins,
	// unexpected disconnects and injections that went wrong.
	JoinProblems, Disconnects, DesyncProblems int
}

// Passed reports whether every check passed.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// fail records a failed check.
func (r *Result) fail(check, format string, args ...any) {
	r.Failures = append(r.Failures, check+": "+fmt.Sprintf(format, args...))
}

// check records a check and, when ok is false, its failure.
func (r *Result) check(check string, ok bool, format string, args ...any) {
	line := check + ": " + fmt.Sprintf(format, args...)
	r.Checked = append(r.Checked, line)
	if !ok {
		r.Failures = append(r.Failures, line)
	}
}

// probe takes the host's and every full client's hashes at one tick.
type probe struct {
	tick    atomic.Uint64
	mu      sync.Mutex
	hostCP  *lockstep.Checkpoint
	clients map[*bot]lockstep.Checkpoint
}

func (p *probe) host(sim lockstep.Sim) {
	var h lockstep.Hasher
	cp := h.Take(sim)
	p.mu.Lock()
	p.hostCP = &cp
	p.mu.Unlock()
}

func (p *probe) client(b *bot, sim lockstep.Sim) {
	var h lockstep.Hasher
	cp := h.Take(sim)
	p.mu.Lock()
	if p.clients == nil {
		p.clients = map[*bot]lockstep.Checkpoint{}
	}
	p.clients[b] = cp
	p.mu.Unlock()
}

// fullOnline lists the online full bots, and the light ones.
func (s *soak) onlineBots() (full, light []*bot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sl := range s.slots {
		if sl.state != slotOnline {
			continue
		}
		if sl.full {
			full = append(full, sl.bot)
		} else {
			light = append(light, sl.bot)
		}
	}
	return full, light
}

// checkSync compares every online full client's map and world hashes with
// the host's at one tick a little ahead of the host.
func (s *soak) checkSync(res *Result) {
	full, _ := s.onlineBots()
	const name = "full clients in sync"
	var bad []string
	if len(full) != s.cfg.Full {
		bad = append(bad, fmt.Sprintf("only %d of %d full clients online to compare", len(full), s.cfg.Full))
	}
	at := s.hostTick.Load() + probeAhead
	s.probe.tick.Store(at)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		s.probe.mu.Lock()
		done := s.probe.hostCP != nil && len(s.probe.clients) >= len(full)
		s.probe.mu.Unlock()
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.probe.mu.Lock()
	defer s.probe.mu.Unlock()
	if s.probe.hostCP == nil {
		res.check(name, false, "the host did not reach tick %d within 30 s", at)
		return
	}
	hcp := s.probe.hostCP
	for _, b := range full {
		cp, ok := s.probe.clients[b]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s did not reach tick %d", b.name, at))
			continue
		}
		if diff := compareCheckpoints(hcp, &cp); diff != "" {
			bad = append(bad, fmt.Sprintf("%s: %s", b.name, diff))
			continue
		}
		res.SyncChecked++
	}
	if len(bad) > 0 {
		res.check(name, false, "at tick %d: %s", at, strings.Join(bad, "; "))
		return
	}
	res.check(name, true, "%d full clients have the host's world hash %016x and all %d map hashes at tick %d",
		res.SyncChecked, hcp.World, len(hcp.Maps), at)
}

// compareCheckpoints says how a client's checkpoint differs from the
// host's ("" when it does not).
func compareCheckpoints(host, client *lockstep.Checkpoint) string {
	if host.Tick != client.Tick {
		return fmt.Sprintf("hashed at tick %d, the host at %d", client.Tick, host.Tick)
	}
	var diffs []string
	if host.World != client.World {
		diffs = append(diffs, fmt.Sprintf("world hash %016x, the host's %016x", client.World, host.World))
	}
	if len(host.Maps) != len(client.Maps) {
		diffs = append(diffs, fmt.Sprintf("%d maps, the host %d", len(client.Maps), len(host.Maps)))
	}
	for _, hm := range host.Maps {
		cm := client.Map(hm.ID)
		switch {
		case cm == nil:
			diffs = append(diffs, fmt.Sprintf("no map %d", hm.ID))
		case cm.Hash != hm.Hash:
			diffs = append(diffs, fmt.Sprintf("map %d hash %016x, the host's %016x", hm.ID, cm.Hash, hm.Hash))
		}
	}
	return strings.Join(diffs, ", ")
}

// checkLight checks that every light client is still connected and that
// the host heard it acknowledge a tick recently; full clients must be
// playing and caught up too.
func (s *soak) checkLight(res *Result) {
	full, light := s.onlineBots()
	o := s.srv.Overview()
	views := map[int32]host.PlayerView{}
	for _, p := range o.Players {
		views[p.ID] = p
	}
	var bad []string
	for _, b := range append(light, full...) {
		select {
		case <-b.done:
			bad = append(bad, b.name+" is no longer connected")
			continue
		default:
		}
		v, ok := views[b.id.Load()]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("the host does not list %s (player %d)", b.name, b.id.Load()))
		case v.Status != "playing":
			bad = append(bad, fmt.Sprintf("%s is %s", b.name, v.Status))
		case v.TicksBehind > lightLagBound:
			bad = append(bad, fmt.Sprintf("%s last acknowledged a tick %d ticks behind the host", b.name, v.TicksBehind))
		default:
			if !b.slot.full {
				res.LightChecked++
			}
		}
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
		}
		res.check("clients connected and acknowledging", false, "%s", strings.Join(bad, "; "))
		return
	}
	res.check("clients connected and acknowledging", res.LightChecked == s.cfg.Clients-s.cfg.Full,
		"%d light and %d full clients connected, playing, at most %d ticks behind the host (tick %d)",
		res.LightChecked, len(full), lightLagBound, o.Tick)
}

// checkSaves checks the saves the host left: the final save and the
// newest autosave load, the final save is at least as new as every
// autosave and holds exactly the host's last state, and autosaves were
// written as often as asked.
func (s *soak) checkSaves(res *Result, savePath string, world *colony.World) {
	st := res.HostStats
	res.Autosaves = max(0, st.Saves-1) // the final save is one of them
	expected := int(res.HostUptime / s.cfg.Autosave)
	need := max(1, expected/2)
	res.check("autosaves", res.Autosaves >= need, "%d written in %v at one every %v (at least %d wanted), final save written %v",
		res.Autosaves, res.HostUptime.Round(time.Second), s.cfg.Autosave, need, st.Saves > res.Autosaves)

	autos, err := saves.Autosaves(savePath)
	if err != nil {
		res.check("newest autosave loads", false, "list autosaves: %v", err)
	} else if len(autos) == 0 {
		res.check("newest autosave loads", false, "no autosave beside %s", filepath.Base(savePath))
	} else {
		res.check("autosaves kept", len(autos) <= s.cfg.Keep, "%d autosaves on disk, keep is %d", len(autos), s.cfg.Keep)
		_, f, err := s.loadSave(autos[0])
		if err == nil {
			res.AutosaveTick = f.Meta.Tick
		}
		res.check("newest autosave loads", err == nil, "%s: %s", filepath.Base(autos[0]), describeLoad(f, err))
	}

	infos, err := saves.List(filepath.Dir(savePath))
	if err != nil || len(infos) == 0 {
		res.check("latest save loads", false, "list saves: %v (%d found)", err, len(infos))
		return
	}
	newest := infos[0]
	sim, f, err := s.loadSave(newest.Path)
	if err != nil {
		res.check("latest save loads", false, "%s: %v", filepath.Base(newest.Path), err)
		return
	}
	res.FinalTick = f.Meta.Tick
	res.check("latest save loads", newest.Path == savePath && f.Meta.Tick >= res.AutosaveTick,
		"%s (the final save: %v) loads at tick %d, the newest autosave is at tick %d",
		filepath.Base(newest.Path), newest.Path == savePath, f.Meta.Tick, res.AutosaveTick)
	// The host is stopped: its world is the state it saved last.
	res.check("final save is the host's last state", sim.Tick() == world.Tick() && sim.WorldHash() == world.WorldHash(),
		"save at tick %d world hash %016x, host at tick %d world hash %016x", sim.Tick(), sim.WorldHash(), world.Tick(), world.WorldHash())
}

// loadSave reads a save and loads its world as host serve does.
func (s *soak) loadSave(path string) (lockstep.Sim, *saves.File, error) {
	f, err := saves.Read(path)
	if err != nil {
		return nil, nil, err
	}
	sim, err := hostcontent.LoadSave(s.bundle, f)
	if err != nil {
		return nil, f, err
	}
	return sim, f, nil
}

func describeLoad(f *saves.File, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("loads at tick %d (%d bytes)", f.Meta.Tick, f.Size)
}

// collect gathers the counters and makes the remaining checks:
// goroutines, heap, the host's error counters, desyncs and the run's
// problems.
func (s *soak) collect(res *Result) {
	res.Joins, res.Rejoins = int(s.n.joins.Load()), int(s.n.rejoins.Load())
	res.RejoinsHeld, res.RejoinsDownloaded = int(s.n.rejoinsHeld.Load()), int(s.n.rejoinsDownloaded.Load())
	res.RejoinFallbacks = map[string]int{}
	for r := range s.n.fallbacks {
		if n := s.n.fallbacks[r].Load(); n > 0 {
			res.RejoinFallbacks[wire.RejoinResult(r).String()] = int(n)
		}
	}
	res.Leaves, res.Drops = int(s.n.leaves.Load()), int(s.n.drops.Load())
	res.Sent, res.Applied, res.Refused = s.n.sent.Load(), s.n.applied.Load(), s.n.refused.Load()
	res.Injected, res.Perturbed = s.n.injected.Load(), s.n.perturbed.Load()
	res.PeakGoroutines = int(s.peakG.Load())
	s.mu.Lock()
	res.PeakOnline = s.peakOnline
	s.mu.Unlock()
	res.Detected, res.Repaired = s.n.detected.Load(), s.n.repaired.Load()

	w, e := res.Warm, res.End
	gLimit := int(float64(w.goroutines)*(1+goroutineGrowth)) + goroutineSlack
	res.check("goroutines", e.goroutines <= gLimit && e.clients == w.clients,
		"%d at the end with %d clients, %d after warm-up with %d (bound %d = warm-up + %.0f%% + %d)",
		e.goroutines, e.clients, w.goroutines, w.clients, gLimit, goroutineGrowth*100, goroutineSlack)
	res.check("goroutines after every client left", res.AfterLeave <= res.Base.goroutines+leakSlack,
		"%d with the host up and no clients, %d before any client joined (bound +%d)", res.AfterLeave, res.Base.goroutines, leakSlack)
	res.check("goroutines after the host stopped", res.AfterStop <= res.Pre.goroutines+stopSlack,
		"%d, %d before the host started (bound +%d)", res.AfterStop, res.Pre.goroutines, stopSlack)
	hLimit := uint64(float64(w.heapLive)*heapGrowth) + heapSlack
	res.check("heap", e.heapLive <= hLimit, "%s live after a forced GC at the end, %s after warm-up (bound %s = %.1fx + %s)",
		mib(e.heapLive), mib(w.heapLive), mib(hLimit), heapGrowth, mib(heapSlack))

	st := res.HostStats
	// The desync looper's desyncs, repairs begun and drops are on purpose.
	looperDesyncs, looperDrops := int(s.hostile.looperDetected.Load()), int(s.hostile.looperDropped.Load())
	st.Desyncs -= min(st.Desyncs, looperDesyncs)
	st.DesyncDrops -= min(st.DesyncDrops, looperDrops)
	if st.WorldResyncs >= looperDesyncs {
		st.WorldResyncs -= looperDesyncs // a wrong world hash repairs the world
	}
	res.check("host save errors", st.SaveErrors == 0, "%d (last: %q)", st.SaveErrors, st.LastSaveError)
	res.check("host desync drops", st.DesyncDrops == 0, "%d players dropped for desyncing or an unfinished repair", st.DesyncDrops)
	res.check("desyncs only where injected", int64(st.Desyncs) == res.Perturbed,
		"the host detected %d desyncs, %d maps were corrupted on purpose", st.Desyncs, res.Perturbed)
	res.check("desyncs repaired", int64(st.Repaired) == res.Perturbed && int64(st.MapResyncs+st.WorldResyncs) == res.Perturbed &&
		res.Detected == res.Perturbed && res.Repaired == res.Perturbed,
		"host: %d repairs started (%d map, %d world), %d repaired; the corrupted clients were told of %d and swapped in %d; %d corrupted",
		st.MapResyncs+st.WorldResyncs, st.MapResyncs, st.WorldResyncs, st.Repaired, res.Detected, res.Repaired, res.Perturbed)
	res.check("chaos ran", res.Drops > 0 && res.Leaves > 0 && res.Rejoins > 0 && res.Joins > res.InitialJoins+res.Rejoins && res.Perturbed > 0,
		"%d joins after the first %d (%d rejoins), %d leaves, %d drops, %d desyncs", res.Joins-res.InitialJoins, res.InitialJoins,
		res.Rejoins, res.Leaves, res.Drops, res.Perturbed)

	res.check("held-world rejoins", res.RejoinsHeld == st.RejoinsHeld && res.RejoinsHeld+res.RejoinsDownloaded == res.Rejoins,
		"the bots came back %d times from the world they held and %d with a download (%d rejoins); the host counted %d held",
		res.RejoinsHeld, res.RejoinsDownloaded, res.Rejoins, st.RejoinsHeld)

	n, first := s.problemsOf(&s.probs.join)
	res.JoinProblems = n
	res.check("joins", n == 0, "%d failed or came back as the wrong player%s", n, firsts(first))
	n, first = s.problemsOf(&s.probs.disconnect)
	res.Disconnects = n
	res.check("unexpected disconnects", n == 0, "%d%s", n, firsts(first))
	n, first = s.problemsOf(&s.probs.desync)
	res.DesyncProblems = n
	res.check("desync injections", n == 0, "%d went wrong%s", n, firsts(first))
}

// fallbackText says why held worlds were turned down: " (held world
// turned down: 2 window)", or nothing.
func fallbackText(f map[string]int) string {
	if len(f) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(f)) {
		parts = append(parts, fmt.Sprintf("%d %s", f[k], k))
	}
	return " (held world turned down: " + strings.Join(parts, ", ") + ")"
}

func firsts(first []string) string {
	if len(first) == 0 {
		return ""
	}
	return " (" + strings.Join(first, "; ") + ")"
}

// report prints the figures and the verdict.
func (r *Result) report(w io.Writer) {
	c := r.Config
	st := r.HostStats
	fmt.Fprintln(w)
	fmt.Fprintf(w, "duration     %v of warm-up and chaos (%v asked), after %v of initial joins; %v wall in all\n",
		r.Soaked.Round(100*time.Millisecond), c.Duration, r.JoinTime.Round(100*time.Millisecond), r.Wall.Round(100*time.Millisecond))
	fmt.Fprintf(w, "clients      target %d (%d full, %d light), peak %d, at end %d\n", c.Clients, c.Full, c.Clients-c.Full, r.PeakOnline, r.End.clients)
	fmt.Fprintf(w, "joins        %d in all: %d initial, %d rejoins with a token, %d new players\n", r.Joins, r.InitialJoins, r.Rejoins, r.Joins-r.InitialJoins-r.Rejoins)
	fmt.Fprintf(w, "rejoins      %d from the world held (%.1f KiB of commands replayed), %d downloaded%s; the host: %d held, %d downloaded\n",
		r.RejoinsHeld, float64(st.RejoinReplayedBytes)/1024, r.RejoinsDownloaded, fallbackText(r.RejoinFallbacks), st.RejoinsHeld, st.RejoinsDownloaded)
	fmt.Fprintf(w, "leaves       %d graceful, %d drops, %d unexpected disconnects\n", r.Leaves, r.Drops, r.Disconnects)
	fmt.Fprintf(w, "commands     %d sent, %d applied, %d refused\n", r.Sent, r.Applied, r.Refused)
	fmt.Fprintf(w, "desyncs      %d injected (%d made), %d detected, %d repaired by the host (%d map, %d world; %.1f KiB), last repair %v\n",
		r.Injected, r.Perturbed, st.Desyncs, st.Repaired, st.MapResyncs, st.WorldResyncs, float64(st.ResyncBytes)/1024, st.LastRepair.Round(time.Millisecond))
	fmt.Fprintf(w, "hostile      %d squatters dropped as too slow; lag griefer %d drops, %d rejoins refused; desync looper %d drops, %d rejoins refused; %d flood connections\n",
		r.HostileSquatDrops, r.HostileLagDrops, r.HostileLagRefused, r.HostileDesyncDrops, r.HostileDesyncRefused, r.HostileFlood)
	fmt.Fprintf(w, "hashes       %d host checkpoints (%d skipped), %d client reports compared, %d not (their checkpoint skipped)\n", st.Checkpoints, st.CheckpointsSkipped, st.HashReports, st.HashReportsUnchecked)
	fmt.Fprintf(w, "saves        %d autosaves (every %v, keep %d), final save at tick %d, newest autosave at tick %d\n",
		r.Autosaves, c.Autosave, c.Keep, r.FinalTick, r.AutosaveTick)
	fmt.Fprintf(w, "goroutines   %d before the host, %d host alone, %d after warm-up, %d at end, peak %d, %d after all left, %d after the host stopped\n",
		r.Pre.goroutines, r.Base.goroutines, r.Warm.goroutines, r.End.goroutines, r.PeakGoroutines, r.AfterLeave, r.AfterStop)
	fmt.Fprintf(w, "RSS          %s at start, %s after warm-up, %s at end, %s peak\n", kib(r.RSSStart), kib(r.Warm.rss), kib(r.End.rss), kib(r.RSSPeak))
	fmt.Fprintf(w, "heap         live %s at start, %s after warm-up, %s at end; in use (spans) %s, %s, %s (each after a forced GC)\n",
		mib(r.Pre.heapLive), mib(r.Warm.heapLive), mib(r.End.heapLive), mib(r.Pre.heapInuse), mib(r.Warm.heapInuse), mib(r.End.heapInuse))
	fmt.Fprintln(w)
	for _, line := range r.Checked {
		mark := "ok  "
		if slices.Contains(r.Failures, line) {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %s\n", mark, line)
	}
	for _, f := range r.Failures {
		if !slices.Contains(r.Checked, f) {
			fmt.Fprintf(w, "FAIL %s\n", f)
		}
	}
	if r.Passed() {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintf(w, "FAIL (%d of the checks)\n", len(r.Failures))
	}
}

// currentRSS is this process's resident set in KiB (0 if unknown).
func currentRSS() int64 { return procstat.RSS(os.Getpid()) }

// peakRSS is this process's peak resident set in KiB.
func peakRSS() int64 { return procstat.PeakRSS(os.Getpid()) }

func kib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/1024) }

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
