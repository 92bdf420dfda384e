package host_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// rawClient speaks the protocol by hand so tests can misbehave.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	fr *wire.FrameReader
	// granted is the latest grant seen (the world header's and every
	// Server_Tick's), which a player reports right after WorldReady.
	granted uint64
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawClient{t: t, nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)}
}

func (c *rawClient) writeRaw(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) send(p wire.Packet) { c.t.Helper(); c.writeRaw(wire.MustMarshal(p)) }

// expect reads until a packet with id arrives, skipping ticks and notices.
func (c *rawClient) expect(id wire.ID) wire.Packet {
	c.t.Helper()
	for {
		got, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("waiting for %s: %v", id, err)
		}
		if got == id {
			p, err := wire.Decode(got, body)
			if err != nil {
				c.t.Fatal(err)
			}
			return p
		}
		if got == wire.IDServerDisconnect {
			p, _ := wire.Decode(got, body)
			c.t.Fatalf("waiting for %s: disconnected: %+v", id, p)
		}
	}
}

// disconnected reads until the host's disconnect and returns it; the
// connection must then end.
func (c *rawClient) disconnected() *wire.ServerDisconnect {
	c.t.Helper()
	d := c.expect(wire.IDServerDisconnect).(*wire.ServerDisconnect)
	if _, _, err := c.fr.Next(); !errors.Is(err, io.EOF) {
		c.t.Fatalf("after disconnect: %v, want EOF", err)
	}
	return d
}

// toUsername runs the handshake up to DefsOK.
func (c *rawClient) toUsername() {
	c.t.Helper()
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	c.expect(wire.IDServerModList)
	dbs := make([]wire.DefSummary, len(testDefs))
	for i, d := range testDefs {
		dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	c.send(&wire.ClientDefs{Databases: dbs})
	c.syncClockUntil(wire.IDServerDefsOK)
}

// syncClockUntil answers the host's clock-sync rounds honestly until a
// packet with id arrives.
func (c *rawClient) syncClockUntil(id wire.ID) wire.Packet {
	c.t.Helper()
	return c.syncClockUntilOneOf(id)
}

// syncClockUntilOneOf is syncClockUntil for the first of several packets.
func (c *rawClient) syncClockUntilOneOf(ids ...wire.ID) wire.Packet {
	c.t.Helper()
	for {
		got, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", ids, err)
		}
		p, err := wire.Decode(got, body)
		if err != nil {
			c.t.Fatal(err)
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
			continue
		case *wire.ServerDisconnect:
			c.t.Fatalf("waiting for %v: disconnected: %+v", ids, p)
		case *wire.ServerTick:
			c.granted = max(c.granted, p.Granted)
		}
		if slices.Contains(ids, got) {
			return p
		}
	}
}

func frameHeader(n uint32, id wire.ID) []byte {
	return append(binary.BigEndian.AppendUint32(nil, n), byte(id))
}

func TestBadInputDisconnectsOnlyThatClient(t *testing.T) {
	h := startHost(t, host.Config{Timeouts: host.TimeoutConfig{Handshake: time.Second, Username: time.Second}}, locksteptest.New(2, 64))
	alice := startJoiner(t, h.addr, "Alice")

	tooMany := make([]wire.DefSummary, wire.MaxDatabases+1)
	for i := range tooMany {
		tooMany[i] = wire.DefSummary{Type: "T", Count: 1}
	}
	cases := []struct {
		name string
		run  func(c *rawClient)
		want wire.Reason
	}{
		{"frame over limit", func(c *rawClient) {
			c.writeRaw(frameHeader(wire.DefaultMaxFrame+1, wire.IDClientProtocol))
		}, wire.ReasonBadPacket},
		{"frame of 4 GiB", func(c *rawClient) {
			c.writeRaw(frameHeader(0xFFFFFFFF, wire.IDClientProtocol))
		}, wire.ReasonBadPacket},
		{"empty frame", func(c *rawClient) {
			c.writeRaw([]byte{0, 0, 0, 0})
		}, wire.ReasonBadPacket},
		{"body does not decode", func(c *rawClient) {
			c.writeRaw(wire.AppendFrame(nil, wire.IDClientProtocol, []byte{0xc1, 0xff, 0x00}))
		}, wire.ReasonBadPacket},
		{"trailing bytes after body", func(c *rawClient) {
			body := wire.MustMarshal(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})[5:]
			c.writeRaw(wire.AppendFrame(nil, wire.IDClientProtocol, append(body, 0)))
		}, wire.ReasonBadPacket},
		{"unknown packet id", func(c *rawClient) {
			c.writeRaw(wire.AppendFrame(nil, 15, nil))
		}, wire.ReasonBadPacket},
		{"defs before protocol", func(c *rawClient) {
			c.send(&wire.ClientDefs{})
		}, wire.ReasonBadPacket},
		{"world ready during handshake", func(c *rawClient) {
			c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
			c.expect(wire.IDServerModList)
			c.send(&wire.ClientWorldReady{})
		}, wire.ReasonBadPacket},
		{"command before world ready", func(c *rawClient) {
			c.toUsername()
			c.send(&wire.ClientUsername{Name: "Mallory"})
			c.send(&wire.ClientCommand{MapID: 0, Kind: locksteptest.KindAdd, Payload: []byte{1}})
		}, wire.ReasonBadPacket},
		{"server packet from client", func(c *rawClient) {
			c.send(&wire.ServerDefsOK{})
		}, wire.ReasonBadPacket},
		{"513 databases", func(c *rawClient) {
			c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
			c.expect(wire.IDServerModList)
			body, err := codec.Encode(&wire.ClientDefs{Databases: tooMany})
			if err != nil {
				t.Fatal(err)
			}
			c.writeRaw(wire.AppendFrame(nil, wire.IDClientDefs, body))
		}, wire.ReasonGeneric},
		{"name of 2", func(c *rawClient) { c.toUsername(); c.send(&wire.ClientUsername{Name: "Al"}) }, wire.ReasonUsernameLength},
		{"name of 16", func(c *rawClient) {
			c.toUsername()
			c.send(&wire.ClientUsername{Name: "ABCDEFGHIJKLMNOP"})
		}, wire.ReasonUsernameLength},
		{"name with space", func(c *rawClient) { c.toUsername(); c.send(&wire.ClientUsername{Name: "Al ice"}) }, wire.ReasonUsernameChars},
		{"name online", func(c *rawClient) { c.toUsername(); c.send(&wire.ClientUsername{Name: "aLiCe"}) }, wire.ReasonUsernameAlreadyOnline},
		{"empty name ignored, then deadline", func(c *rawClient) {
			c.toUsername()
			c.send(&wire.ClientUsername{Name: ""})
		}, wire.ReasonTimeout},
		{"silent client", func(c *rawClient) {}, wire.ReasonTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, h.addr)
			c.t = t
			tc.run(c)
			d := c.disconnected()
			if d.Reason != tc.want {
				t.Fatalf("reason %s (%q), want %s", d.Reason, d.Message, tc.want)
			}
			if d.Message == "" {
				t.Fatal("disconnect without a message")
			}
		})
	}

	// Alice was never disturbed: she still follows the session.
	before := alice.log
	var t0 uint64
	testkit.WaitFor(t, "Alice to keep simulating", func() bool {
		before.mu.Lock()
		defer before.mu.Unlock()
		for tk := range before.hashes {
			t0 = max(t0, tk)
		}
		return t0 > 0
	})
	testkit.WaitFor(t, "Alice to advance further", func() bool {
		_, ok := alice.log.at(t0 + 20)
		return ok
	})
	select {
	case err := <-alice.errc:
		t.Fatalf("Alice's session ended: %v", err)
	default:
	}
}
