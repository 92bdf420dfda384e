package host_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// echoOnly answers the host's clock rounds and keepalives on nc, and
// reports no tick, until the connection ends: a client the host hears
// from that simulates nothing (a joiner still catching up).
func echoOnly(nc net.Conn) {
	fr := wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)
	for {
		id, body, err := fr.Next()
		if err != nil {
			return
		}
		var reply wire.Packet
		switch id {
		case wire.IDServerClock, wire.IDServerKeepalive:
			p, err := wire.Decode(id, body)
			if err != nil {
				return
			}
			switch p := p.(type) {
			case *wire.ServerClock:
				reply = &wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()}
			case *wire.ServerKeepalive:
				reply = &wire.ClientKeepalive{Seq: p.Seq, HostTime: p.HostTime}
			}
		default:
			continue
		}
		if _, err := nc.Write(wire.MustMarshal(reply)); err != nil {
			return
		}
	}
}

// TestLagWaitNotForSilentPlayer: a player whose socket goes silent (no
// tick report, no keepalive echo, as a tab closed without a word) is
// held for no longer than a few keepalives, not until the Idle drop:
// time runs again for the others while its slot is kept.
func TestLagWaitNotForSilentPlayer(t *testing.T) {
	h := startHost(t, host.Config{TickRate: 100, Lag: host.LagConfig{MaxLag: 20, MaxHold: -1},
		Timeouts: host.TimeoutConfig{Idle: 5 * time.Minute}}, locksteptest.New(1, 16))
	var notices chatLog
	alice := startJoiner(t, h.addr, "Alice", spectate, notices.hook)
	c := dialRaw(t, h.addr)
	c.toPlaying("Quiet")
	c.clockSynced("Quiet")
	// From here Quiet reads nothing and sends nothing.
	testkit.WaitFor(t, "the hold for Quiet", func() bool { return notices.noticed("Waiting for Quiet") })
	held := alice.log.latest()
	testkit.WaitFor(t, "time to run again without Quiet", func() bool { return alice.log.latest() > held+50 })
	if !notices.noticed("running again") {
		t.Errorf("nobody was told the session runs again")
	}
	o := h.srv.Overview()
	if o.Holding || len(o.Players) != 2 {
		t.Errorf("holding %v with players %+v; want running, Quiet's slot kept until the Idle drop", o.Holding, o.Players)
	}
}

// TestLagNoHoldForSilentPlayer: at the default tick rate and max lag, a
// player whose socket goes silent stops counting before it is far enough
// behind to be held for: time never stops for the others.
func TestLagNoHoldForSilentPlayer(t *testing.T) {
	h := startHost(t, host.Config{TickRate: 60, Lag: host.LagConfig{MaxHold: -1}, Timeouts: host.TimeoutConfig{Idle: 5 * time.Minute}},
		locksteptest.New(1, 16))
	var notices chatLog
	alice := startJoiner(t, h.addr, "Alice", spectate, notices.hook)
	c := dialRaw(t, h.addr)
	c.toPlaying("Quiet")
	c.clockSynced("Quiet")
	// Quiet reports the tick it stands at, as a live client does, and
	// from here reads nothing and sends nothing. 4 s of ticks at 60 a
	// second is twice the 2 s the default max lag of 120 ticks takes.
	c.send(&wire.ClientTickAck{Tick: c.nextTick(0)})
	from := alice.log.latest()
	testkit.WaitFor(t, "4 s of ticks after Quiet went silent", func() bool { return alice.log.latest() > from+240 })
	if notices.noticed("Waiting for Quiet") {
		t.Errorf("the session held time for a silent player")
	}
}

// TestLagWaitNotForJoinerCatchingUp: a joiner whose WorldReady is far
// behind the host (it loaded a join point the host has since moved past)
// and which still catches up holds nobody: no "Waiting for" notice, and
// time runs on for the others.
func TestLagWaitNotForJoinerCatchingUp(t *testing.T) {
	h := startHost(t, host.Config{TickRate: 100, Lag: host.LagConfig{MaxLag: 20}}, locksteptest.New(1, 16))
	var notices chatLog
	alice := startJoiner(t, h.addr, "Alice", spectate, notices.hook)
	c := dialRaw(t, h.addr)
	c.toUsername()
	c.send(&wire.ClientUsername{Name: "Slow"})
	var payload []byte
	var total uint64
	for total == 0 || uint64(len(payload)) < total {
		wd := c.syncClockUntil(wire.IDServerWorldData).(*wire.ServerWorldData)
		payload, total = append(payload, wd.Data...), wd.Total
	}
	p, err := snapshot.Parse(payload)
	if err != nil {
		t.Fatal(err)
	}
	c.send(&wire.ClientAck{Received: total})
	// Loading and catching up take a while: the host moves on meanwhile.
	testkit.WaitFor(t, "the host to move past the join point", func() bool { return hostTick(h) > p.Header.Granted+40 })
	c.send(&wire.ClientWorldReady{Tick: p.Header.Granted})
	go echoOnly(c.nc)
	testkit.WaitFor(t, "Slow's WorldReady", func() bool {
		for _, pl := range h.srv.Overview().Players {
			if pl.Name == "Slow" && pl.Status == "playing" {
				return true
			}
		}
		return false
	})
	from := alice.log.latest()
	testkit.WaitFor(t, "time to run on while Slow catches up", func() bool { return alice.log.latest() > from+100 })
	if notices.noticed("Waiting for Slow") || h.srv.Overview().Holding {
		t.Errorf("the session held time for a joiner catching up")
	}
}
