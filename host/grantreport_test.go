package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// TestLatestGrantEndsTheHold holds the rule of the protocol spec's
// sections 9.2 and 11 for a player that does not simulate: it reports
// WorldReady at the header's tick, far behind the host, and holds nobody
// while it catches up; once it has reported the grants it received it
// counts, and when it stops reporting the host holds time and sends no
// new grant; a Client_TickAck with the latest grant it has received (the
// header's and those of the ticks that came since) is a report it can
// make, and it ends the hold.
func TestLatestGrantEndsTheHold(t *testing.T) {
	const maxLag = 10
	h := startHost(t, host.Config{Lag: host.LagConfig{MaxLag: maxLag}}, locksteptest.New(1, 16))
	c := dialRaw(t, h.addr)
	c.toUsername()
	c.send(&wire.ClientUsername{Name: "Watcher"})

	var payload []byte
	var total, latest uint64
	var header *snapshot.Header
	waiting := false // the host said it waits for this player
	handle := func() wire.Packet {
		t.Helper()
		id, body, err := c.fr.Next()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
		case *wire.ServerKeepalive:
			c.send(&wire.ClientKeepalive{Seq: p.Seq, HostTime: p.HostTime})
		case *wire.ServerTick:
			latest = max(latest, p.Granted)
		case *wire.ServerNotice:
			waiting = waiting || strings.HasPrefix(p.Text, "Waiting for Watcher")
		case *wire.ServerWorldData:
			payload, total = append(payload, p.Data...), p.Total
			if uint64(len(payload)) == total {
				parsed, err := snapshot.Parse(payload)
				if err != nil {
					t.Fatal(err)
				}
				header = &parsed.Header
				latest = max(latest, header.Granted)
				c.send(&wire.ClientAck{Received: total})
			}
		case *wire.ServerDisconnect:
			t.Fatalf("disconnected: %+v", p)
		}
		return p
	}
	// Download, then stay in the catch-up phase until the host is well
	// past the header's tick.
	for header == nil || latest <= header.Tick+3*maxLag {
		handle()
	}
	c.send(&wire.ClientWorldReady{Tick: header.Tick, WorldHash: header.WorldHash})
	// Far behind, it is a joiner catching up: the host grants on.
	for ready := latest; latest <= ready+3*maxLag; {
		handle()
	}
	if waiting {
		t.Fatal("the host held time for a joiner catching up")
	}
	// It reports each grant for a while (it has caught up: its lag counts
	// from now on), then nothing, and the host holds time for it.
	for caught := latest; latest <= caught+3*maxLag; {
		if tk, ok := handle().(*wire.ServerTick); ok {
			c.send(&wire.ClientTickAck{Tick: tk.Granted})
		}
	}
	for !waiting {
		handle()
	}
	// Held: the host steps no further. The latest grant received is a
	// report the client can make, and it releases the session.
	held := latest
	c.send(&wire.ClientTickAck{Tick: latest})
	for {
		if tk, ok := handle().(*wire.ServerTick); ok && tk.Granted > held {
			return
		}
	}
}
