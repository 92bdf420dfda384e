package host_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// cutRelay relays to target through a testkit.Relay that cuts
// connection k after rules[k] bytes from the host (the client reads them
// and then the end of the stream; the host's side is reset).
func cutRelay(t *testing.T, target string, rules ...int64) *testkit.Relay {
	t.Helper()
	r := testkit.StartRelay(t, target)
	for k, n := range rules {
		r.CutAfter(k, n)
	}
	return r
}

// drops counts the connections through r that were cut or reset.
func drops(r *testkit.Relay) int {
	n := 0
	for _, c := range r.Conns() {
		if c.Cut() || c.WasReset() {
			n++
		}
	}
	return n
}

// countingLoader is a MapLoader that counts the maps it loads, so a test
// sees whether a resumed join loaded a map again.
type countingLoader struct {
	lockstep.MapLoader
	maps *atomic.Int32
}

func (l countingLoader) Begin(world []byte, maps int) (lockstep.MapAssembly, error) {
	a, err := l.MapLoader.Begin(world, maps)
	return countingAssembly{a, l.maps}, err
}

type countingAssembly struct {
	lockstep.MapAssembly
	maps *atomic.Int32
}

func (a countingAssembly) AddMap(m lockstep.MapBlob) error {
	a.maps.Add(1)
	return a.MapAssembly.AddMap(m)
}

// colonyHost serves a generated colony world and logs its map hashes
// every 10 ticks.
type colonyHost struct {
	*testHost
	dbs     []defs.Summary
	content *colony.Content
	// made are the maps' regenerable sections by recipe, taken from the
	// world before the host started (startSectionHost), for
	// sectionBuilder; maps is how many maps the world has.
	made map[string][]byte
	maps int
}

const colonyEvery = 10

func startColonyHost(t *testing.T, wc colony.Config, mods ...func(*host.Config)) *colonyHost {
	t.Helper()
	content, set, world := newColonyWorld(t, wc)
	return startColonyWorld(t, content, set, world, mods...)
}

// newColonyWorld makes the world of wc on the default content.
func newColonyWorld(t *testing.T, wc colony.Config) (*colony.Content, *defs.Set, *colony.World) {
	t.Helper()
	content, set, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(content, wc)
	if err != nil {
		t.Fatal(err)
	}
	return content, set, world
}

// startColonyWorld hosts world, which the host owns from then on.
func startColonyWorld(t *testing.T, content *colony.Content, set *defs.Set, world *colony.World, mods ...func(*host.Config)) *colonyHost {
	t.Helper()
	hl := newHashLog()
	cfg := host.Config{TickRate: 20,
		AfterTick: func(res lockstep.TickResult, sim lockstep.Sim) {
			if res.Stepped && sim.Tick()%colonyEvery == 0 {
				hl.record(sim)
			}
		},
		Join: host.JoinConfig{JoinPointMaxAge: time.Hour},
	}
	for _, m := range mods {
		m(&cfg)
	}
	h := hosttest.Start(t, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()}, world)
	return &colonyHost{testHost: &testHost{addr: h.Addr, srv: h.Server, log: hl}, dbs: set.Summary(), content: content}
}

// config is a joiner's config for this host, logging hashes into tj.
func (h *colonyHost) config(addr, name string, tj *testJoiner) join.Config {
	return join.Config{Addr: addr, Name: name, Databases: h.dbs, MapLoader: colony.MapLoader(h.content),
		Logger: testkit.Quiet(), OnApply: tj.log.applied, HandshakeTimeout: 20 * time.Second,
		OnStep: func(sim lockstep.Sim) {
			if sim.Tick()%colonyEvery == 0 {
				tj.log.record(sim)
			}
		}}
}

// joinRetrying joins as the join tool does on a flaky link: an attempt
// that fails on the network is tried again with the same Resume, so it
// rejoins with the token and names what it holds. It returns the live
// joiner and how many attempts it took; between runs between attempts.
func joinRetrying(t *testing.T, ctx context.Context, cfg join.Config, tj *testJoiner, between ...func()) int {
	t.Helper()
	cfg.Resume = &join.Resume{}
	for attempt := 1; attempt <= 10; attempt++ {
		s, err := join.Join(ctx, cfg)
		if err == nil {
			tj.sess, tj.errc = s, make(chan error, 1)
			go func() { tj.errc <- s.Run(ctx) }()
			return attempt
		}
		var re *join.RejectedError
		if errors.As(err, &re) {
			t.Fatalf("attempt %d refused: %v", attempt, err)
		}
		t.Logf("attempt %d: %v", attempt, err)
		for _, fn := range between {
			fn()
		}
	}
	t.Fatal("no WorldReady in 10 attempts")
	return 0
}

// TestResumeThroughCuts joins through a relay that cuts the connection
// at several points: in the handshake, early and late in the download,
// twice in one download, and while catching up. Every time the player
// reaches WorldReady by retrying, the host lists the join once with its
// retries, a download cut late costs the host only what the joiner
// lacked, and the player's map hashes equal the host's.
func TestResumeThroughCuts(t *testing.T) {
	h := startColonyHost(t, colony.SizedConfig(6<<20, 7))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ref := &testJoiner{log: newHashLog()}
	first, err := join.Join(ctx, h.config(h.addr, "Ref", ref))
	if err != nil {
		t.Fatal(err)
	}
	payload := int64(first.Timings().Bytes)
	first.Close()
	const hs = 4 << 10 // more than the handshake and admission take
	cases := []struct {
		name    string
		rules   []int64
		catchUp bool // cut at the first step of catching up
		reloads bool // every map is loaded twice: the first load was finished
		tries   int
		resumed bool // the host left blobs out on the retry (if false: may or not)
	}{
		{name: "handshake", rules: []int64{40}, tries: 2},
		{name: "early download", rules: []int64{hs + payload/10}, tries: 2},
		{name: "late download", rules: []int64{hs + payload*9/10}, tries: 2, resumed: true},
		{name: "twice", rules: []int64{hs + payload/3, payload / 2}, tries: 3, resumed: true},
		{name: "catch-up", catchUp: true, reloads: true, tries: 2, resumed: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			relay := cutRelay(t, h.addr, c.rules...)
			name := fmt.Sprintf("Cut%d", i)
			tj := &testJoiner{log: newHashLog()}
			cfg := h.config(relay.Addr(), name, tj)
			var loads atomic.Int32
			cfg.MapLoader = countingLoader{cfg.MapLoader, &loads}
			before := h.srv.Overview().Stats
			if c.catchUp {
				// Catching up needs ticks past the join point: let some pass.
				tick := h.log.latest()
				testkit.WaitFor(t, "the host to tick on", func() bool { return h.log.latest() > tick+colonyEvery })
				var armed atomic.Bool
				armed.Store(true)
				step := cfg.OnStep
				cfg.OnStep = func(sim lockstep.Sim) {
					step(sim)
					if armed.Swap(false) {
						relay.ResetAll()
						testkit.WaitFor(t, "the host to see the drop", func() bool { return joinOutcome(h.srv, name) == host.JoinDropped })
					}
				}
			}
			tries := joinRetrying(t, ctx, cfg, tj)
			defer func() {
				tj.sess.Close()
				<-tj.errc
			}()
			if tries != c.tries || drops(relay) != c.tries-1 {
				t.Fatalf("WorldReady after %d attempts and %d cuts, want %d and %d", tries, drops(relay), c.tries, c.tries-1)
			}
			checkSameHashes(t, h.testHost, h.log.latest()+2*colonyEvery, tj)
			// The join point stays the same (it lives an hour here): what an
			// attempt loaded, the next one keeps, unless it was finished.
			maps := int32(len(h.srv.Overview().Maps))
			if want := map[bool]int32{false: maps, true: 2 * maps}[c.reloads]; loads.Load() != want {
				t.Fatalf("%d maps loaded over the attempts, want %d (%d maps)", loads.Load(), want, maps)
			}
			rec := joinRecords(h.srv, name)
			wantRetries := c.tries - 1
			if c.name == "handshake" {
				wantRetries = 0 // cut before admission: a new join, the cut one never named a player
			}
			if len(rec) != 1 || rec[0].Outcome != host.JoinOK || rec[0].Retries != wantRetries {
				t.Fatalf("recent joins of %s: %+v, want one, joined, with %d retries", name, rec, wantRetries)
			}
			after := h.srv.Overview().Stats
			if saved := after.ResumedBytes - before.ResumedBytes; c.resumed && saved == 0 || rec[0].Resumed != saved {
				t.Fatalf("resumed %d bytes (record %d), want some: %v", saved, rec[0].Resumed, c.resumed)
			}
		})
	}
}

// joinRecords returns the recent joins of the named player.
func joinRecords(srv *host.Server, name string) []host.JoinRecord {
	var out []host.JoinRecord
	for _, r := range srv.Overview().Joins {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// joinOutcome is the outcome of the named player's latest listed join.
func joinOutcome(srv *host.Server, name string) string {
	if r := joinRecords(srv, name); len(r) > 0 {
		return r[0].Outcome
	}
	return ""
}

// TestResumeCostsLittle is the resume's figure in small: a download cut
// once after 6/13 of the world's compressed size (as 6 MB of the 64 MiB
// world, 13 MB compressed) costs the host, in all the bytes it wrote, at
// most 1.25 times the world's compressed size; starting over would cost
// about 1.5 times.
func TestResumeCostsLittle(t *testing.T) {
	// 16 maps, as the 64 MiB world has (0.8 MB each compressed), and a
	// download window in the proportion of the default 2 MiB to 13 MB.
	h := startColonyHost(t, colony.Config{Maps: 16, Width: 400, Height: 400, Seed: 7},
		func(c *host.Config) { c.Join.DownloadWindow = 80 << 10 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := h.srv.Overview().Stats
	probe := &testJoiner{log: newHashLog()}
	s, err := join.Join(ctx, h.config(h.addr, "Probe", probe))
	if err != nil {
		t.Fatal(err)
	}
	world := int64(s.Timings().Bytes)
	s.Close()
	testkit.WaitFor(t, "the probe to leave", func() bool { return joinOutcome(h.srv, "Probe") != "" })
	probeCost := h.srv.Overview().Stats.BytesSent - before.BytesSent

	relay := cutRelay(t, h.addr, world*6/13)
	tj := &testJoiner{log: newHashLog()}
	start := h.srv.Overview().Stats.BytesSent
	if tries := joinRetrying(t, ctx, h.config(relay.Addr(), "Flaky", tj), tj); tries != 2 {
		t.Fatalf("WorldReady after %d attempts, want 2", tries)
	}
	defer func() {
		tj.sess.Close()
		<-tj.errc
	}()
	cost := h.srv.Overview().Stats.BytesSent - start
	t.Logf("world %d bytes compressed; one clean join cost the host %d bytes, a join cut once after %d bytes %d (%.3fx the world)",
		world, probeCost, world*6/13, cost, float64(cost)/float64(world))
	if float64(cost) > 1.25*float64(world) {
		t.Fatalf("the cut join cost %d bytes, over 1.25x the world's %d", cost, world)
	}
	checkSameHashes(t, h.testHost, h.log.latest()+2*colonyEvery, tj)
}

// TestResumeStalls: a join that keeps resuming without progress (each
// attempt cut before a blob is acknowledged whole) is refused as
// RateLimited once it has resumed more than twice in a row so.
func TestResumeStalls(t *testing.T) {
	h := startColonyHost(t, colony.SizedConfig(2<<20, 7))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	relay := cutRelay(t, h.addr, 4<<10, 4<<10, 4<<10, 4<<10, 4<<10, 4<<10)
	tj := &testJoiner{log: newHashLog()}
	cfg := h.config(relay.Addr(), "Stall", tj)
	cfg.Resume = &join.Resume{}
	for attempt := 1; attempt <= 6; attempt++ {
		_, err := join.Join(ctx, cfg)
		var re *join.RejectedError
		if errors.As(err, &re) {
			// The first attempt may hold the small world blob: progress.
			if re.Reason != wire.ReasonRateLimited || attempt < 4 || attempt > 5 {
				t.Fatalf("attempt %d refused with %v, want RateLimited at the 4th or 5th", attempt, re.Reason)
			}
			return
		}
		if err == nil {
			t.Fatalf("attempt %d reached WorldReady through a relay that cuts every attempt", attempt)
		}
	}
	t.Fatal("a join resuming without progress was never refused")
}

// TestResumeFromNewerPoint: when the host has cut a newer join point by
// the time the joiner retries, the maps that did not change (idle maps
// keep their blob) are still not sent again, and the joiner, which must
// start a new assembly for the new point, loads them from what it kept
// and ends in sync.
func TestResumeFromNewerPoint(t *testing.T) {
	// Maps nobody touches stay idle: the same blob in every join point
	// (Huffman coding only, so their zeros still take some bytes).
	h := startHost(t, host.Config{TickRate: 20, Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond, Compression: "gzip:-2"}}, locksteptest.New(6, 200000))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := join.Join(ctx, joinCfg(h.addr, "Probe", newHashLog()))
	if err != nil {
		t.Fatal(err)
	}
	payload, point := int64(s.Timings().Bytes), s.Timings().SnapshotTick
	s.Close()

	relay := cutRelay(t, h.addr, 1<<10+payload*8/10)
	tj := &testJoiner{log: newHashLog()}
	before := h.srv.Overview().Stats
	// The host ticks on between the attempts, so the first join point is
	// too old for the retry.
	later := func() {
		testkit.WaitFor(t, "the host to tick on", func() bool { return h.log.latest() > point+20 })
	}
	if tries := joinRetrying(t, ctx, joinCfg(relay.Addr(), "Newer", tj.log), tj, later); tries != 2 {
		t.Fatalf("WorldReady after %d attempts, want 2", tries)
	}
	defer func() {
		tj.sess.Close()
		<-tj.errc
	}()
	if got := tj.sess.Timings().SnapshotTick; got <= point {
		t.Fatalf("the retry got the join point of tick %d, not one newer than %d", got, point)
	}
	if after := h.srv.Overview().Stats; after.ResumedBytes == before.ResumedBytes {
		t.Fatal("nothing resumed from the newer join point: its unchanged maps were sent again")
	}
	checkSameHashes(t, h, h.log.latest()+5, tj)
}
