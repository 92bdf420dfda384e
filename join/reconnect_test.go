package join_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// events records what a Reconnector reports.
type events struct {
	mu  sync.Mutex
	got []join.ReconnectEvent
}

func (e *events) add(ev join.ReconnectEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
}

func (e *events) of(k join.ReconnectKind) []join.ReconnectEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []join.ReconnectEvent
	for _, ev := range e.got {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// noisyWorld is a Counters world of maps maps whose state does not
// compress: every cell stepped over, so each map's blob is about size
// bytes on the wire.
func noisyWorld(t *testing.T, maps, size int) *locksteptest.Counters {
	t.Helper()
	sim := locksteptest.New(maps, size)
	for i := range maps {
		if err := sim.Apply(locksteptest.Counters{}.AddCommand(int32(i), int8(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	for range size {
		sim.Step()
	}
	return sim
}

// reconnectHost serves a noisy world behind a relay and returns the
// host, the relay and a Reconnector for it with short waits.
func reconnectHost(t *testing.T, cfg host.Config) (*hosttest.Host, *testkit.Relay, *join.Reconnector, *events) {
	t.Helper()
	h := hosttest.Start(t, cfg, host.Content{GameVersion: "counters 1"}, noisyWorld(t, 8, 16<<10))
	relay := testkit.StartRelay(t, h.Addr)
	ev := &events{}
	rc := &join.Reconnector{
		Config:  join.Config{Addr: relay.Addr(), Name: "Wanderer", Loader: locksteptest.Load, Logger: testkit.Quiet()},
		Backoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, For: time.Minute,
		Event: ev.add,
	}
	return h, relay, rc, ev
}

// TestReconnectorResumesDownload: a join whose connection is cut in the
// middle of the download is joined again with the session token, and
// the host sends only the parts of the world the first attempt did not
// get.
func TestReconnectorResumesDownload(t *testing.T) {
	h, relay, rc, ev := reconnectHost(t, host.Config{})
	probe := hosttest.Join(t, join.Config{Addr: h.Addr, Name: "Probe", Loader: locksteptest.Load})
	whole := int64(probe.Session.Timings().Bytes)
	probe.Leave()
	relay.CutAfter(0, whole/2)

	s, err := rc.Join(context.Background())
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	defer s.Close()
	lost := ev.of(join.ReconnectLost)
	if len(lost) != 1 || lost[0].Phase != join.PhaseDownload || !lost[0].Token || lost[0].HeldBlobs == 0 {
		t.Fatalf("lost events %+v, want one in the download, with the token and blobs held", lost)
	}
	if n := len(ev.of(join.ReconnectAttempt)); n != 1 {
		t.Errorf("%d attempts after the cut, want 1", n)
	}
	conns := relay.Conns()
	if len(conns) != 2 {
		t.Fatalf("%d connections, want 2", len(conns))
	}
	// The second download is the header and what was not held: well under
	// the whole world.
	if again := conns[1].Down(); again >= whole-int64(lost[0].HeldBytes)/2 {
		t.Errorf("the second connection brought %d bytes; the world is %d, %d of it held", again, whole, lost[0].HeldBytes)
	}
	t.Logf("world %d bytes; cut after %d; %d held; the second connection brought %d, its download %d", whole, whole/2, lost[0].HeldBytes, conns[1].Down(), s.Timings().Bytes)
	if s.Timings().Bytes >= uint64(whole) {
		t.Errorf("second download %d bytes, the whole world is %d", s.Timings().Bytes, whole)
	}
}

// TestReconnectorRunRejoins: Run follows a session, rejoins after the
// connection drops as the same player, hands the new session over, and
// returns nil when its context ends.
func TestReconnectorRunRejoins(t *testing.T) {
	_, relay, rc, ev := reconnectHost(t, host.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := rc.Join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := s.Info()
	joined := make(chan *join.Session, 1)
	done := make(chan error, 1)
	go func() { done <- rc.Run(ctx, s, func(n *join.Session) { joined <- n }) }()
	testkit.WaitFor(t, "a session token", func() bool { tok, _ := s.Token(); return tok != nil })
	relay.ResetAll()
	var next *join.Session
	select {
	case next = <-joined:
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	case <-time.After(time.Minute): // bounds a hang only
		t.Fatal("no rejoin")
	}
	if got := next.Info(); got.PlayerID != first.PlayerID || got.Faction != first.Faction {
		t.Fatalf("rejoined as player %d faction %d, was %d faction %d", got.PlayerID, got.Faction, first.PlayerID, first.Faction)
	}
	lost := ev.of(join.ReconnectLost)
	if len(lost) != 1 || lost[0].Phase != join.PhasePlay {
		t.Errorf("lost events %+v, want one in play", lost)
	}
	if len(ev.of(join.ReconnectWaiting)) == 0 || len(ev.of(join.ReconnectAttempt)) == 0 || len(ev.of(join.ReconnectFresh)) != 0 {
		t.Errorf("events %+v, want a wait and an attempt, no fresh join", ev.got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestReconnectorGivesUp: a host that is gone is tried, with growing
// waits, until For has passed; then Run ends with a GaveUpError that
// carries the last attempt's error. A For shorter than the first wait
// gives up without an attempt.
func TestReconnectorGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		window   time.Duration
		attempts bool
	}{
		{"tries", 2 * time.Second, true},
		{"too short for a try", 10 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, relay, rc, ev := reconnectHost(t, host.Config{})
			rc.For = tc.window
			s, err := rc.Join(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, "a session token", func() bool { tok, _ := s.Token(); return tok != nil })
			// The host is gone: its connection reset, its address refusing.
			if err := relay.Close(); err != nil {
				t.Fatal(err)
			}
			err = rc.Run(context.Background(), s, func(*join.Session) { t.Error("rejoined a stopped host") })
			var gu *join.GaveUpError
			if !errors.As(err, &gu) {
				t.Fatalf("Run: %v, want a GaveUpError", err)
			}
			attempts := ev.of(join.ReconnectAttempt)
			if gu.Attempts != len(attempts) || (gu.Attempts > 0) != tc.attempts || (gu.Last != nil) != tc.attempts {
				t.Fatalf("gave up after %d attempts (%d reported), last %v", gu.Attempts, len(attempts), gu.Last)
			}
			var oe *net.OpError
			if tc.attempts && !errors.As(gu.Last, &oe) {
				t.Errorf("last error %v, want a dial error", gu.Last)
			}
			// The waits between attempts grow.
			var waits []time.Duration
			for _, e := range ev.of(join.ReconnectWaiting) {
				waits = append(waits, e.Wait)
			}
			if len(waits) > 2 && !slices.IsSorted(waits[1:]) {
				t.Errorf("waits %v do not grow", waits)
			}
		})
	}
}

// TestReconnectorJoinsAfresh: a host that no longer knows the token
// (its grace period is over) refuses it; the Reconnector says so and
// joins afresh under the same name.
func TestReconnectorJoinsAfresh(t *testing.T) {
	h, relay, rc, ev := reconnectHost(t, host.Config{Timeouts: host.TimeoutConfig{RejoinGrace: 50 * time.Millisecond}})
	rc.Backoff = time.Second // well past the grace
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := rc.Join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan *join.Session, 1)
	done := make(chan error, 1)
	go func() { done <- rc.Run(ctx, s, func(n *join.Session) { joined <- n }) }()
	testkit.WaitFor(t, "a session token", func() bool { tok, _ := s.Token(); return tok != nil })
	relay.ResetAll()
	select {
	case n := <-joined:
		if len(ev.of(join.ReconnectFresh)) != 1 {
			t.Errorf("events %+v, want one fresh join", ev.got)
		}
		testkit.WaitFor(t, "the fresh player listed", func() bool {
			ps, err := h.Server.Players()
			return err == nil && len(ps) == 1 && ps[0].Name == "Wanderer" && ps[0].ID == n.Info().PlayerID
		})
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	case <-time.After(time.Minute): // bounds a hang only
		t.Fatal("no rejoin")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestReconnectorStopsOnRefusal: the host ending the session on purpose
// (a kick) ends Run with its reason and no attempt.
func TestReconnectorStopsOnRefusal(t *testing.T) {
	h, _, rc, ev := reconnectHost(t, host.Config{})
	s, err := rc.Join(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- rc.Run(context.Background(), s, nil) }()
	testkit.WaitFor(t, "the player playing", func() bool {
		ps, _ := h.Server.Players()
		return len(ps) == 1 && ps[0].Status == "playing"
	})
	if _, err := h.Server.Kick("api", "Wanderer", "too loud"); err != nil {
		t.Fatal(err)
	}
	var re *join.RejectedError
	if err := <-done; !errors.As(err, &re) || re.Reason != wire.ReasonKicked {
		t.Fatalf("Run: %v, want a kick", err)
	}
	if n := len(ev.got); n != 0 {
		t.Errorf("events %+v after a kick, want none", ev.got)
	}
}

// TestReconnectorFirstJoinUnanswered: a first join the host hangs up on
// before its first packet (a host that wants TLS, say) is not tried
// again, and nothing is reported; one the host cannot be reached for is
// not either.
func TestReconnectorFirstJoinUnanswered(t *testing.T) {
	addr, ends := testkit.Listen(t)
	var mu sync.Mutex
	accepted := 0
	go func() {
		for nc := range ends {
			mu.Lock()
			accepted++
			mu.Unlock()
			nc.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	for _, to := range []string{addr, refused} {
		ev := &events{}
		rc := &join.Reconnector{Config: join.Config{Addr: to, Name: "Wanderer", Loader: locksteptest.Load, Logger: testkit.Quiet()},
			Backoff: 10 * time.Millisecond, Event: ev.add}
		if _, err := rc.Join(context.Background()); err == nil {
			t.Fatalf("%s: joined", to)
		}
		if len(ev.got) != 0 {
			t.Errorf("%s: events %+v, want none", to, ev.got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 1 {
		t.Errorf("the host that hangs up was connected to %d times, want 1", accepted)
	}
}

// TestReconnectorBackoff: after a drop the attempts come 1, 2, 4, 8 and
// then every 16 seconds, and none starts once For has passed since the
// drop (fake time; every dial fails at once).
func TestReconnectorBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		refuse := func(ctx context.Context, addr string) (net.Conn, error) {
			at = append(at, time.Since(start))
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
		}
		ctx := context.Background()
		ev := &events{}
		rc := &join.Reconnector{
			Config: join.Config{Addr: "host:1", Name: "Wanderer", Token: []byte("token"), Loader: locksteptest.Load, Logger: testkit.Quiet(), Dial: refuse},
			For:    time.Minute, Event: ev.add,
		}
		_, err := rc.Rejoin(ctx)
		var gu *join.GaveUpError
		if !errors.As(err, &gu) || gu.Last == nil {
			t.Fatalf("Rejoin: %v, want a GaveUpError with the last attempt's error", err)
		}
		want := []time.Duration{1, 3, 7, 15, 31, 47}
		for i := range want {
			want[i] *= time.Second
		}
		if !slices.Equal(at, want) || gu.Attempts != len(want) {
			t.Fatalf("attempts at %v (%d counted), want %v", at, gu.Attempts, want)
		}
		if gave := time.Since(start); gave != 47*time.Second {
			t.Errorf("gave up at %v, want at the last attempt (47s): the next would start after the minute", gave)
		}
		if n := len(ev.of(join.ReconnectLost)); n != 0 {
			t.Errorf("%d lost events for attempts that never reached the host", n)
		}
	})
}

// TestReconnectorRetriesRateLimited: a host refusing an attempt because
// the address opened connections too fast (RateLimited: "wait a few
// seconds and try again", as the spec says) is tried again after the
// next wait, and the player rejoins: a host restarted with several
// players behind one address refuses some of them at first.
func TestReconnectorRetriesRateLimited(t *testing.T) {
	// One connection, then one every 2 s: the rejoin right after the drop
	// is refused until the bucket refills.
	_, relay, rc, ev := reconnectHost(t, host.Config{Admission: host.AdmissionConfig{ConnRate: 0.5, ConnBurst: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := rc.Join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	joined := make(chan *join.Session, 1)
	done := make(chan error, 1)
	go func() { done <- rc.Run(ctx, s, func(n *join.Session) { joined <- n }) }()
	testkit.WaitFor(t, "a session token", func() bool { tok, _ := s.Token(); return tok != nil })
	relay.ResetAll()
	select {
	case <-joined:
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	case <-time.After(time.Minute): // bounds a hang only
		t.Fatal("no rejoin")
	}
	limited := 0
	for _, e := range ev.of(join.ReconnectLost) {
		var re *join.RejectedError
		if errors.As(e.Err, &re) && re.Reason == wire.ReasonRateLimited {
			limited++
		}
	}
	if limited == 0 {
		t.Errorf("no attempt was refused RateLimited (events %+v): the test did not test the refusal", ev.got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
