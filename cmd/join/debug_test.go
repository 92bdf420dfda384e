package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
)

func TestParseCorrupt(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ok      bool
		mapID   int32
		tick    uint64
		nothing bool
	}{
		{"", true, 0, 0, true},
		{"2@600", true, 2, 600, false},
		{"0@0", true, 0, 0, false},
		{"2", false, 0, 0, false},
		{"2@", false, 0, 0, false},
		{"@600", false, 0, 0, false},
		{"x@600", false, 0, 0, false},
		{"2@-1", false, 0, 0, false},
		{"99999999999@1", false, 0, 0, false},
	} {
		c, err := parseCorrupt(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if tc.nothing != (c == nil) || c != nil && (c.mapID != tc.mapID || c.tick != tc.tick) {
			t.Errorf("%q: %+v", tc.in, c)
		}
	}
}

// TestCorruptOnce: the switch changes the named map once, at the first
// step at or past its tick, and no other map.
func TestCorruptOnce(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	w, err := colony.New(b.Content, colony.Config{Maps: 2, Width: 64, Height: 64, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	twin := w.Clone().(*colony.World)
	c, _ := parseCorrupt("1@5")
	var errOut strings.Builder
	stderr = &errOut
	defer func() { stderr = os.Stderr }()
	for i := 0; i < 10; i++ {
		w.Step()
		twin.Step()
		c.onStep(w)
		h0, _ := w.MapHash(0)
		t0, _ := twin.MapHash(0)
		h1, _ := w.MapHash(1)
		t1, _ := twin.MapHash(1)
		if h0 != t0 {
			t.Fatalf("tick %d: map 0 changed", w.Tick())
		}
		if (h1 != t1) != (w.Tick() >= 5) {
			t.Fatalf("tick %d: map 1 differs=%v", w.Tick(), h1 != t1)
		}
	}
	if n := strings.Count(errOut.String(), "corrupted map 1"); n != 1 {
		t.Fatalf("output %q: want one corruption", errOut.String())
	}
}

func TestDescribeDesync(t *testing.T) {
	for _, tc := range []struct {
		d    join.DesyncEvent
		want string
	}{
		{join.DesyncEvent{Name: "Alice", Tick: 600, Maps: []int32{2}}, "Alice's map 2 diverged from the host's at tick 600; repairing"},
		{join.DesyncEvent{Name: "Alice", Tick: 600, World: true}, "Alice's world state diverged"},
		{join.DesyncEvent{Kind: join.DesyncRepaired, Name: "Bob", Tick: 60, Maps: []int32{1, 3}, Repair: 4 * time.Millisecond}, "Bob is in sync again (map 1,3 from tick 60 repaired in 4 ms)"},
		{join.DesyncEvent{Kind: join.DesyncDropped, Name: "Eve", Tick: 9, Maps: []int32{0}}, "Eve kept diverging"},
	} {
		if got := describeDesync(tc.d); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestDebugProfiles: the hidden --debug-memprofile and --debug-cpuprofile
// write profiles that pprof's format reads (gzip-compressed protobuf):
// the heap profile after WorldReady holds the loaded world's allocations,
// the CPU profile covers the join; an unwritable path is an error.
func TestDebugProfiles(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b)
	for _, tc := range []struct {
		flag string
		want []string // what the profile's bytes name
	}{
		{"--debug-memprofile", []string{"colony."}},
		{"--debug-cpuprofile", []string{"cpu", "nanoseconds"}},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "out.pprof")
			code, out, errOut := runJoin(t, addr, "--name", "Alice", "--exit-after-ready", "-q", tc.flag, name)
			if code != cliutil.ExitOK || !strings.Contains(out, "WorldReady") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("profile is not gzip: %v", err)
			}
			raw, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !bytes.Contains(raw, []byte(w)) {
					t.Errorf("profile of %d bytes does not name %q", len(raw), w)
				}
			}
			bad := filepath.Join(t.TempDir(), "missing", "out.pprof")
			if code, _, errOut := runJoin(t, addr, "--name", "Bob", "--exit-after-ready", "-q", tc.flag, bad); code == cliutil.ExitOK || !strings.Contains(errOut, tc.flag) {
				t.Errorf("unwritable profile: exit %d, stderr %q", code, errOut)
			}
		})
	}
}
