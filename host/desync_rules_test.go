package host_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// toPlaying takes a raw client through the download and WorldReady into
// the playing phase.
func (c *rawClient) toPlaying(name string) {
	c.t.Helper()
	c.toUsername()
	c.send(&wire.ClientUsername{Name: name})
	var payload []byte
	var total uint64
	for total == 0 || uint64(len(payload)) < total {
		wd := c.syncClockUntil(wire.IDServerWorldData).(*wire.ServerWorldData)
		payload, total = append(payload, wd.Data...), wd.Total
	}
	p, err := snapshot.Parse(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(&wire.ClientAck{Received: total})
	// Ready at the grant, as a real client would be: a client that
	// claims to be far behind holds the session's time (lag policy).
	c.send(&wire.ClientWorldReady{Tick: p.Header.Granted})
	// Then the latest grant, which the ticks sent during the download may
	// have moved past the header's (docs/protocol.md, 9.2): a report only
	// of the header's lets a slow download start a hold that no tick
	// packet ends, since a holding host sends none.
	c.send(&wire.ClientTickAck{Tick: max(c.granted, p.Header.Granted)})
}

// clockSynced answers the clock rounds after WorldReady until the host
// broadcasts this player's measured latency, which it does only once those
// rounds are over: every packet sent after it is read by the playing loop.
func (c *rawClient) clockSynced(name string) {
	c.t.Helper()
	for {
		pl := c.syncClockUntil(wire.IDServerPlayerList).(*wire.ServerPlayerList)
		if pl.Action == wire.PlayerListLatencies && len(pl.Players) == 1 && pl.Players[0].Name == name {
			return
		}
	}
}

// nextTick answers clock rounds and returns the tick of the next
// Server_Tick whose grant is at least min.
func (c *rawClient) nextTick(min uint64) uint64 {
	c.t.Helper()
	for {
		tk := c.syncClockUntil(wire.IDServerTick).(*wire.ServerTick)
		if tk.Granted >= min {
			return tk.Granted
		}
	}
}

// desyncWorldOnly reports, at the first checkpoint (every every ticks)
// from tick from on, the host's own hashes of both maps with a wrong
// world hash, and returns the host's answer: a repair of the whole world,
// since only the world-level state differs. A report the host could not
// compare (its tick has no checkpoint: hashing fell behind on a loaded
// machine, or the client was not yet ready when the host passed it) is
// sent again at a later checkpoint, as a real client's next report would
// be.
func (c *rawClient) desyncWorldOnly(h *testHost, every, from uint64) *wire.ServerResync {
	c.t.Helper()
	for {
		cp := c.nextTick(from) / every * every
		maps, ok := h.log.at(cp)
		if !ok {
			c.t.Fatalf("host has no hashes at %d", cp)
		}
		unchecked := h.srv.Overview().Stats.HashReportsUnchecked
		c.send(&wire.ClientHashes{Tick: cp, World: 1, Maps: []wire.MapHash{{MapID: 0, Hash: maps[0]}, {MapID: 1, Hash: maps[1]}}})
		for {
			p := c.syncClockUntilOneOf(wire.IDServerResync, wire.IDServerTick)
			if rs, ok := p.(*wire.ServerResync); ok {
				return rs
			}
			// Keep up, as a player does: one that stops reporting its
			// tick holds the session, and no more ticks would come.
			c.send(&wire.ClientTickAck{Tick: c.granted})
			if h.srv.Overview().Stats.HashReportsUnchecked > unchecked {
				break
			}
		}
		from = cp + every
	}
}

// TestHashReportRules replays bad hash reports against a live host. Each
// ends that client with BadPacket (or, for a report older than the
// host's window, a notice), while a real player keeps playing in sync.
func TestHashReportRules(t *testing.T) {
	const every = 10
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every, HashWindow: 60}}, locksteptest.New(2, 256))
	alice := startJoiner(t, h.addr, "Alice")

	for i, tc := range []struct {
		name string
		send func(c *rawClient, checkpoint uint64)
		want string // in the disconnect message; "" for a notice
	}{
		{"tick not on the interval", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientHashes{Tick: cp + 1})
		}, "not a multiple"},
		{"two reports for one tick", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientHashes{Tick: cp, Maps: []wire.MapHash{{MapID: 0}}})
			c.send(&wire.ClientHashes{Tick: cp, Maps: []wire.MapHash{{MapID: 0}}})
		}, "at most one per interval"},
		{"ahead of the host", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientHashes{Tick: cp + 1000*every})
		}, "ahead of the host"},
		{"unknown map", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientHashes{Tick: cp, Maps: []wire.MapHash{{MapID: 7}}})
		}, "map 7, which does not exist"},
		{"map twice", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientHashes{Tick: cp, Maps: []wire.MapHash{{MapID: 1}, {MapID: 1}}})
		}, "map 1 twice"},
		{"too many parts", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientHashes{Tick: cp, Maps: []wire.MapHash{{MapID: 0, Parts: make([]uint64, lockstep.MaxMapParts+1)}}})
		}, "part hashes exceeds"},
		{"repair reported with none under way", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientResynced{Tick: cp})
		}, "none is under way"},
		{"older than the window", func(c *rawClient, cp uint64) {
			c.send(&wire.ClientHashes{Tick: every})
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, h.addr)
			c.t = t
			c.toPlaying(fmt.Sprintf("Raw%d", i)) // a name of its own: the last one may still be leaving
			// A checkpoint the host has taken, well past the window's
			// start so "older" is older.
			cp := c.nextTick(10*every) / every * every
			tc.send(c, cp)
			if tc.want == "" {
				n := c.syncClockUntil(wire.IDServerNotice).(*wire.ServerNotice)
				for !strings.Contains(n.Text, "older than the host keeps") {
					n = c.syncClockUntil(wire.IDServerNotice).(*wire.ServerNotice)
				}
				c.nc.Close()
				return
			}
			d := c.expect(wire.IDServerDisconnect).(*wire.ServerDisconnect)
			if d.Reason != wire.ReasonBadPacket || !strings.Contains(d.Message, tc.want) {
				t.Fatalf("%+v, want BadPacket with %q", d, tc.want)
			}
		})
	}
	next := (hostTick(h)/every + 2) * every
	checkSameHashes(t, h, next, alice)
	select {
	case err := <-alice.errc:
		t.Fatalf("Alice left: %v", err)
	default:
	}
}

// corruptOnce returns an OnStep that perturbs the given maps once, at the
// first step reaching the tick stored in at, and records that tick.
func corruptOnce(t *testing.T, at, done *atomic.Uint64, maps ...int32) func(*join.Config) {
	return func(c *join.Config) {
		rec := c.OnStep
		c.OnStep = func(sim lockstep.Sim) {
			if sim.Tick() >= at.Load() && done.Load() == 0 {
				for _, id := range maps {
					if err := sim.(*locksteptest.Counters).Perturb(id); err != nil {
						t.Error(err)
					}
				}
				done.Store(sim.Tick())
			}
			rec(sim)
		}
	}
}

// TestDesyncOfEveryMapSendsTheWorld corrupts every map of a joiner: the
// host sends the whole world again, and the joiner ends in sync.
func TestDesyncOfEveryMapSendsTheWorld(t *testing.T) {
	const every = 20
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every}}, locksteptest.New(3, 1024))
	var events eventLog
	var at, done atomic.Uint64
	at.Store(math.MaxUint64)
	alice := startJoiner(t, h.addr, "Alice", corruptOnce(t, &at, &done, 0, 1, 2), func(c *join.Config) {
		c.Desync, c.Resynced = events.desync, events.resynced
	})
	at.Store(alice.sess.Timings().ReadyTick + 30)
	testkit.WaitFor(t, "the repair", func() bool { _, ok := events.find(join.DesyncRepaired); return ok })
	d, _ := events.find(join.DesyncDetected)
	if len(d.Maps) != 3 || !d.World {
		t.Fatalf("desync event %+v, want three maps and the world", d)
	}
	st := h.srv.Overview().Stats
	if st.WorldResyncs != 1 || st.MapResyncs != 0 {
		t.Fatalf("stats %+v: want one world repair", st)
	}
	events.mu.Lock()
	rs := events.resyncs
	events.mu.Unlock()
	if len(rs) != 1 || !rs[0].Full {
		t.Fatalf("repairs %+v, want one full", rs)
	}
	checkSameHashes(t, h, (hostTick(h)/every+2)*every, alice)
}

// TestRepeatedDesyncDrops drops a player that desyncs more often than the
// limit, telling the others.
func TestRepeatedDesyncDrops(t *testing.T) {
	const every = 20
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every, Limit: 1}}, locksteptest.New(2, 256))
	var bobEvents eventLog
	startJoiner(t, h.addr, "Bob", func(c *join.Config) { c.Desync = bobEvents.desync })

	// Alice corrupts map 1 once, and again after the repair.
	var at, done, at2, done2 atomic.Uint64
	at.Store(math.MaxUint64)
	at2.Store(math.MaxUint64)
	alice := startJoiner(t, h.addr, "Alice", corruptOnce(t, &at, &done, 1), corruptOnce(t, &at2, &done2, 1))
	at.Store(alice.sess.Timings().ReadyTick + 30)
	testkit.WaitFor(t, "the first repair", func() bool { _, ok := bobEvents.find(join.DesyncRepaired); return ok })
	at2.Store(hostTick(h) + 10)
	var err error
	select {
	case err = <-alice.errc:
		alice.errc <- err // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("Alice was not dropped")
	}
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonDesync {
		t.Fatalf("Alice ended with %v, want reason Desync", err)
	}
	testkit.WaitFor(t, "Bob to hear of the drop", func() bool { _, ok := bobEvents.find(join.DesyncDropped); return ok })
	if st := h.srv.Overview().Stats; st.DesyncDrops != 1 || st.Desyncs != 2 {
		t.Fatalf("stats %+v: want two desyncs and one drop", st)
	}
}

// TestRepairThatDoesNotMatchEscalates: a client whose world still differs
// after a repair went in gets a new desync (and, over the limit, is
// dropped) rather than being taken as repaired.
func TestRepairThatDoesNotMatchEscalates(t *testing.T) {
	const every = 10
	h := startHost(t, host.Config{Desync: host.DesyncConfig{HashEvery: every, Limit: 1}}, locksteptest.New(2, 64))
	c := dialRaw(t, h.addr)
	c.toPlaying("Raw")
	rs := c.desyncWorldOnly(h, every, 3*every)
	if !rs.Full {
		t.Fatalf("%+v, want a full repair", rs)
	}
	// Claim the repair went in, with a world hash that still differs,
	// once its data comes, as a real client would: before that the host
	// may not know its own hash at the cut yet.
	c.syncClockUntil(wire.IDServerWorldData)
	c.send(&wire.ClientResynced{Tick: rs.Tick, World: 2})
	d := c.expect(wire.IDServerDisconnect).(*wire.ServerDisconnect)
	if d.Reason != wire.ReasonDesync {
		t.Fatalf("%+v, want Desync", d)
	}
	if st := h.srv.Overview().Stats; st.Desyncs != 2 || st.Repaired != 0 {
		t.Fatalf("stats %+v: want two desyncs, none repaired", st)
	}
}
