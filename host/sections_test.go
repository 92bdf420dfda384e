package host_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// sectionJoin joins h as name, making the maps' sections when sections
// is set, and returns the live joiner.
func sectionJoin(t *testing.T, ctx context.Context, h *colonyHost, name string, sections bool) *testJoiner {
	t.Helper()
	tj := &testJoiner{log: newHashLog(), errc: make(chan error, 1)}
	cfg := h.config(h.addr, name, tj)
	if sections {
		cfg.Sections, cfg.SectionMinRTT = colony.SectionBuilder(h.content), -1
	}
	s, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tj.sess = s
	go func() { tj.errc <- s.Run(ctx) }()
	t.Cleanup(func() { s.Close(); <-tj.errc })
	return tj
}

// TestSectionsJoinThin: a joiner that makes the maps' terrain from the
// host's recipes is sent every map without it, reads far fewer bytes than
// a joiner that downloads everything, and both reach WorldReady with the
// host's map hashes. A joiner that names its sections with wrong hashes
// gets every map whole and the same hashes: never a wrong map.
func TestSectionsJoinThin(t *testing.T) {
	logs := &syncbuf.Buffer{}
	h := startColonyHost(t, colony.SizedConfig(6<<20, 7), func(c *host.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	whole := sectionJoin(t, ctx, h, "Whole", false)
	thin := sectionJoin(t, ctx, h, "Thin", true)
	waitPlaying(t, h.srv, "Thin")
	// Thin blobs are kept only while a joiner of the point is not in: the
	// second thin joiner, coming after the first is in, has them built
	// again.
	thin2 := sectionJoin(t, ctx, h, "Thin2", true)
	waitPlaying(t, h.srv, "Thin2")
	if n := strings.Count(logs.String(), "thin map blobs built"); n != 2 {
		t.Fatalf("thin map blobs built %d times for two thin joiners one after the other, want 2", n)
	}
	wrongCtx := jointest.With(ctx, jointest.Options{SectionHashSkew: 1})
	wrong := sectionJoin(t, wrongCtx, h, "Wrong", true)
	if n := strings.Count(logs.String(), "thin map blobs built"); n != 2 {
		t.Fatalf("thin map blobs built for a joiner naming wrong hashes (%d builds in all)", n)
	}

	wt, tt, xt := whole.sess.Timings(), thin.sess.Timings(), wrong.sess.Timings()
	maps := len(thin.sess.Sim().MapIDs())
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
	tick := h.log.latest() + colonyEvery
	checkSameHashes(t, h.testHost, tick, whole, thin, thin2, wrong)
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
	cfg.Sections, cfg.SectionMinRTT = func(context.Context, []byte, uint64) ([]byte, error) { panic("a relay host named a section") }, -1
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
	h := startColonyHost(t, colony.SizedConfig(6<<20, 7))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	probe := sectionJoin(t, ctx, h, "Probe", true)
	payload := int64(probe.sess.Timings().Bytes)
	relay := cutRelay(t, h.addr, 4<<10+payload*9/10)
	tj := &testJoiner{log: newHashLog()}
	cfg := h.config(relay.Addr(), "Cut", tj)
	cfg.Sections, cfg.SectionMinRTT = colony.SectionBuilder(h.content), -1
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
	checkSameHashes(t, h.testHost, h.log.latest()+2*colonyEvery, probe, tj)
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
