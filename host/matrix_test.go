package host_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/wire"
)

// matrixPacket is one packet of every ID a hostile client might send,
// each with a body that decodes.
func matrixPacket(id wire.ID) wire.Packet {
	switch id {
	case wire.IDClientProtocol:
		return &wire.ClientProtocol{Protocol: wire.ProtocolVersion}
	case wire.IDClientDefs:
		return &wire.ClientDefs{}
	case wire.IDClientUsername:
		return &wire.ClientUsername{Name: "Zed"}
	case wire.IDClientWorldReady:
		return &wire.ClientWorldReady{}
	case wire.IDClientCommand:
		return &wire.ClientCommand{MapID: 0, Kind: locksteptest.KindAdd, Payload: []byte{1}}
	case wire.IDClientClock:
		return &wire.ClientClock{}
	case wire.IDClientAck:
		return &wire.ClientAck{}
	case wire.IDClientTickAck:
		return &wire.ClientTickAck{}
	case wire.IDClientKeepalive:
		return &wire.ClientKeepalive{}
	case wire.IDClientHashes:
		return &wire.ClientHashes{}
	case wire.IDClientResynced:
		return &wire.ClientResynced{}
	case wire.IDServerModList:
		return &wire.ServerModList{}
	case wire.IDServerDefsOK:
		return &wire.ServerDefsOK{}
	case wire.IDServerWorldData:
		return &wire.ServerWorldData{}
	case wire.IDServerPlayerList:
		return &wire.ServerPlayerList{}
	case wire.IDServerDisconnect:
		return &wire.ServerDisconnect{}
	case wire.IDServerNotice:
		return &wire.ServerNotice{}
	case wire.IDServerTick:
		return &wire.ServerTick{}
	case wire.IDServerClock:
		return &wire.ServerClock{}
	case wire.IDServerKeepalive:
		return &wire.ServerKeepalive{}
	case wire.IDServerSession:
		return &wire.ServerSession{Token: make([]byte, wire.TokenSize)}
	case wire.IDServerResync:
		return &wire.ServerResync{Full: true}
	case wire.IDServerDesync:
		return &wire.ServerDesync{}
	}
	return nil
}

// allIDs is every packet ID the protocol defines.
func allIDs() []wire.ID {
	var ids []wire.ID
	for id := 0; id < 256; id++ {
		if p := matrixPacket(wire.ID(id)); p != nil {
			ids = append(ids, wire.ID(id))
		}
	}
	return ids
}

// phase takes a fresh raw client to one phase of the flow.
type phase struct {
	name    string
	reach   func(c *rawClient, name string)
	allowed []wire.ID // packets this phase takes
}

var matrixPhases = []phase{
	{"connected", func(c *rawClient, _ string) {}, []wire.ID{wire.IDClientProtocol}},
	{"protocol sent", func(c *rawClient, _ string) {
		c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
		c.expect(wire.IDServerModList)
	}, []wire.ID{wire.IDClientDefs}},
	{"defs accepted", func(c *rawClient, _ string) { c.toUsername() }, []wire.ID{wire.IDClientUsername}},
	{"downloading", func(c *rawClient, name string) {
		c.toUsername()
		c.send(&wire.ClientUsername{Name: name})
		c.syncClockUntil(wire.IDServerWorldData)
	}, []wire.ID{wire.IDClientAck, wire.IDClientWorldReady, wire.IDClientKeepalive}},
	{"playing", func(c *rawClient, name string) {
		c.toPlaying(name)
		c.clockSynced(name)
	}, []wire.ID{wire.IDClientCommand, wire.IDClientTickAck, wire.IDClientHashes, wire.IDClientResynced, wire.IDClientKeepalive, wire.IDClientClock}},
}

// frameOf is a frame with the given declared length, id and body.
func frameOf(length uint32, id byte, body []byte) []byte {
	return append(frameHeader(length, wire.ID(id)), body...)
}

// TestBadInputMatrix replays a table of hostile inputs against one live
// host: every packet out of its phase, length fields at their edges,
// truncated frames at every byte, garbage after a valid frame, too many
// databases, bad names, lying acknowledgements, commands for unknown maps,
// and a flood of connections. Each gets its clean refusal (the reason
// checked), and a real player in the same session keeps playing and ends
// in sync with the host.
func TestBadInputMatrix(t *testing.T) {
	h := startHost(t, host.Config{Timeouts: host.TimeoutConfig{Handshake: time.Second, Username: time.Second}, Desync: host.DesyncConfig{HashEvery: 20}},
		locksteptest.New(2, 256))
	alice := startJoiner(t, h.addr, "Alice")
	n := 0
	fresh := func(t *testing.T) (*rawClient, string) {
		n++
		c := dialRaw(t, h.addr)
		c.t = t
		return c, fmt.Sprintf("Raw%d", n)
	}
	wantReason := func(t *testing.T, c *rawClient, reasons ...wire.Reason) *wire.ServerDisconnect {
		t.Helper()
		d := c.disconnected()
		if !slices.Contains(reasons, d.Reason) {
			t.Fatalf("%+v, want %v", d, reasons)
		}
		return d
	}

	t.Run("out of phase", func(t *testing.T) {
		for _, ph := range matrixPhases {
			for _, id := range allIDs() {
				if slices.Contains(ph.allowed, id) {
					continue
				}
				t.Run(fmt.Sprintf("%s/%s", ph.name, id), func(t *testing.T) {
					c, name := fresh(t)
					ph.reach(c, name)
					c.send(matrixPacket(id))
					d := wantReason(t, c, wire.ReasonBadPacket)
					if !strings.Contains(d.Message, "not allowed") && !strings.Contains(d.Message, id.String()) {
						t.Fatalf("message %q does not name the packet", d.Message)
					}
				})
			}
		}
	})

	maxFrame := uint32(wire.MaxClientCommandPayload + 4096) // the host's default limit
	t.Run("length fields", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			frame []byte
		}{
			{"frame length 0", binary.BigEndian.AppendUint32(nil, 0)},
			{"frame length max, body garbage", frameOf(maxFrame, byte(wire.IDClientProtocol), bytes.Repeat([]byte{0xc1}, int(maxFrame)-1))},
			{"frame length max+1", frameOf(maxFrame+1, byte(wire.IDClientProtocol), nil)},
			{"frame length 2^32-1", frameOf(1<<32-1, byte(wire.IDClientProtocol), nil)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c, _ := fresh(t)
				c.writeRaw(tc.frame)
				wantReason(t, c, wire.ReasonBadPacket)
			})
		}
		t.Run("msgpack array of 2^32-1 databases", func(t *testing.T) {
			c, _ := fresh(t)
			c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
			c.expect(wire.IDServerModList)
			body := []byte{0x81, 0xa1, 'd', 0xdd, 0xff, 0xff, 0xff, 0xff} // a map whose one array claims 2^32-1 entries
			c.writeRaw(frameOf(uint32(len(body)+1), byte(wire.IDClientDefs), body))
			wantReason(t, c, wire.ReasonBadPacket, wire.ReasonGeneric)
		})
		t.Run("513 databases", func(t *testing.T) {
			c, _ := fresh(t)
			c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
			c.expect(wire.IDServerModList)
			c.send(&wire.ClientDefs{Databases: make([]wire.DefSummary, wire.MaxDatabases+1)})
			wantReason(t, c, wire.ReasonGeneric)
		})
	})

	t.Run("truncated frames", func(t *testing.T) {
		whole := wire.MustMarshal(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
		var wg sync.WaitGroup
		for cut := 1; cut < len(whole); cut++ {
			c, _ := fresh(t)
			wg.Go(func() {
				c.writeRaw(whole[:cut])
				d := c.disconnected() // the handshake deadline passes
				if d.Reason != wire.ReasonTimeout {
					t.Errorf("cut at %d of %d bytes: %+v, want Timeout", cut, len(whole), d)
				}
			})
		}
		wg.Wait()
	})

	t.Run("garbage after a valid frame", func(t *testing.T) {
		for _, garbage := range [][]byte{
			bytes.Repeat([]byte{0xff}, 16),              // a length of 2^32-1
			{0, 0, 0, 3, 0x63, 0xde, 0xad},              // an unknown packet ID
			{0, 0, 0, 2, byte(wire.IDClientDefs), 0xc1}, // a body that is not msgpack
		} {
			c, _ := fresh(t)
			c.writeRaw(append(wire.MustMarshal(&wire.ClientProtocol{Protocol: wire.ProtocolVersion}), garbage...))
			wantReason(t, c, wire.ReasonBadPacket)
		}
	})

	t.Run("names", func(t *testing.T) {
		for _, name := range []string{"Bob\x07", "Bob\n", "Bo b", "Zoë", "Алиса", "名前名前", "Bob\x00", "😀😀😀", "Bob\xff"} {
			c, _ := fresh(t)
			c.toUsername()
			c.send(&wire.ClientUsername{Name: name})
			wantReason(t, c, wire.ReasonUsernameChars, wire.ReasonUsernameLength, wire.ReasonBadPacket)
		}
	})

	t.Run("acknowledgements that lie", func(t *testing.T) {
		for _, lie := range []func(total uint64) uint64{
			func(total uint64) uint64 { return total + 1 },
			func(uint64) uint64 { return 1<<64 - 1 },
		} {
			c, name := fresh(t)
			c.toUsername()
			c.send(&wire.ClientUsername{Name: name})
			wd := c.syncClockUntil(wire.IDServerWorldData).(*wire.ServerWorldData)
			c.send(&wire.ClientAck{Received: lie(wd.Total)})
			wantReason(t, c, wire.ReasonBadPacket)
		}
		c, name := fresh(t)
		c.toUsername()
		c.send(&wire.ClientUsername{Name: name})
		c.syncClockUntil(wire.IDServerWorldData)
		c.send(&wire.ClientWorldReady{}) // before the world is acknowledged
		wantReason(t, c, wire.ReasonBadPacket)
	})

	t.Run("commands for unknown maps", func(t *testing.T) {
		c, name := fresh(t)
		c.toPlaying(name)
		c.send(&wire.ClientCommand{MapID: 99, Kind: locksteptest.KindAdd, Payload: []byte{1}})
		for {
			n := c.syncClockUntil(wire.IDServerNotice).(*wire.ServerNotice)
			if strings.Contains(n.Text, "Command refused") {
				break
			}
		}
		c.nextTick(hostTick(h) + 5) // still in the session
	})

	t.Run("a flood of connections", func(t *testing.T) {
		// A rate that refills nothing during the test: however slowly a loaded
		// machine makes the 40 connections, only the burst gets in.
		limited := startHost(t, host.Config{Admission: host.AdmissionConfig{ConnRate: 0.001, ConnBurst: 3}, Timeouts: host.TimeoutConfig{Handshake: time.Second}}, locksteptest.New(1, 16))
		refused := 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < 40; i++ {
			wg.Go(func() {
				nc, err := net.Dial("tcp", limited.addr)
				if err != nil {
					return
				}
				defer nc.Close()
				_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
				fr := wire.NewFrameReader(nc, wire.DefaultMaxFrame)
				id, body, err := fr.Next()
				if err != nil || id != wire.IDServerDisconnect {
					return // admitted to the handshake: it waits for Client_Protocol
				}
				if p, err := wire.Decode(id, body); err == nil && p.(*wire.ServerDisconnect).Reason == wire.ReasonRateLimited {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if refused < 30 {
			t.Fatalf("%d of 40 connections refused RateLimited, want at least 30 (burst 3)", refused)
		}
	})

	// Alice played through all of it and agrees with the host.
	checkSameHashes(t, h, hostTick(h)+20, alice)
	select {
	case err := <-alice.errc:
		t.Fatalf("Alice left: %v", err)
	default:
	}
}
