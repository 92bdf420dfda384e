package host_test

import (
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// readUntil reads c's packets, answering clock rounds and noting the
// grants and the commands of its tick packets in seen, until done says
// a packet is the one awaited, and returns that packet.
func (c *rawClient) readUntil(seen map[cmdAt]bool, done func(wire.Packet) bool) wire.Packet {
	c.t.Helper()
	for {
		id, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("reading: %v", err)
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			c.t.Fatal(err)
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
		case *wire.ServerDisconnect:
			c.t.Fatalf("disconnected: %+v", p)
		case *wire.ServerTick:
			c.granted = max(c.granted, p.Granted)
			for _, cmd := range p.Commands {
				seen[cmdAt{cmd.Tick, cmd.Seq}] = true
			}
		}
		if done(p) {
			return p
		}
	}
}

// TestRelayRequestAfterItsGrant pins docs/protocol.md section 14.4: when
// an upload request reaches the arbiter, the arbiter has already received
// the grant of the request's tick and every command the cut includes, so
// it reaches the cut without stepping past a grant. Here the cut is made
// while the host is paused, after a command stamped with the cut's tick.
func TestRelayRequestAfterItsGrant(t *testing.T) {
	var logs syncbuf.Buffer
	// The joiner's wait is short: the arbiter never uploads, and the host
	// ends only once its joiner is refused.
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond},
		Relay: host.RelayConfig{UploadWait: 300 * time.Millisecond}}, &logs)
	arb := muteArbiter(t, h.Addr)
	paused := arb.pause()
	arb.send(&wire.ClientCommand{MapID: 0, Kind: 1, Payload: []byte{1}})
	seen := map[cmdAt]bool{}
	arb.readUntil(seen, func(wire.Packet) bool { return seen[cmdAt{paused, 0}] })

	// A joiner admitted now makes the host cut a join point at (paused,
	// 1), well past the world's, and ask the arbiter for it.
	if _, d := rawJoin(t, h.Addr, "Joiner", false, nil, false); d != nil {
		t.Fatalf("the joiner: %+v", d)
	}
	p := arb.readUntil(seen, func(p wire.Packet) bool { return p.ID() == wire.IDServerUploadRequest })
	req := p.(*wire.ServerUploadRequest)
	if req.Kind != wire.UploadJoinPoint || req.Tick != paused || req.Applied != 1 {
		t.Fatalf("request %+v, want a join point at (%d, 1)", req, paused)
	}
	if arb.granted < req.Tick {
		t.Fatalf("the request for tick %d came before its grant: the arbiter's latest grant was %d", req.Tick, arb.granted)
	}
	for q := uint32(0); q < req.Applied; q++ {
		if !seen[cmdAt{req.Tick, q}] {
			t.Fatalf("the request for (%d, %d) came before command (%d, %d)", req.Tick, req.Applied, req.Tick, q)
		}
	}
}
