package host_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// startSectionHost hosts the world of wc, whose maps' sections it takes
// first for sectionBuilder.
func startSectionHost(t *testing.T, wc colony.Config, mods ...func(*host.Config)) *colonyHost {
	t.Helper()
	content, set, world := newColonyWorld(t, wc)
	made := map[string][]byte{}
	for _, id := range world.MapIDs() {
		sec, ok := world.MapSection(id)
		if !ok {
			t.Fatalf("map %d has no section", id)
		}
		b, err := world.MarshalMap(id)
		if err != nil {
			t.Fatal(err)
		}
		made[string(sec.Recipe)] = bytes.Clone(b[sec.Offset : sec.Offset+sec.Len])
	}
	maps := len(world.MapIDs())
	h := startColonyWorld(t, content, set, world, mods...)
	h.made, h.maps = made, maps
	return h
}

// sectionBuilder makes the sections of h's maps from what
// startSectionHost took: the bytes the game's builder makes
// (game/colony's tests check that builder), without making terrain, which
// is slow under the race detector and would make these tests race the
// host's handshake deadline.
func (h *colonyHost) sectionBuilder() lockstep.SectionBuilder {
	return func(ctx context.Context, recipe []byte, maxLen uint64) ([]byte, error) {
		b, ok := h.made[string(recipe)]
		if !ok || uint64(len(b)) > maxLen {
			return nil, fmt.Errorf("no section of %d bytes at most for recipe %x", maxLen, recipe)
		}
		return bytes.Clone(b), ctx.Err()
	}
}

// sectionJoin joins h as name, making the maps' sections when sections
// is set, and returns the live joiner and a function that closes it
// (also called when the test ends).
func sectionJoin(t *testing.T, ctx context.Context, h *colonyHost, name string, sections bool) (*testJoiner, func()) {
	t.Helper()
	tj := &testJoiner{log: newHashLog(), errc: make(chan error, 1)}
	cfg := h.config(h.addr, name, tj)
	if sections {
		cfg.Sections, cfg.SectionsAlways = h.sectionBuilder(), true
	}
	s, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tj.sess = s
	go func() { tj.errc <- s.Run(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { s.Close(); <-tj.errc }) }
	t.Cleanup(stop)
	return tj, stop
}

// checkJoined checks that tj's map hashes are the host's at the first
// checkpoint after its WorldReady.
func checkJoined(t *testing.T, h *colonyHost, tj *testJoiner) {
	t.Helper()
	checkSameHashes(t, h.testHost, (tj.sess.Timings().ReadyTick/colonyEvery+1)*colonyEvery, tj)
}

// TestSectionsJoinThin: a joiner that makes the maps' terrain from the
// host's recipes is sent every map without it, reads far fewer bytes than
// a joiner that downloads everything, and both reach WorldReady with the
// host's map hashes. A joiner that names its sections with wrong hashes
// gets every map whole and the same hashes: never a wrong map. The
// joiners come one after the other, each closed once checked: a joiner
// left running simulates beside the next, which under the race detector
// on a busy machine was enough for the last to miss its catch-up
// deadline.
func TestSectionsJoinThin(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := startSectionHost(t, colony.SizedConfig(1<<20, 7), func(c *host.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	joined := func(name string, sections bool, ctx context.Context) join.Timings {
		tj, stop := sectionJoin(t, ctx, h, name, sections)
		waitPlaying(t, h.srv, name)
		checkJoined(t, h, tj)
		stop()
		return tj.sess.Timings()
	}

	wt := joined("Whole", false, ctx)
	maps := h.maps
	tt := joined("Thin", true, ctx)
	// Thin blobs are kept only while a joiner of the point is not in: the
	// second thin joiner, coming after the first is in, has them built
	// again.
	joined("Thin2", true, ctx)
	if n := strings.Count(logs.String(), "thin map blobs built"); n != 2 {
		t.Fatalf("thin map blobs built %d times for two thin joiners one after the other, want 2", n)
	}
	xt := joined("Wrong", true, jointest.With(ctx, jointest.Options{SectionHashSkew: 1}))
	if n := strings.Count(logs.String(), "thin map blobs built"); n != 2 {
		t.Fatalf("thin map blobs built for a joiner naming wrong hashes (%d builds in all)", n)
	}

	t.Logf("whole: %d bytes; thin: %d bytes, %d sections named, %d maps thin; wrong hashes: %d bytes, %d named, %d thin",
		wt.Bytes, tt.Bytes, tt.Sections, tt.Thin, xt.Bytes, xt.Sections, xt.Thin)
	if wt.Sections != 0 || wt.Thin != 0 {
		t.Fatalf("a joiner without a section builder named %d sections, got %d maps thin", wt.Sections, wt.Thin)
	}
	if tt.Sections != maps || tt.Thin != maps {
		t.Fatalf("thin joiner: %d sections named, %d maps thin; want %d of each", tt.Sections, tt.Thin, maps)
	}
	if tt.Bytes*2 > wt.Bytes {
		t.Fatalf("thin joiner read %d bytes, over half the %d of a whole download", tt.Bytes, wt.Bytes)
	}
	if xt.Sections != maps || xt.Thin != 0 || xt.Bytes < wt.Bytes {
		t.Fatalf("wrong hashes: %d named, %d maps thin, %d bytes; want %d named, none thin, at least %d bytes",
			xt.Sections, xt.Thin, xt.Bytes, maps, wt.Bytes)
	}
	if st := h.srv.Overview().Stats; st.SectionJoins != 2 || st.SectionBytes == 0 {
		t.Fatalf("host counted %d joins sent thin sparing %d bytes, want 2 and some", st.SectionJoins, st.SectionBytes)
	}
}

// TestSectionsRelayIgnores: a relay host, which runs no game, names no
// sections, and a joiner that names some anyway gets every map whole and
// its world verified against the header's hashes.
func TestSectionsRelayIgnores(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := startRelay(t, host.Config{}, logs)
	joinRelay(t, h.Addr, "Arb", true)
	ctx, cancel := context.WithCancel(jointest.With(context.Background(), jointest.Options{ExtraMade: map[int32]uint64{0: 1, 1: 2, 2: 3}}))
	defer cancel()
	cfg := joinCfg(h.Addr, "Ann", newHashLog())
	cfg.Sections, cfg.SectionsAlways = func(context.Context, []byte, uint64) ([]byte, error) { panic("a relay host named a section") }, true
	s, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	defer s.Close()
	if tm := s.Timings(); tm.Sections != 0 || tm.Thin != 0 {
		t.Fatalf("relay join: %d sections made, %d maps thin; want none", tm.Sections, tm.Thin)
	}
	if st := h.Server.Overview().Stats; st.SectionJoins != 0 {
		t.Fatalf("relay host sent %d joins thin", st.SectionJoins)
	}
}

// TestSectionsResumed: a joiner that makes its sections, cut late in the
// download, rejoins with its token, names its sections again and what it
// holds, and reaches WorldReady with the host's hashes; the retry
// leaves out blobs it held.
func TestSectionsResumed(t *testing.T) {
	h := startSectionHost(t, colony.SizedConfig(1<<20, 7))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probe, stopProbe := sectionJoin(t, ctx, h, "Probe", true)
	payload := int64(probe.sess.Timings().Bytes)
	checkJoined(t, h, probe)
	stopProbe()
	relay := cutRelay(t, h.addr, 4<<10+payload*9/10)
	tj := &testJoiner{log: newHashLog()}
	cfg := h.config(relay.Addr(), "Cut", tj)
	cfg.Sections, cfg.SectionsAlways = h.sectionBuilder(), true
	before := h.srv.Overview().Stats
	tries := joinRetrying(t, ctx, cfg, tj)
	defer func() { tj.sess.Close(); <-tj.errc }()
	tm := tj.sess.Timings()
	if tries != 2 || tm.Thin == 0 {
		t.Fatalf("WorldReady after %d attempts with %d maps thin; want 2 attempts, thin maps", tries, tm.Thin)
	}
	if after := h.srv.Overview().Stats; after.ResumedBytes == before.ResumedBytes {
		t.Fatal("the retry was sent every blob again")
	}
	checkJoined(t, h, tj)
}

// TestSectionsWrongHashesBuildNothing: a joiner naming sections whose
// hashes are none of the join point's costs the host no thin blobs: it
// is sent every map whole and nothing is built for it, however often it
// joins.
func TestSectionsWrongHashesBuildNothing(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := startColonyHost(t, colony.SizedConfig(1<<20, 7), func(c *host.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	ctx, cancel := context.WithCancel(jointest.With(context.Background(), jointest.Options{ExtraMade: map[int32]uint64{0: 1, 1: 2, 2: 3}}))
	defer cancel()
	for _, name := range []string{"Wrong", "Wrong2"} {
		tj := &testJoiner{log: newHashLog()}
		s, err := join.Join(ctx, h.config(h.addr, name, tj))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tm := s.Timings()
		s.Close()
		if tm.Thin != 0 {
			t.Fatalf("%s: %d maps sent thin for wrong hashes", name, tm.Thin)
		}
	}
	if n := strings.Count(logs.String(), "thin map blobs built"); n != 0 {
		t.Fatalf("thin map blobs built %d times for joiners naming only wrong hashes", n)
	}
	if st := h.srv.Overview().Stats; st.SectionJoins != 0 {
		t.Fatalf("host counted %d joins sent thin", st.SectionJoins)
	}
}

// waitPlaying waits until srv counts the player name as playing: its
// WorldReady handled, its join point released.
func waitPlaying(t *testing.T, srv *host.Server, name string) {
	t.Helper()
	testkit.WaitFor(t, name+" playing", func() bool {
		for _, p := range srv.Overview().Players {
			if p.Name == name {
				return p.Status == "playing"
			}
		}
		return false
	})
}

// TestSectionsAutoLoopback: by default (not SectionsAlways) a joiner
// makes no sections for a host on this machine, even when the handshake's
// round trip is slow (20 ms here, through a relay that delays, as a busy
// machine can measure on loopback), says why, and the host builds
// nothing for it.
func TestSectionsAutoLoopback(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := startSectionHost(t, colony.SizedConfig(1<<20, 7), func(c *host.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	relay := testkit.StartRelay(t, h.addr)
	relay.SetDelay(10 * time.Millisecond)
	tj := &testJoiner{log: newHashLog()}
	cfg := h.config(relay.Addr(), "Local", tj)
	cfg.Sections = h.sectionBuilder()
	s, err := join.Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tm := s.Timings()
	if tm.Sections != 0 || tm.Thin != 0 || !strings.Contains(tm.SectionsWhy, "this machine or its LAN") {
		t.Fatalf("loopback join: %d sections named, %d maps thin, why %q; want none, as the host is on this machine", tm.Sections, tm.Thin, tm.SectionsWhy)
	}
	if n := strings.Count(logs.String(), "thin map blobs built"); n != 0 {
		t.Fatalf("thin map blobs built %d times for a joiner on this machine", n)
	}
}
