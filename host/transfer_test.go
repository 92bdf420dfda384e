package host_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestSixteenJoinersOneCompression joins 16 clients at once: they share
// one join point, compressed once, never one per joiner. The point may be
// an hour old; what keeps it is that it is in use (being built, or sent to
// a joiner that has not reported WorldReady), and a point in use is never
// replaced (joinPoints.refresh). Each joiner holds its WorldReady until all
// sixteen have their world, so the joins overlap however slowly the
// machine admits them: which point each gets depends on no clock.
func TestSixteenJoinersOneCompression(t *testing.T) {
	const maps, joiners = 4, 16
	// While a joiner holds its WorldReady it reads nothing and echoes no
	// keepalive: a slow tick, a deep send queue and long deadlines let it
	// wait as long as a loaded machine takes to admit all sixteen.
	h := startHost(t, host.Config{TickRate: 20,
		Limits:   host.LimitConfig{MaxPlayers: joiners, SendQueue: 1 << 16},
		Join:     host.JoinConfig{JoinPointMaxAge: time.Hour, LazyJoinPoints: true},
		Timeouts: host.TimeoutConfig{CatchUp: 10 * time.Minute, Idle: 10 * time.Minute, Handshake: 5 * time.Minute, Username: 5 * time.Minute}}, locksteptest.New(maps, 256<<10))
	var (
		wg      sync.WaitGroup
		loaded  atomic.Int32
		allIn   = make(chan struct{})
		waitAll = func(p join.Progress) {
			if p.Phase != join.PhaseLoad || p.Done != 0 {
				return
			}
			if loaded.Add(1) == joiners {
				close(allIn)
			}
			select {
			case <-allIn:
			case <-time.After(5 * time.Minute): // a joiner failed: its error tells
			}
		}
	)
	errs := make(chan error, joiners)
	for i := 0; i < joiners; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// No per-tick hashing: sixteen joiners hashing 1 MiB every tick
			// under -race could not keep up with the host.
			cfg := joinCfg(h.addr, fmt.Sprintf("Joiner%02d", i), newHashLog())
			cfg.OnStep, cfg.OnApply = nil, nil
			cfg.Progress = waitAll
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
	st := h.srv.Overview().Stats
	if st.JoinPoints != 1 || st.Built != 1 || st.BlobsCompressed != 1+maps || st.BlobsReused != 0 {
		t.Fatalf("stats %+v: want one join point for 16 joiners, built once (%d blobs compressed)", st, 1+maps)
	}
}

// TestUnchangedMapsReuseBlobs: when a join point expires, the next one
// compresses only the maps that changed.
func TestUnchangedMapsReuseBlobs(t *testing.T) {
	const maps = 5
	h := startHost(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: 50 * time.Millisecond, LazyJoinPoints: true}}, locksteptest.New(maps, 8<<10))
	a := startJoiner(t, h.addr, "Alice")
	// Only map 3 changes from now on (a non-zero value keeps it ticking).
	if err := a.sess.Send(3, locksteptest.KindAdd, []byte{1}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the command", func() bool {
		_, ok := h.log.cmdTick(cmdKey(lockstep.Command{Player: a.sess.Info().PlayerID, MapID: 3, Kind: locksteptest.KindAdd, Payload: []byte{1}}))
		return ok
	})
	time.Sleep(100 * time.Millisecond) // the first join point expires
	b := startJoiner(t, h.addr, "Bob")
	st := h.srv.Overview().Stats
	if st.Built != 2 || st.BlobsReused != maps-1 || st.BlobsCompressed != (1+maps)+(1+1) {
		t.Fatalf("stats %+v: want the second point to compress the world and map 3 only", st)
	}
	// And the reused blobs are right: Bob's hashes match the host's.
	checkSameHashes(t, h, h.log.latest()+10, a, b)
}

// heldSim is a Counters world whose encoding waits at a gate: the host
// clones it on the session goroutine and encodes the clone elsewhere, so
// holding the encoder must not hold the clock.
type heldSim struct {
	*locksteptest.Counters
	gate    chan struct{} // closed to let encoders through
	entered chan struct{} // closed when the first encoder reaches the gate
	once    *sync.Once
}

func (h heldSim) Clone() lockstep.Sim {
	return heldSim{Counters: h.Counters.Clone().(*locksteptest.Counters), gate: h.gate, entered: h.entered, once: h.once}
}

func (h heldSim) MarshalWorld() ([]byte, error) {
	h.once.Do(func() { close(h.entered) })
	<-h.gate
	return h.Counters.MarshalWorld()
}

// TestTicksAdvanceDuringBigJoin: building a join point and sending it
// happen off the session goroutine, so the clock keeps ticking through a
// join. The test holds each step still -- the encoder of an 8 MiB world at
// a gate, then the joiner inside its download -- and waits for the host to
// tick on meanwhile. Were either done on the session goroutine, the clock
// would stop for as long as the step is held and the ticks never come.
// Nothing here depends on how fast the machine is.
func TestTicksAdvanceDuringBigJoin(t *testing.T) {
	const ahead = 30 // ticks the host must make while a step is held
	var ticks atomic.Uint64
	sim := heldSim{Counters: locksteptest.New(8, 1<<20), gate: make(chan struct{}), entered: make(chan struct{}), once: new(sync.Once)}
	ln := listen(t)
	h := hosttest.StartOn(t, ln, host.Config{TickRate: 100,
		AfterTick: func(res lockstep.TickResult, _ lockstep.Sim) {
			if res.Stepped {
				ticks.Add(1)
			}
		}}, host.Content{Databases: testDefs}, sim)
	defer h.Stop(t) // after the gate opens (deferred below)
	opened := false
	defer func() {
		if !opened {
			close(sim.gate)
		}
	}()
	// tickOn waits until the host has made `ahead` more ticks.
	tickOn := func(what string) {
		t.Helper()
		from := ticks.Load()
		testkit.WaitFor(t, fmt.Sprintf("%d ticks while %s", ahead, what), func() bool { return ticks.Load() >= from+ahead })
	}

	// The host prepares a join point in the background from the start.
	select {
	case <-sim.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("no join point was built")
	}
	tickOn("the join point's world is being encoded")
	close(sim.gate)
	opened = true

	cfg := joinCfg(ln.Addr().String(), "Bob", newHashLog())
	cfg.OnStep, cfg.OnApply = nil, nil
	var held atomic.Bool
	heldOK := make(chan bool, 1)
	cfg.Progress = func(p join.Progress) {
		if p.Phase != join.PhaseDownload || held.Swap(true) {
			return
		}
		from := ticks.Load()
		deadline := time.Now().Add(20 * time.Second)
		for ticks.Load() < from+ahead && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		heldOK <- ticks.Load() >= from+ahead
	}
	s, err := join.Join(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if tm := s.Timings(); tm.RawBytes < 8<<20 {
		t.Fatalf("world of only %d raw bytes", tm.RawBytes)
	}
	select {
	case ok := <-heldOK:
		if !ok {
			t.Fatalf("the host did not make %d ticks while the joiner was held in its download", ahead)
		}
	default:
		t.Fatal("the joiner never reported download progress")
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
	// An hour's JoinPointMaxAge: a point expires by age however it is
	// used, and on a loaded machine the wait below can pass the default.
	h := startHost(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Hour}, Timeouts: host.TimeoutConfig{Handshake: 5 * time.Minute, Username: 5 * time.Minute}},
		locksteptest.New(3, 64<<10))
	testkit.WaitFor(t, "a join point built in the background", func() bool { return h.srv.Overview().Stats.Built == 1 })
	// No per-tick hashing: the point is as old as the wait below, and a
	// joiner hashing every tick under -race may replay slower than the
	// host ticks.
	startJoiner(t, h.addr, "Alice", func(c *join.Config) { c.OnStep, c.OnApply = nil, nil })
	// A point prepared in advance that nobody was sent yet is the next
	// joiner's, however long it waited (up to JoinPointMaxAge).
	if st := h.srv.Overview().Stats; st.JoinPoints != 1 || st.Built != 1 {
		t.Fatalf("stats %+v: the joiner did not use the prepared join point", st)
	}
}
