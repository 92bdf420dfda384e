package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/internal/hugeheap"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
)

// corruption is the hidden --debug-corrupt-map switch: it changes one map
// on this machine only, once, at the first step that reaches a tick, so
// desync detection and repair can be exercised from outside.
type corruption struct {
	mapID int32
	tick  uint64
	done  bool
}

// parseCorrupt reads MAP@TICK; an empty value is no corruption.
func parseCorrupt(v string) (*corruption, error) {
	if v == "" {
		return nil, nil
	}
	m, t, ok := strings.Cut(v, "@")
	id, err1 := strconv.ParseInt(m, 10, 32)
	tick, err2 := strconv.ParseUint(t, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return nil, cliutil.Usagef("--debug-corrupt-map %q: use MAP@TICK, for example 2@600", v)
	}
	return &corruption{mapID: int32(id), tick: tick}, nil
}

// onStep runs on the simulation goroutine after every step.
func (c *corruption) onStep(sim lockstep.Sim) {
	if c == nil || c.done || sim.Tick() < c.tick {
		return
	}
	c.done = true
	w, ok := sim.(*colony.World)
	if !ok {
		fmt.Fprintln(stderr, "debug: this simulation cannot be corrupted on purpose")
		return
	}
	if err := w.Perturb(c.mapID); err != nil {
		fmt.Fprintln(stderr, "debug:", err)
		return
	}
	fmt.Fprintf(stderr, "debug: corrupted map %d at tick %d on this machine\n", c.mapID, sim.Tick())
}

// describeDesync is a desync event as one line.
func describeDesync(d join.DesyncEvent) string {
	what := fmt.Sprintf("map %s", joinIDs(d.Maps))
	if len(d.Maps) == 0 {
		what = "world state"
	}
	switch d.Kind {
	case join.DesyncDetected:
		return fmt.Sprintf("%s's %s diverged from the host's at tick %d; repairing", d.Name, what, d.Tick)
	case join.DesyncRepaired:
		return fmt.Sprintf("%s is in sync again (%s from tick %d repaired in %d ms)", d.Name, what, d.Tick, d.Repair.Milliseconds())
	case join.DesyncDropped:
		return fmt.Sprintf("%s kept diverging (%s at tick %d) and was dropped", d.Name, what, d.Tick)
	}
	return fmt.Sprintf("%s: %s at tick %d", d.Kind, what, d.Tick)
}

func joinIDs(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}

// memProfile is the hidden --debug-memprofile switch: the file is created
// before joining, so a bad path fails at once, and written once the world
// is in (write).
type memProfile struct{ f *os.File }

// openMemProfile creates the profile file; an empty name is no profile.
func openMemProfile(name string) (*memProfile, error) {
	if name == "" {
		return nil, nil
	}
	f, err := createProfile("--debug-memprofile", name)
	if err != nil {
		return nil, err
	}
	// One sample every 4 KiB allocated, not Go's 512 KiB: a world's maps
	// are packed small (a 250-cell square map's terrain is 31 KiB) and
	// would mostly be missed.
	runtime.MemProfileRate = memProfileRate
	return &memProfile{f: f}, nil
}

// memProfileRate is the heap profile's sampling with --debug-memprofile.
const memProfileRate = 4 << 10

// write collects garbage, so the profile shows what is live (right after
// WorldReady: the loaded world, caught up), and writes the heap profile
// (go tool pprof) to the file.
func (p *memProfile) write() error {
	if p == nil {
		return nil
	}
	runtime.GC()
	err := pprof.Lookup("heap").WriteTo(p.f, 0)
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--debug-memprofile: %w", err)
	}
	return nil
}

// close closes the file if write did not (the join failed).
func (p *memProfile) close() {
	if p != nil {
		_ = p.f.Close()
	}
}

// cpuProfile is the hidden --debug-cpuprofile switch: a CPU profile (go
// tool pprof) of the join from the start to WorldReady, where the time of
// decompressing, loading and catching up goes.
type cpuProfile struct{ f *os.File }

// startCPUProfile creates the file and starts profiling; an empty name
// is no profile.
func startCPUProfile(name string) (*cpuProfile, error) {
	if name == "" {
		return nil, nil
	}
	f, err := createProfile("--debug-cpuprofile", name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--debug-cpuprofile: %w", err)
	}
	return &cpuProfile{f: f}, nil
}

// stop ends profiling and closes the file; later calls do nothing.
func (p *cpuProfile) stop() error {
	if p == nil || p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	if err != nil {
		return fmt.Errorf("--debug-cpuprofile: %w", err)
	}
	return nil
}

// createProfile creates the file a profile switch names, so a bad path
// fails before joining; errors name the switch.
func createProfile(flag, name string) (*os.File, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return f, nil
}

// prepareMemory readies the heap for a world of raw bytes downloaded in
// payload bytes: on Linux, where the kernel leaves huge pages to programs
// that ask, it asks (internal/hugeheap). A join then takes a few thousand
// page faults instead of one per 4 KiB of the world, which in a virtual
// machine was a third of its CPU time. The loaded world takes about a
// quarter more than its raw encoding, and the compressed blobs are kept
// until WorldReady.
func prepareMemory(log *slog.Logger, raw, payload uint64) {
	n := raw + raw/4 + payload
	log.Debug("huge pages for the world's memory", "bytes", n, "asked", hugeheap.Prepare(n))
}
