package join

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestSectionsOfferStopsMaking: offer names the sections made and stops
// the one being made, not only those queued: the builder sees its
// context done and every worker ends, so nothing made after the offer
// takes the cores the download and catch-up need.
func TestSectionsOfferStopsMaking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quick := []byte{1, 2, 3}
		var started, stopped atomic.Int32
		build := func(ctx context.Context, recipe []byte, maxLen uint64) ([]byte, error) {
			if recipe[0] == 0 {
				return quick, nil
			}
			started.Add(1)
			<-ctx.Done() // a section that takes longer than the wait
			stopped.Add(1)
			return nil, ctx.Err()
		}
		s := &Session{cfg: Config{Sections: build, SectionsAlways: true, Logger: testkit.Quiet()}.Defaults()}
		recipes := []wire.SectionRecipe{{MapID: 0, Length: 3, Hash: xxhash.Sum64(quick), Recipe: []byte{0}}}
		for id := int32(1); id <= 4; id++ {
			recipes = append(recipes, wire.SectionRecipe{MapID: id, Length: 3, Hash: 1, Recipe: []byte{1}})
		}
		m, _ := s.makeSections(recipes)
		synctest.Wait()
		made := m.offer(-1)
		if len(made) != 1 || made[0].MapID != 0 {
			t.Fatalf("offered %v; want map 0 alone", made)
		}
		synctest.Wait()
		select {
		case <-m.done:
		default:
			t.Fatalf("workers still running after the offer: %d sections started, %d stopped", started.Load(), stopped.Load())
		}
		if started.Load() == 0 || stopped.Load() != started.Load() {
			t.Fatalf("%d sections started, %d stopped; want some, all stopped", started.Load(), stopped.Load())
		}
	})
}

// remoteConn is a connection whose remote address is addr; nothing is
// ever read or written on it.
type remoteConn struct {
	net.Conn
	addr net.Addr
}

func (c remoteConn) RemoteAddr() net.Addr { return c.addr }

// TestSectionsProbe: unless told to make them always, a join makes no
// sections for a host on this machine or its LAN, and elsewhere makes
// the smallest first and goes on only when what that took, for all of
// them, is less than the download they spare at the link's speed. When
// it does not go on it offers none, not even the one it made, so the
// host builds nothing.
func TestSectionsProbe(t *testing.T) {
	incompressible := make([]byte, 100_000)
	for i := range incompressible {
		incompressible[i] = byte(xxhash.Sum64([]byte{byte(i), byte(i >> 8), byte(i >> 16)}))
	}
	far := &net.TCPAddr{IP: net.ParseIP("203.0.113.9"), Port: 30502} // not on any test machine's LAN
	for _, tc := range []struct {
		name  string
		addr  net.Addr
		per   time.Duration // making one section
		speed float64       // the link, bytes a second
		made  int
		why   string
	}{
		{"loopback", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 30502}, time.Millisecond, 1e3, 0, "on this machine or its LAN"},
		{"LAN", &net.TCPAddr{IP: net.IPv4(192, 168, 1, 20), Port: 30502}, time.Millisecond, 1e3, 0, "on this machine or its LAN"},
		// four sections of 100 kB spare about 400 kB: 4 s at 100 kB/s
		{"slow link, quick making", far, 100 * time.Millisecond, 100e3, 4, "made: "},
		{"fast link, slow making", far, 2 * time.Second, 100e3, 0, "not made: "},
		{"first not made within the wait", far, 2 * time.Minute, 100e3, 0, "not made within the wait"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var built atomic.Int32
				build := func(ctx context.Context, recipe []byte, maxLen uint64) ([]byte, error) {
					built.Add(1)
					select {
					case <-time.After(tc.per):
						return incompressible, nil
					case <-ctx.Done():
						return nil, ctx.Err()
					}
				}
				s := &Session{nc: remoteConn{addr: tc.addr}, cfg: Config{Sections: build, LinkSpeed: tc.speed, SectionWait: time.Minute, Logger: testkit.Quiet()}.Defaults()}
				var recipes []wire.SectionRecipe
				for id := range int32(4) {
					recipes = append(recipes, wire.SectionRecipe{MapID: id, Length: uint64(len(incompressible)), Hash: xxhash.Sum64(incompressible), Recipe: []byte{byte(id)}})
				}
				m, why := s.makeSections(recipes)
				made := 0
				if m != nil {
					made = len(m.offer(s.cfg.SectionWait))
					<-m.done
					why = m.choice()
				}
				if made != tc.made || !strings.Contains(why, tc.why) {
					t.Fatalf("offered %d sections (%d built), why %q; want %d, a why with %q", made, built.Load(), why, tc.made, tc.why)
				}
				if tc.made == 0 && built.Load() > 1 {
					t.Fatalf("%d sections built to offer none; want the first at most", built.Load())
				}
			})
		})
	}
}

// TestSectionChoice: the sections are made only when the download they
// spare takes longer than making them, and never from a host on this
// machine or its LAN.
func TestSectionChoice(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    sectionChoice
		make bool
	}{
		{"local", sectionChoice{Local: true, Saved: 100e6, Throughput: 1e3, Making: time.Millisecond}, false},
		{"nothing spared", sectionChoice{Saved: 0, Throughput: 1e6, Making: time.Millisecond}, false},
		{"throughput unknown", sectionChoice{Saved: 30e6, Making: time.Second}, false},
		{"making time unknown", sectionChoice{Saved: 30e6, Throughput: 1e6}, false},
		{"home link: 30 MB at 1.25 MB/s against 3 s", sectionChoice{Saved: 30e6, Throughput: 1.25e6, Making: 3 * time.Second}, true},
		{"fast link: 30 MB at 100 MB/s against 3 s", sectionChoice{Saved: 30e6, Throughput: 100e6, Making: 3 * time.Second}, false},
		{"busy machine: 30 MB at 3 MB/s against 12 s", sectionChoice{Saved: 30e6, Throughput: 3e6, Making: 12 * time.Second}, false},
		{"as long either way", sectionChoice{Saved: 3e6, Throughput: 1e6, Making: 3 * time.Second}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := tc.c.decide()
			if got != tc.make || why == "" {
				t.Fatalf("decide() = %v, %q; want %v and a reason", got, why, tc.make)
			}
		})
	}
}

// TestOnLAN: loopback, private, link-local addresses and those in one of
// this machine's networks are local; others are not.
func TestOnLAN(t *testing.T) {
	nets := []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("2001:db8:1::/64")}
	for addr, local := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.5": true,
		"169.254.1.1": true, "fe80::1": true, "fd00::1": true, "::ffff:192.168.1.1": true,
		"198.51.100.7": true, "2001:db8:1::9": true,
		"8.8.8.8": false, "203.0.113.9": false, "2001:db8:2::9": false, "100.64.0.1": false,
	} {
		if got := onLAN(netip.MustParseAddr(addr), nets); got != local {
			t.Errorf("onLAN(%s) = %v, want %v", addr, got, local)
		}
	}
}
