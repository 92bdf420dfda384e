package status

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/wire"
)

// goldenInfo is the reply the protocol specification shows byte for byte.
var goldenInfo = Info{Players: 2, MaxPlayers: 8, GameName: "colony", GameVersion: "1.5",
	Protocol: wire.ProtocolVersion, Tick: 600, Password: true, Databases: 1, DefsHash: 0x0011223344556677}

// goldenPingID is the ping ID of the specification's example.
const goldenPingID = 0x01020304

// specDatagram matches one of the specification's example datagrams.
var specDatagram = regexp.MustCompile("(?m)^(Request|Reply) datagram:\\s*\\n+```hex\\n([0-9a-f \\n]+)```")

// TestGoldenDatagrams holds the request and reply encodings to the bytes
// the protocol specification quotes, and the spec's bytes to the decoders.
func TestGoldenDatagrams(t *testing.T) {
	spec, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, m := range specDatagram.FindAllStringSubmatch(string(spec), -1) {
		b, err := hex.DecodeString(strings.Join(strings.Fields(m[2]), ""))
		if err != nil {
			t.Fatalf("%s datagram: %v", m[1], err)
		}
		got[m[1]] = b
	}
	req := AppendRequest(nil, goldenPingID)
	if !bytes.Equal(got["Request"], req) {
		t.Errorf("the request encodes as %x; the spec says %x", req, got["Request"])
	}
	if id, ok := ParseRequest(got["Request"]); !ok || id != goldenPingID {
		t.Errorf("the spec's request parses as %#x, %v", id, ok)
	}
	rep, err := AppendReply(nil, goldenPingID, goldenInfo)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got["Reply"], rep) {
		t.Errorf("the reply encodes as %x; the spec says %x", rep, got["Reply"])
	}
	id, info, err := DecodeReply(got["Reply"])
	if err != nil || id != goldenPingID || info != goldenInfo {
		t.Errorf("the spec's reply decodes as %#x, %+v, %v", id, info, err)
	}
}

// TestSpecDefsHash computes the status reply's defsHash as the protocol
// specification (section 7.4) describes it, without this package's
// encoder, and checks it against SummaryHash.
func TestSpecDefsHash(t *testing.T) {
	sums := []defs.Summary{{Type: "PawnKindDef", Count: 3, Hash: 0x438748fb4ea49bd6}, {Type: "ThingDef", Count: 25, Hash: 0x3a1c18b21366324e}}
	var b []byte
	for _, s := range sums {
		for n := uint64(len(s.Type)); ; n >>= 7 { // str(type): uvarint length, then the bytes
			if n < 0x80 {
				b = append(b, byte(n))
				break
			}
			b = append(b, byte(n)|0x80)
		}
		b = append(b, s.Type...)
		b = binary.BigEndian.AppendUint32(b, uint32(s.Count))
		b = binary.BigEndian.AppendUint64(b, s.Hash)
	}
	if got, want := xxhash.Sum64(b), SummaryHash(sums); got != want {
		t.Errorf("the spec's defsHash is %016x, the package's %016x", got, want)
	}
}

// specReachReply matches the specification's version 2 reply.
var specReachReply = regexp.MustCompile("(?m)^Version 2 reply datagram[^\\n]*\\n[^`]*```hex\\n([0-9a-f \\n]+)```")

// TestGoldenReachReply holds the version 2 reply to the bytes the
// specification quotes (section 13.1), both ways.
func TestGoldenReachReply(t *testing.T) {
	spec, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	m := specReachReply.FindStringSubmatch(string(spec))
	if m == nil {
		t.Fatal("the specification shows no version 2 reply datagram")
	}
	want, err := hex.DecodeString(strings.Join(strings.Fields(m[1]), ""))
	if err != nil {
		t.Fatal(err)
	}
	info := goldenInfo
	info.Reach = Reach{Mapping: MappingMapped, External: netip.MustParseAddrPort("198.51.100.1:30502")}
	got, err := AppendReplyVersion(nil, goldenPingID, info, ReachVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the version 2 reply encodes as %x; the spec says %x", got, want)
	}
	id, dec, err := DecodeReply(want)
	if err != nil || id != goldenPingID || dec != info {
		t.Errorf("the spec's version 2 reply decodes as %#x, %+v, %v", id, dec, err)
	}
}

// specPathsReply matches the specification's version 3 reply.
var specPathsReply = regexp.MustCompile("(?m)^Version 3 reply datagram[^\\n]*\\n[^`]*```hex\\n([0-9a-f \\n]+)```")

// TestGoldenPathsReply holds the version 3 reply to the bytes the
// specification quotes (section 13.3), both ways.
func TestGoldenPathsReply(t *testing.T) {
	spec, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	m := specPathsReply.FindStringSubmatch(string(spec))
	if m == nil {
		t.Fatal("the specification shows no version 3 reply datagram")
	}
	want, err := hex.DecodeString(strings.Join(strings.Fields(m[1]), ""))
	if err != nil {
		t.Fatal(err)
	}
	info := goldenInfo
	info.Reach = Reach{Mapping: MappingMapped, External: netip.MustParseAddrPort("198.51.100.1:30502")}
	info.Paths[PathCode("punched")] = 1
	info.Paths[PathCode("turn-udp")] = 1
	got, err := AppendReplyVersion(nil, goldenPingID, info, PathsVersion)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the version 3 reply encodes as %x; the spec says %x", got, want)
	}
	id, dec, err := DecodeReply(want)
	if err != nil || id != goldenPingID || dec != info {
		t.Errorf("the spec's version 3 reply decodes as %#x, %+v, %v", id, dec, err)
	}
	if dec.Paths.Total() != int(dec.Players) || dec.Paths.String() != "1 punched, 1 turn-udp" {
		t.Errorf("the spec's paths %q count %d players of %d", dec.Paths, dec.Paths.Total(), dec.Players)
	}
}
