package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

// TestSoakShort runs a short soak in process: 12 clients, 4 of them full,
// for 12 seconds. It must pass every check and must have made every kind
// of chaos event at least once (the first events of any soak are one of
// each).
func TestSoakShort(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12-second soak with 12 clients")
	}
	var out syncbuf.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{Duration: 12 * time.Second, Clients: 12, Full: 4, Seed: 3, Out: &out})
	t.Logf("soak output:\n%s", out.String())
	if err != nil {
		t.Fatalf("soak did not run: %v", err)
	}
	if !res.Passed() {
		t.Fatalf("soak failed:\n%s", strings.Join(res.Failures, "\n"))
	}
	counts := []struct {
		what string
		n    int64
	}{
		{"new players joined during the chaos", int64(res.Joins - res.InitialJoins - res.Rejoins)},
		{"rejoins with a token", int64(res.Rejoins)},
		{"rejoins from the world held", int64(res.RejoinsHeld)},
		{"graceful leaves", int64(res.Leaves)},
		{"drops", int64(res.Drops)},
		{"desyncs made", res.Perturbed},
		{"desyncs the host detected", int64(res.HostStats.Desyncs)},
		{"desyncs the host repaired", int64(res.HostStats.Repaired)},
		{"autosaves", int64(res.Autosaves)},
		{"commands applied", res.Applied},
	}
	for _, c := range counts {
		if c.n < 1 {
			t.Errorf("%s: %d, want at least 1", c.what, c.n)
		}
	}
	if res.InitialJoins != 12 || res.SyncChecked != 4 || res.LightChecked != 8 {
		t.Errorf("initial joins %d, full clients compared %d, light clients seen %d: want 12, 4, 8",
			res.InitialJoins, res.SyncChecked, res.LightChecked)
	}
	if res.FinalTick == 0 || res.FinalTick < res.AutosaveTick {
		t.Errorf("final save at tick %d, newest autosave at %d", res.FinalTick, res.AutosaveTick)
	}
	if !strings.Contains(out.String(), "\nPASS\n") {
		t.Error("the report does not end in PASS")
	}
}

// TestCompareCheckpoints checks the sync check's comparison.
func TestCompareCheckpoints(t *testing.T) {
	host := lockstep.Checkpoint{Tick: 600, World: 1, Maps: []lockstep.MapCheckpoint{{ID: 0, Hash: 10}, {ID: 1, Hash: 11}}}
	with := func(fn func(c *lockstep.Checkpoint)) lockstep.Checkpoint {
		c := host
		c.Maps = append([]lockstep.MapCheckpoint(nil), host.Maps...)
		fn(&c)
		return c
	}
	tests := []struct {
		name   string
		client lockstep.Checkpoint
		want   string // a part of the difference; "" for none
	}{
		{"same", with(func(*lockstep.Checkpoint) {}), ""},
		{"other tick", with(func(c *lockstep.Checkpoint) { c.Tick = 660 }), "hashed at tick 660"},
		{"world differs", with(func(c *lockstep.Checkpoint) { c.World = 2 }), "world hash"},
		{"map differs", with(func(c *lockstep.Checkpoint) { c.Maps[1].Hash = 99 }), "map 1 hash"},
		{"map missing", with(func(c *lockstep.Checkpoint) { c.Maps = c.Maps[:1] }), "no map 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := compareCheckpoints(&host, &tc.client)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("compare: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestConfig checks the defaults and the limits of a soak's settings.
func TestConfig(t *testing.T) {
	d := Config{}.Defaults()
	if d.Duration != 10*time.Minute || d.Clients != 64 || d.Full != 4 || d.Autosave != 20*time.Second || d.Warmup != 20*time.Second {
		t.Fatalf("defaults: duration %v, clients %d, full %d, autosave %v, warm-up %v", d.Duration, d.Clients, d.Full, d.Autosave, d.Warmup)
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	short := Config{Duration: 30 * time.Second}.Defaults()
	if short.Autosave != 6*time.Second || short.Warmup != 5*time.Second {
		t.Fatalf("30s soak: autosave %v, warm-up %v; want 6s and 5s", short.Autosave, short.Warmup)
	}
	bad := []Config{
		{Duration: 5 * time.Second},
		{Clients: 1},
		{Clients: 8, Full: 9},
		{Rate: -1},
		{HashEvery: -5},
		{Duration: time.Minute, Warmup: 2 * time.Minute},
	}
	for _, c := range bad {
		if err := c.Defaults().Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
}

// TestFlagDefaults checks that the command line's defaults are Config's:
// no flags at all is Config{}.Defaults(), and fewer than four clients
// without --full is a valid soak, not a usage error.
func TestFlagDefaults(t *testing.T) {
	// Out and Logger are the caller's or made anew by Defaults: not
	// settings the flags choose.
	settings := func(c Config) Config { c.Out, c.Logger = nil, nil; return c }
	var stderr strings.Builder
	got, err := parseConfig(nil, &stderr)
	if err != nil {
		t.Fatalf("no flags: %v\n%s", err, stderr.String())
	}
	if want := (Config{}).Defaults(); settings(got) != settings(want) {
		t.Errorf("no flags give\n%+v\nwant Config{}.Defaults()\n%+v", settings(got), settings(want))
	}

	for _, tc := range []struct {
		args    []string
		clients int
		full    int
	}{
		{[]string{"--clients", "3", "--duration", "10s"}, 3, 3},
		{[]string{"--clients", "2"}, 2, 2},
		{[]string{"--clients", "12"}, 12, 4},
		{[]string{"--clients", "12", "--full", "7"}, 12, 7},
	} {
		stderr.Reset()
		c, err := parseConfig(tc.args, &stderr)
		if err != nil {
			t.Errorf("%q: %v\n%s", tc.args, err, stderr.String())
			continue
		}
		if c.Clients != tc.clients || c.Full != tc.full {
			t.Errorf("%q: %d clients, %d full; want %d, %d", tc.args, c.Clients, c.Full, tc.clients, tc.full)
		}
	}

	stderr.Reset()
	if _, err := parseConfig([]string{"--clients", "3", "--full", "4"}, &stderr); err == nil ||
		!strings.Contains(stderr.String(), "full clients 4 outside 1..3") {
		t.Errorf("--clients 3 --full 4: %v, stderr %q; want the limit reported", err, stderr.String())
	}
	if code := run([]string{"--clients", "1"}, io.Discard, io.Discard); code != exitUsage {
		t.Errorf("--clients 1: exit %d, want %d", code, exitUsage)
	}
	if code := run([]string{"--help"}, io.Discard, io.Discard); code != exitPass {
		t.Errorf("--help: exit %d, want %d", code, exitPass)
	}
}
