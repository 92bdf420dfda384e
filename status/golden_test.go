package status

import (
	"bytes"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

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
