package host_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// workedStep is one frame of the specification's worked handshake.
type workedStep struct {
	fromClient bool
	p          wire.Packet
	note       string
}

// workedWorld is the tiny world of the worked handshake: one map of 16
// bytes at tick 0, compressed as the host does.
func workedWorld(t *testing.T) (*snapshot.Payload, [][]byte) {
	t.Helper()
	raw, err := snapshot.Cut(locksteptest.New(1, 16))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := raw.Compress(snapshot.Compression{Codec: snapshot.Gzip, Level: snapshot.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(pt, 1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var chunks [][]byte
	for off := uint64(0); off < pl.Total(); {
		c := pl.Chunk(off, wire.MaxChunkData)
		chunks = append(chunks, c)
		off += uint64(len(c))
	}
	return pl, chunks
}

// workedHandshake is the specification's worked handshake: a first join
// as a player, with a password, from connect to WorldReady. The random
// values (challenge, nonce, token) and the clocks are fixed here; a real
// session has its own.
func workedHandshake(t *testing.T) []workedStep {
	t.Helper()
	_, chunks := workedWorld(t)
	payload := bytes.Join(chunks, nil)
	parsed, err := snapshot.Parse(payload)
	if err != nil {
		t.Fatal(err)
	}
	dbs := make([]wire.DefSummary, len(testDefs))
	for i, d := range testDefs {
		dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	slices.SortFunc(dbs, func(a, b wire.DefSummary) int { return strings.Compare(a.Type, b.Type) })
	challenge := bytes.Repeat([]byte{0x5a}, password.ChallengeSize)
	const hostTime = 1_790_000_000_000_000
	steps := []workedStep{
		{true, &wire.ClientProtocol{Protocol: wire.ProtocolVersion}, "the protocol version"},
		{false, &wire.ServerModList{GameVersion: "1.5", Mods: []string{"lockhost.core"}, PasswordChallenge: challenge, Databases: dbs},
			"game version, mods, a 32-byte password challenge, the host's def databases"},
		{true, &wire.ClientDefs{Databases: dbs}, "the databases the host announced"},
		{false, &wire.ServerClock{Nonce: 0x0badf00d, HostTime: hostTime, Delta: 0, Attempt: 0}, "clock round 0"},
		{true, &wire.ClientClock{Nonce: 0x0badf00d, ClientTime: hostTime + 1500}, "the nonce echoed, the client's clock"},
		{false, &wire.ServerDefsOK{GameName: "lockhost colony", PlayerID: 1}, "the round landed in the window: provisional player ID 1"},
		{true, &wire.ClientUsername{Name: "ann", PasswordProof: password.Proof([]byte("swordfish"), challenge)},
			`name "ann", proof = HMAC-SHA256("swordfish", domain || challenge)`},
		{false, &wire.ServerSession{Token: bytes.Repeat([]byte{0xc4}, wire.TokenSize), GraceMs: 300000, PlayerID: 1, HashEvery: 60},
			"admitted: the rejoin token, 5 min of grace, lasting ID 1, hashes every 60 ticks"},
		{false, &wire.ServerPlayerList{Action: wire.PlayerListFull, Players: []wire.PlayerInfo{{ID: 1, Name: "ann", Faction: 1, Status: wire.StatusDownloading}}},
			"the whole player list"},
		{false, &wire.ServerNotice{Kind: wire.NoticeJoined, Text: "ann joined the session."}, "to everyone"},
		{false, &wire.ServerNotice{Kind: wire.NoticeFactionOnline, Text: "Faction 1 is now online."}, "to everyone"},
	}
	// The host ends a chunk where the header or a blob ends.
	notes := []string{"the payload's prefix and header", "the world blob", "the map blob"}
	off := uint64(0)
	for i, c := range chunks {
		steps = append(steps, workedStep{false, &wire.ServerWorldData{Offset: off, Total: uint64(len(payload)), Data: c}, "chunk: " + notes[min(i, len(notes)-1)]})
		off += uint64(len(c))
		steps = append(steps, workedStep{true, &wire.ClientAck{Received: off}, "cumulative: bytes received so far"})
	}
	return append(steps, workedStep{true, &wire.ClientWorldReady{Tick: parsed.Header.Tick, WorldHash: parsed.Header.WorldHash},
		"ready at the header's tick with the header's world hash"})
}

// workedSpec renders the worked handshake as the specification shows it.
func workedSpec(t *testing.T) string {
	var sb strings.Builder
	for i, s := range workedHandshake(t) {
		dir := "host to client"
		if s.fromClient {
			dir = "client to host"
		}
		fmt.Fprintf(&sb, "Step %d, %s: %s (%s)\n\n```hex\n%s```\n\n", i+1, dir, s.p.ID(), s.note, hexRows(workedFrame(s.p)))
	}
	return sb.String()
}

// workedFrame is the frame the host or the client writes for p: the
// host writes Server_WorldData with fixed-width fields, as its writer
// does (wire.AppendWorldDataHeader), every other packet as Marshal does.
func workedFrame(p wire.Packet) []byte {
	if wd, ok := p.(*wire.ServerWorldData); ok {
		return append(wire.AppendWorldDataHeader(nil, wd.Offset, wd.Total, len(wd.Data)), wd.Data...)
	}
	return wire.MustMarshal(p)
}

func hexRows(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		row := b[i:min(i+16, len(b))]
		parts := make([]string, len(row))
		for j, c := range row {
			parts[j] = hex.EncodeToString([]byte{c})
		}
		sb.WriteString(strings.Join(parts, " ") + "\n")
	}
	return sb.String()
}

var workedStepRe = regexp.MustCompile("(?m)^Step \\d+, .*\\n\\n```hex\\n[0-9a-f \\n]+```\\n")

// TestWorkedHandshakeInSpec holds the specification's worked handshake
// to what the code encodes for it, byte for byte.
func TestWorkedHandshakeInSpec(t *testing.T) {
	spec, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(workedStepRe.FindAllString(string(spec), -1), "\n")
	if want := strings.TrimSuffix(workedSpec(t), "\n"); got != want {
		t.Errorf("the spec's worked handshake differs from the code's; it should read:\n%s", want)
	}
}

// TestWorkedHandshakeIsASession runs the worked handshake's client side
// against a real host with the same content, world and password, and
// checks that the host sends the same packets in the same order (clock
// rounds, ticks and keepalives aside) with the same values, except those
// that are random or depend on the time (challenge, nonces, clocks, token,
// the payload's tick and hashes).
func TestWorkedHandshakeIsASession(t *testing.T) {
	steps := workedHandshake(t)
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{Password: []byte("swordfish")}, Desync: host.DesyncConfig{HashEvery: 60}}, locksteptest.New(1, 16))
	c := dialRaw(t, h.addr)
	var challenge []byte
	var payload []byte
	for i, s := range steps {
		if s.fromClient {
			switch p := s.p.(type) {
			case *wire.ClientClock:
				continue // answered below, as the rounds come
			case *wire.ClientUsername:
				c.send(&wire.ClientUsername{Name: p.Name, PasswordProof: password.Proof([]byte("swordfish"), challenge)})
			case *wire.ClientAck, *wire.ClientWorldReady:
				// sent with the real payload's values below
			default:
				c.send(s.p)
			}
			continue
		}
		if _, ok := s.p.(*wire.ServerClock); ok {
			continue
		}
		var got wire.Packet
		for got == nil {
			id, body, err := c.fr.Next()
			if err != nil {
				t.Fatalf("step %d: waiting for %s: %v", i+1, s.p.ID(), err)
			}
			if wd, ok := s.p.(*wire.ServerWorldData); ok && id == wire.IDServerWorldData {
				// The layout, not the values: up to the data's length.
				want := workedFrame(wd)[5:30]
				same := len(body) >= len(want)
				for _, r := range [][2]int{{0, 4}, {12, 15}, {23, 26}} { // map, keys and their types
					same = same && bytes.Equal(body[r[0]:r[1]], want[r[0]:r[1]])
				}
				if !same {
					t.Errorf("step %d: the host's chunk starts % x, the worked handshake's % x", i+1, body[:min(len(body), len(want))], want)
				}
			}
			p, err := wire.Decode(id, body)
			if err != nil {
				t.Fatal(err)
			}
			switch p := p.(type) {
			case *wire.ServerClock:
				c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
			case *wire.ServerTick, *wire.ServerKeepalive:
			default:
				got = p
			}
		}
		if got.ID() != s.p.ID() {
			t.Fatalf("step %d: the host sent %s, the worked handshake shows %s", i+1, got.ID(), s.p.ID())
		}
		switch p := got.(type) {
		case *wire.ServerModList:
			challenge = p.PasswordChallenge
			want := *s.p.(*wire.ServerModList)
			want.PasswordChallenge = challenge
			if len(challenge) != password.ChallengeSize || !bytes.Equal(wire.MustMarshal(p), wire.MustMarshal(&want)) {
				t.Errorf("step %d: %+v, the worked handshake shows %+v", i+1, p, s.p)
			}
		case *wire.ServerSession:
			want := *s.p.(*wire.ServerSession)
			want.Token = p.Token
			if !bytes.Equal(wire.MustMarshal(p), wire.MustMarshal(&want)) {
				t.Errorf("step %d: %+v, the worked handshake shows %+v", i+1, p, s.p)
			}
		case *wire.ServerWorldData:
			want := s.p.(*wire.ServerWorldData)
			if p.Offset != uint64(len(payload)) || (p.Offset == 0) != (want.Offset == 0) {
				t.Fatalf("step %d: a chunk at %d after %d bytes", i+1, p.Offset, len(payload))
			}
			payload = append(payload, p.Data...)
			c.send(&wire.ClientAck{Received: uint64(len(payload))})
			last := want.Offset+uint64(len(want.Data)) == want.Total
			if last != (uint64(len(payload)) == p.Total) {
				t.Fatalf("step %d: chunk %d+%d of %d; the worked handshake's is %d+%d of %d",
					i+1, p.Offset, len(p.Data), p.Total, want.Offset, len(want.Data), want.Total)
			}
			if !last {
				continue
			}
			parsed, err := snapshot.Parse(payload)
			if err != nil {
				t.Fatalf("step %d: %v", i+1, err)
			}
			hl := binary.BigEndian.Uint32(payload)
			if int(hl)+12 != len(payload)-int(parsed.Header.World.Size)-int(parsed.Header.Maps[0].Blob.Size) || parsed.Header.Faction != 1 {
				t.Errorf("step %d: header of %d bytes, %d maps, faction %d", i+1, hl, len(parsed.Maps), parsed.Header.Faction)
			}
			// Ready at the grant, as a simulating client that caught up
			// is: one that reports an older tick holds the session's time.
			c.send(&wire.ClientWorldReady{Tick: parsed.Header.Granted, WorldHash: parsed.Header.WorldHash})
		default:
			if !bytes.Equal(wire.MustMarshal(got), wire.MustMarshal(s.p)) {
				t.Errorf("step %d: %+v, the worked handshake shows %+v", i+1, got, s.p)
			}
		}
	}
	c.clockSynced("ann")
}
