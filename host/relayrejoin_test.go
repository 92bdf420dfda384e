package host_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// rawAdmission is what a raw client got on admission.
type rawAdmission struct {
	c       *rawClient
	session *wire.ServerSession
	self    wire.PlayerInfo // its own entry in the player list
}

// rawJoin takes a raw client through the handshake to a relay host at
// addr and sends Client_Username with the given name, spectate flag and
// token, and, with arbiter, a proof of relaySecret. It returns the client
// and, when admitted, its session and own player-list entry; refused, the
// disconnect.
func rawJoin(t *testing.T, addr, name string, spectate bool, token []byte, arbiter bool) (rawAdmission, *wire.ServerDisconnect) {
	t.Helper()
	c := dialRaw(t, addr)
	c.t = t
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := c.expect(wire.IDServerModList).(*wire.ServerModList)
	c.send(&wire.ClientDefs{Databases: ml.Databases})
	c.syncClockUntil(wire.IDServerDefsOK)
	cu := &wire.ClientUsername{Name: name, Spectate: spectate, Token: token}
	if arbiter {
		cu.ArbiterProof = password.ArbiterProof(relaySecret, ml.ArbiterChallenge)
	}
	c.send(cu)
	a := rawAdmission{c: c}
	for a.session == nil {
		id, body, err := c.fr.Next()
		if err != nil {
			t.Fatalf("waiting for admission: %v", err)
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			t.Fatal(err)
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
		case *wire.ServerDisconnect:
			return a, p
		case *wire.ServerSession:
			a.session = p
		}
	}
	for _, pi := range c.syncClockUntil(wire.IDServerPlayerList).(*wire.ServerPlayerList).Players {
		if pi.ID == a.session.PlayerID {
			a.self = pi
		}
	}
	return a, nil
}

// rejoin closes a's connection and joins again with its token.
func (a rawAdmission) rejoin(t *testing.T, addr string, spectate, arbiter bool) (rawAdmission, *wire.ServerDisconnect) {
	t.Helper()
	a.c.nc.Close()
	return rawJoin(t, addr, "Whoever", spectate, a.session.Token, arbiter)
}

// uploadRule sends an upload for a request the host never made and
// returns the disconnect's message: "Only the session's arbiter may
// upload" for a client that is not an arbiter on this connection.
func (a rawAdmission) uploadRule(t *testing.T) string {
	t.Helper()
	a.c.send(&wire.ClientUpload{Request: 999, Total: 3, Data: []byte{1, 2, 3}})
	d := a.c.disconnected()
	if d.Reason != wire.ReasonBadPacket {
		t.Fatalf("an upload for a request never made: %+v, want BadPacket", d)
	}
	return d.Message
}

// TestRelayRejoinRepeats pins docs/protocol.md section 6.4 with 14.1 and
// 14.2: a rejoin comes back in the role its token names, spectator or
// player, whatever its Client_Username's s says; the arbiter role is the
// connection's own, proved again on each connection: an arbiter that
// rejoins without the proof is a plain player (its upload refused as
// from one), with it an arbiter again; and a spectator's token cannot
// claim it.
func TestRelayRejoinRepeats(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{}, &logs)
	joinRelay(t, h.Addr, "Arbiter", true)

	t.Run("spectate flag", func(t *testing.T) {
		spec, d := rawJoin(t, h.Addr, "Specky", true, nil, false)
		if d != nil || !spec.self.Spectator {
			t.Fatalf("a spectator's join: %+v, %+v", spec.self, d)
		}
		back, d := spec.rejoin(t, h.Addr, false, false)
		if d != nil || !back.self.Spectator || back.self.ID != spec.self.ID {
			t.Fatalf("a spectator's rejoin with s false: %+v, %+v; want the same spectator", back.self, d)
		}
		play, d := rawJoin(t, h.Addr, "Playa", false, nil, false)
		if d != nil || play.self.Spectator {
			t.Fatalf("a player's join: %+v, %+v", play.self, d)
		}
		back, d = play.rejoin(t, h.Addr, true, false)
		if d != nil || back.self.Spectator || back.self.ID != play.self.ID {
			t.Fatalf("a player's rejoin with s true: %+v, %+v; want the same player", back.self, d)
		}
	})
	t.Run("arbiter proof", func(t *testing.T) {
		sam, d := rawJoin(t, h.Addr, "Sam", false, nil, true)
		if d != nil {
			t.Fatalf("a standby arbiter's join: %+v", d)
		}
		plain, d := sam.rejoin(t, h.Addr, false, false)
		if d != nil {
			t.Fatalf("the arbiter's rejoin without its proof: %+v", d)
		}
		if msg := plain.uploadRule(t); !strings.Contains(msg, "Only the session's arbiter may upload") {
			t.Fatalf("after a rejoin without the proof: %q, want the upload refused as from a player", msg)
		}
		again, d := rawJoin(t, h.Addr, "Sam", false, nil, true)
		if d != nil {
			t.Fatalf("Sam's join: %+v", d)
		}
		proved, d := again.rejoin(t, h.Addr, false, true)
		if d != nil {
			t.Fatalf("the arbiter's rejoin with its proof: %+v", d)
		}
		if msg := proved.uploadRule(t); strings.Contains(msg, "Only the session's arbiter") {
			t.Fatalf("after a rejoin with the proof: %q, want an arbiter's upload", msg)
		}
	})
	t.Run("spectator token claims the arbiter role", func(t *testing.T) {
		spec, d := rawJoin(t, h.Addr, "Watcher", true, nil, false)
		if d != nil {
			t.Fatalf("a spectator's join: %+v", d)
		}
		back, d := spec.rejoin(t, h.Addr, false, true)
		if d == nil {
			t.Fatalf("a spectator's token with an arbiter proof was admitted: %+v", back.self)
		}
		if d.Reason != wire.ReasonBadPacket || !strings.Contains(d.Message, "spectator") {
			t.Fatalf("a spectator's token with an arbiter proof: %+v, want BadPacket saying a spectator cannot be the arbiter", d)
		}
	})
}
