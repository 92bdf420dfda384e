package colony

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/procstat"
)

// TestLoadMemory compares the memory and time a joiner needs to load a
// world of SizedConfig(COLONY_LOADMEM MiB) with Load, all raw maps held,
// and with MapLoader, each map's raw bytes dropped after AddMap. It only
// runs when COLONY_LOADMEM is set (to the size in MiB, e.g. 64); see the
// log (-v) for the figures.
//
// The world is generated, stepped and written to files here; each
// measurement runs in a child process that reads the files, so its peak
// RSS (VmHWM, reset just before the load) counts only the load: the raw
// bytes read and the world built. Each mode runs twice: once left to the
// garbage collector (time, peak RSS, heap in use sampled after each map,
// bytes allocated) and once with a collection before every sample (the
// live heap at its highest: what the load itself holds). MapLoader runs
// once more reading every map into one reused buffer, as a joiner that
// inflates into one buffer would.
func TestLoadMemory(t *testing.T) {
	if mode := os.Getenv("COLONY_LOADMEM_CHILD"); mode != "" {
		loadMemoryChild(t, mode, os.Getenv("COLONY_LOADMEM_DIR"))
		return
	}
	mib, _ := strconv.Atoi(os.Getenv("COLONY_LOADMEM"))
	if mib <= 0 {
		t.Skip("set COLONY_LOADMEM to a world size in MiB (e.g. 64) to measure")
	}
	c := testContent(t)
	cfg := SizedConfig(int64(mib)<<20, 1)
	w := mustNew(t, c, cfg)
	for range 50 {
		w.Step()
	}
	dir := t.TempDir()
	world, err := w.MarshalWorld()
	if err != nil {
		t.Fatal(err)
	}
	raw := len(world)
	if err := os.WriteFile(filepath.Join(dir, "world"), world, 0o600); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, id := range w.MapIDs() {
		if buf, err = w.AppendMap(buf[:0], id); err != nil {
			t.Fatal(err)
		}
		raw += len(buf)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(id)), buf, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := fmt.Sprintf("%016x", w.WorldHash())
	t.Logf("world %+v: %d maps, %.1f MiB raw, hash %s", cfg, len(w.MapIDs()), float64(raw)/(1<<20), want)
	w, buf = nil, nil
	for _, mode := range []string{"load", "maps", "maps-reuse", "load-live", "maps-live"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLoadMemory$", "-test.v")
		cmd.Env = append(os.Environ(), "COLONY_LOADMEM_CHILD="+mode, "COLONY_LOADMEM_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		found := false
		for line := range strings.Lines(string(out)) {
			if _, rest, ok := strings.Cut(line, "RESULT "); ok {
				found = true
				t.Logf("%-10s %s", mode, strings.TrimSpace(rest))
				if !strings.Contains(rest, "hash "+want) {
					t.Errorf("%s: loaded world has another hash than %s", mode, want)
				}
			}
		}
		if !found {
			t.Fatalf("%s: no result\n%s", mode, out)
		}
	}
}

// loadMemoryChild loads the world in dir (mode "load", "maps" or
// "maps-reuse", which reads every map into one reused buffer, with "-live"
// for the collected runs) and prints one RESULT line.
func loadMemoryChild(t *testing.T, mode, dir string) {
	live := strings.HasSuffix(mode, "-live")
	byMaps := strings.HasPrefix(mode, "maps")
	reuse := strings.HasPrefix(mode, "maps-reuse")
	c := testContent(t)
	loader, whole := MapLoader(c), Loader(c) // content compiled before measuring
	n := 0
	for {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprint(n))); err != nil {
			break
		}
		n++
	}
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms
	baseRSS := uint64(procstat.RSS(os.Getpid())) << 10 // KiB to bytes
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset peak RSS: %v", err)
	}

	var peakInuse, peakAlloc uint64
	sample := func() {
		if live {
			runtime.GC()
		}
		runtime.ReadMemStats(&ms)
		peakInuse = max(peakInuse, ms.HeapInuse)
		peakAlloc = max(peakAlloc, ms.HeapAlloc)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var took time.Duration
	var w *World
	world := read("world")
	if byMaps {
		t0 := time.Now()
		a, err := loader.Begin(world, n)
		if err != nil {
			t.Fatal(err)
		}
		took += time.Since(t0)
		var scratch []byte
		for id := range n {
			var data []byte
			if reuse {
				scratch = readInto(t, scratch, filepath.Join(dir, fmt.Sprint(id)))
				data = scratch
			} else {
				data = read(fmt.Sprint(id))
			}
			t0 := time.Now()
			if err := a.AddMap(lockstep.MapBlob{ID: int32(id), Data: data}); err != nil {
				t.Fatal(err)
			}
			took += time.Since(t0)
			sample() // the map's raw bytes still alive
			runtime.KeepAlive(data)
		}
		t0 = time.Now()
		sim, err := a.Finish()
		if err != nil {
			t.Fatal(err)
		}
		took += time.Since(t0)
		w = sim.(*World)
	} else {
		maps := make([]lockstep.MapBlob, n)
		for id := range n {
			maps[id] = lockstep.MapBlob{ID: int32(id), Data: read(fmt.Sprint(id))}
		}
		t0 := time.Now()
		sim, err := whole(world, maps)
		if err != nil {
			t.Fatal(err)
		}
		took = time.Since(t0)
		w = sim.(*World)
		sample() // every raw map still alive
		runtime.KeepAlive(maps)
	}
	runtime.ReadMemStats(&ms)
	hwm := uint64(procstat.PeakRSS(os.Getpid())) << 10
	mb := func(v uint64) string { return fmt.Sprintf("%.1f", float64(v)/(1<<20)) }
	fmt.Printf("RESULT load %v; peak RSS %s MiB (+%s over %s before); peak HeapInuse %s MiB, HeapAlloc %s MiB (+%s over %s before); Sys %s MiB (+%s); TotalAlloc +%s MiB; GCs %d; hash %016x\n",
		took.Round(time.Millisecond), mb(hwm), mb(hwm-baseRSS), mb(baseRSS),
		mb(peakInuse), mb(peakAlloc), mb(peakAlloc-base.HeapAlloc), mb(base.HeapAlloc),
		mb(ms.Sys), mb(ms.Sys-base.Sys), mb(ms.TotalAlloc-base.TotalAlloc), ms.NumGC-base.NumGC, w.WorldHash())
}

// readInto reads a file into buf, growing it if needed.
func readInto(t *testing.T, buf []byte, name string) []byte {
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	buf = slices.Grow(buf[:0], int(fi.Size()))[:fi.Size()]
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.ReadFull(f, buf); err != nil {
		t.Fatal(err)
	}
	return buf
}

// TestLoadedThingsHaveRoom: the things of a loaded map have room to grow,
// so the ticks a joiner replays right after loading do not copy every
// map's things into a slice a quarter larger (72 MiB copied, and as much
// left as garbage, on a 204 MiB world: a fifth of a joiner's peak
// memory). Without the room every map's slice was reallocated in the
// first hundred ticks.
func TestLoadedThingsHaveRoom(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, SizedConfig(8<<20, 1))
	run(t, w, newScript(1, c), 100)
	world, maps := snapshot(t, w)
	got, err := Load(c, world, maps)
	if err != nil {
		t.Fatal(err)
	}
	caps := make([]int, len(got.maps))
	lens := make([]int, len(got.maps))
	for i, m := range got.maps {
		caps[i], lens[i] = cap(m.Things), len(m.Things)
	}
	for range 300 {
		got.Step()
	}
	grew := false
	for i, m := range got.maps {
		if cap(m.Things) != caps[i] {
			t.Errorf("map %d: things reallocated within 300 ticks (%d things, room for %d, now %d)", m.ID, lens[i], caps[i], len(m.Things))
		}
		grew = grew || len(m.Things) > lens[i]
	}
	if !grew {
		t.Fatal("no map gained things in 300 ticks: the test shows nothing")
	}
}
