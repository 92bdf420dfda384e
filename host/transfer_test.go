package host_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// TestSixteenJoinersOneCompression joins 16 clients at once: they share one
// join point, compressed once.
func TestSixteenJoinersOneCompression(t *testing.T) {
	const maps = 4
	h := startHost(t, host.Config{MaxPlayers: 16, JoinPointMaxAge: time.Minute, LazyJoinPoints: true}, locksteptest.New(maps, 256<<10))
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// No per-tick hashing: sixteen joiners hashing 1 MiB every tick
			// under -race could not keep up with the host.
			cfg := joinCfg(h.addr, fmt.Sprintf("Joiner%02d", i), newHashLog())
			cfg.OnStep, cfg.OnApply = nil, nil
			s, err := join.Join(context.Background(), cfg)
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := h.srv.Stats()
	if st.JoinPoints != 1 || st.Built != 1 || st.BlobsCompressed != 1+maps || st.BlobsReused != 0 {
		t.Fatalf("stats %+v: want one join point, built once, %d blobs compressed", st, 1+maps)
	}
}

// TestUnchangedMapsReuseBlobs: when a join point expires, the next one
// compresses only the maps that changed.
func TestUnchangedMapsReuseBlobs(t *testing.T) {
	const maps = 5
	h := startHost(t, host.Config{JoinPointMaxAge: 50 * time.Millisecond, LazyJoinPoints: true}, locksteptest.New(maps, 64<<10))
	a := startJoiner(t, h.addr, "Alice")
	// Only map 3 changes from now on (a non-zero value keeps it ticking).
	if err := a.sess.Send(3, locksteptest.KindAdd, []byte{1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the command", func() bool {
		_, ok := h.log.cmdTick(cmdKey(lockstep.Command{Player: a.sess.Info().PlayerID, MapID: 3, Kind: locksteptest.KindAdd, Payload: []byte{1}}))
		return ok
	})
	time.Sleep(100 * time.Millisecond) // the first join point expires
	b := startJoiner(t, h.addr, "Bob")
	st := h.srv.Stats()
	if st.Built != 2 || st.BlobsReused != maps-1 || st.BlobsCompressed != (1+maps)+(1+1) {
		t.Fatalf("stats %+v: want the second point to compress the world and map 3 only", st)
	}
	// And the reused blobs are right: Bob's hashes match the host's.
	checkSameHashes(t, h, h.log.latest()+10, a, b)
}

// TestTicksAdvanceDuringBigJoin measures the host's tick rate while a
// joiner downloads a 32 MiB world: building the join point happens off the
// tick goroutine, so the clock keeps its rate.
func TestTicksAdvanceDuringBigJoin(t *testing.T) {
	const rate = 60
	var mu sync.Mutex
	var stamps []time.Time
	sim := locksteptest.New(8, 4<<20)
	ln := listen(t)
	srv, err := host.New(host.Config{TickRate: rate, ConnRate: -1, Logger: quietLogger(),
		AfterTick: func(res lockstep.TickResult, _ lockstep.Sim) {
			if res.Stepped {
				mu.Lock()
				stamps = append(stamps, time.Now())
				mu.Unlock()
			}
		}}, host.Content{Databases: testDefs}, sim)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	cfg := joinCfg(ln.Addr().String(), "Bob", newHashLog())
	cfg.OnStep, cfg.OnApply = nil, nil
	start := time.Now()
	s, err := join.Join(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	s.Close()
	if tm := s.Timings(); tm.RawBytes < 32<<20 {
		t.Fatalf("world of only %d raw bytes", tm.RawBytes)
	}
	mu.Lock()
	defer mu.Unlock()
	var n int
	var maxGap time.Duration
	var prev time.Time
	for _, ts := range stamps {
		if ts.Before(start) || ts.After(end) {
			continue
		}
		if !prev.IsZero() {
			maxGap = max(maxGap, ts.Sub(prev))
		}
		prev = ts
		n++
	}
	got := float64(n) / end.Sub(start).Seconds()
	t.Logf("join took %v; %d ticks in it: %.1f ticks/s (configured %d), longest gap %v", end.Sub(start), n, got, rate, maxGap)
	// Generous bounds for a shared machine under -race; a join point
	// encoded and compressed on the tick goroutine stalls it for seconds.
	if got < 0.8*rate || maxGap > 500*time.Millisecond {
		t.Fatalf("the tick slowed during the join: %.1f ticks/s, longest gap %v", got, maxGap)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// TestJoinPointPreparedInAdvance: by default the host builds a join point
// in the background, and a joiner downloads that one without waiting for a
// compression of its own.
func TestJoinPointPreparedInAdvance(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(3, 64<<10))
	waitFor(t, "a join point built in the background", func() bool { return h.srv.Stats().Built == 1 })
	startJoiner(t, h.addr, "Alice")
	if st := h.srv.Stats(); st.JoinPoints != 1 || st.Built != 1 {
		t.Fatalf("stats %+v: the joiner did not use the prepared join point", st)
	}
}
