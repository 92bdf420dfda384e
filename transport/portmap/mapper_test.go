package portmap

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fakeClock hands each timer a Mapper starts to the test: waits receives
// the duration asked for, and the timer fires when the test sends on fire.
type fakeClock struct {
	waits chan time.Duration
	fire  chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{waits: make(chan time.Duration, 1), fire: make(chan time.Time)}
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.waits <- d
	return c.fire
}

// next waits for the Mapper to start its next timer and returns the
// duration it asked for.
func (c *fakeClock) next(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.waits:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("the mapper started no timer")
		return 0
	}
}

// mapKey names one mapping on a fake router.
type mapKey struct {
	proto Protocol
	ext   uint16
}

// fakeRouter grants what it is asked, for lease, and counts the calls.
type fakeRouter struct {
	lease time.Duration
	ip    netip.Addr

	mu      sync.Mutex
	mapped  map[mapKey]uint16 // external → internal port
	adds    int
	deletes int
	// refuse makes Add fail for this protocol while set.
	refuse Protocol
}

func newFakeRouter(lease time.Duration) *fakeRouter {
	return &fakeRouter{lease: lease, ip: netip.MustParseAddr("203.0.113.7"), mapped: map[mapKey]uint16{}}
}

func (f *fakeRouter) Method() string { return "fake" }

func (f *fakeRouter) ExternalIP(context.Context) (netip.Addr, error) { return f.ip, nil }

func (f *fakeRouter) Add(_ context.Context, p Protocol, internal, ext uint16, lease time.Duration) (uint16, time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse == p {
		return 0, 0, errors.New("refused")
	}
	f.adds++
	f.mapped[mapKey{p, ext}] = internal
	return ext, min(lease, f.lease), nil
}

func (f *fakeRouter) Delete(_ context.Context, p Protocol, _, ext uint16) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes++
	delete(f.mapped, mapKey{p, ext})
	return nil
}

// counts are the router's calls and mappings so far.
func (f *fakeRouter) counts() (adds, deletes, mapped int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.adds, f.deletes, len(f.mapped)
}

func (f *fakeRouter) setRefuse(p Protocol) {
	f.mu.Lock()
	f.refuse = p
	f.mu.Unlock()
}

func TestMapperRenewsAtHalfTheLeaseAndRemovesOnClose(t *testing.T) {
	router, clock := newFakeRouter(60*time.Second), newFakeClock()
	m, err := Start(context.Background(), Config{Router: router, Port: 30502, UDP: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	st := m.Status()
	if st.State != Mapped || st.External != netip.MustParseAddrPort("203.0.113.7:30502") || !st.UDP || st.Lease != 60*time.Second {
		t.Fatalf("after Start: %+v", st)
	}
	if adds, _, mapped := router.counts(); adds != 2 || mapped != 2 {
		t.Fatalf("after Start: %d adds, %d mappings; want 2 and 2 (TCP and UDP)", adds, mapped)
	}
	for renewal := 1; renewal <= 3; renewal++ {
		if d := clock.next(t); d != 30*time.Second {
			t.Fatalf("renewal %d is due after %v; want 30s, half the 60 s lease", renewal, d)
		}
		clock.fire <- time.Time{}
	}
	clock.next(t) // the third renewal is done once the fourth timer starts
	if adds, _, mapped := router.counts(); adds != 8 || mapped != 2 {
		t.Fatalf("after 3 renewals: %d adds, %d mappings; want 8 and 2", adds, mapped)
	}
	if st := m.Status(); st.Renewals != 3 || st.State != Mapped {
		t.Fatalf("after 3 renewals: %+v", st)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, deletes, mapped := router.counts(); deletes != 2 || mapped != 0 {
		t.Fatalf("after Close: %d deletes, %d mappings left; want 2 and 0", deletes, mapped)
	}
	if st := m.Status(); st.State != Removed {
		t.Fatalf("after Close: state %v; want removed", st.State)
	}
}

func TestMapperRetriesAFailedRenewal(t *testing.T) {
	router, clock := newFakeRouter(time.Hour), newFakeClock()
	m, err := Start(context.Background(), Config{Router: router, Port: 4000, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if d := clock.next(t); d != 30*time.Minute {
		t.Fatalf("first renewal due after %v; want 30m", d)
	}
	router.setRefuse(TCP)
	clock.fire <- time.Time{}
	if d := clock.next(t); d != retryAfter {
		t.Fatalf("after a failed renewal the next is due after %v; want %v", d, retryAfter)
	}
	if st := m.Status(); st.State != Lost || st.Err == "" {
		t.Fatalf("after a failed renewal: %+v; want lost with an error", st)
	}
	router.setRefuse("")
	clock.fire <- time.Time{}
	clock.next(t)
	if st := m.Status(); st.State != Mapped || st.Renewals != 1 || st.Err != "" {
		t.Fatalf("after the retry: %+v; want mapped, 1 renewal", st)
	}
}

func TestStartRefusedLeavesNoMapping(t *testing.T) {
	router := newFakeRouter(time.Hour)
	router.setRefuse(UDP)
	m, err := Start(context.Background(), Config{Router: router, Port: 4000, UDP: true, Clock: newFakeClock()})
	if err == nil {
		m.Close()
		t.Fatal("Start succeeded although the router refused UDP")
	}
	if adds, deletes, mapped := router.counts(); adds != 1 || deletes != 1 || mapped != 0 {
		t.Fatalf("after a refusal: %d adds, %d deletes, %d mappings; want the TCP mapping made and removed", adds, deletes, mapped)
	}
}

func TestRenewIn(t *testing.T) {
	for _, tc := range []struct{ lease, want time.Duration }{
		{0, permanentRenew}, {time.Hour, 30 * time.Minute}, {4 * time.Second, minRenew},
	} {
		if got := renewIn(tc.lease); got != tc.want {
			t.Errorf("renewIn(%v) = %v; want %v", tc.lease, got, tc.want)
		}
	}
}

func TestStateNames(t *testing.T) {
	got := fmt.Sprint(Off, Searching, Mapped, NoRouter, Lost, Removed, State(99))
	if want := "off searching mapped no router lost removed state(99)"; got != want {
		t.Fatalf("got %q; want %q", got, want)
	}
}
