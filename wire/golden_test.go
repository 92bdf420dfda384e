package wire

import (
	"bytes"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// specPath is the protocol specification, which quotes every example
// frame below byte for byte.
const specPath = "../docs/protocol.md"

// readSpec returns the protocol specification's text.
func readSpec(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatalf("read the spec: %v", err)
	}
	return string(b)
}

// goldenPackets is one example of every packet, with the values the spec
// shows next to its bytes. They are fixed: the spec's hex is these
// packets encoded.
func goldenPackets() []Packet {
	token := bytes.Repeat([]byte{0xab}, TokenSize)
	return []Packet{
		&ClientProtocol{Protocol: ProtocolVersion},
		&ClientDefs{Databases: []DefSummary{{Type: "ThingDef", Count: 2, Hash: 0x9f3c27a1d4e0b658}}},
		&ClientUsername{Name: "ann", PasswordProof: bytes.Repeat([]byte{0x11}, 32), Token: token,
			Resume: []HeldBlob{{Index: 0, Hash: 0x0123456789abcdef}}},
		&ClientWorldReady{Tick: 600, WorldHash: 0xfedcba9876543210},
		&ClientCommand{MapID: 1, Kind: 3, Payload: []byte{0x01, 0x02}},
		&ClientClock{Nonce: 0x5eed1234, ClientTime: 1_790_000_000_123_456},
		&ClientAck{Received: 70000},
		&ClientTickAck{Tick: 605},
		&ClientKeepalive{Seq: 7, HostTime: 1_790_000_001_000_000},
		&ClientHashes{Tick: 660, World: 0x1111111111111111, Maps: []MapHash{{MapID: 1, Hash: 0x2222222222222222, Parts: []uint64{0x3333333333333333}}}},
		&ClientResynced{Tick: 720, World: 0x4444444444444444},
		&ClientLeave{Why: "bye"},
		&ClientChat{Text: "hi"},
		&ServerModList{GameVersion: "1.5", Mods: []string{"core"}, PasswordChallenge: bytes.Repeat([]byte{0x22}, 32),
			Databases: []DefSummary{{Type: "ThingDef", Count: 2, Hash: 0x9f3c27a1d4e0b658}}},
		&ServerDefsOK{GameName: "colony", PlayerID: 1},
		&ServerWorldData{Offset: 0, Total: 3, Data: []byte{0xaa, 0xbb, 0xcc}},
		&ServerPlayerList{Action: PlayerListFull, Players: []PlayerInfo{{ID: 1, Name: "ann", Faction: 1, Status: StatusJoining, LatencyMs: 12}}},
		&ServerDisconnect{Reason: ReasonDefs, Message: "defs differ", DefStatuses: []uint8{3}},
		&ServerNotice{Kind: NoticeJoined, Text: "ann joined."},
		&ServerTick{Tick: 601, Commands: []lockstep.Command{{Tick: 601, Seq: 0, MapID: 1, Kind: 3, Player: 1, Payload: []byte{0x01, 0x02}}}, Granted: 602, Speed: 1},
		&ServerClock{Nonce: 0x5eed1234, HostTime: 1_790_000_000_100_000, Delta: -2500, Attempt: 0},
		&ServerKeepalive{Seq: 7, HostTime: 1_790_000_001_000_000},
		&ServerSession{Token: token, GraceMs: 300000, PlayerID: 1, HashEvery: 60},
		&ServerResync{Tick: 700, Applied: 1, Maps: []int32{1}},
		&ServerDesync{State: DesyncDetected, PlayerID: 1, Name: "ann", Tick: 660, Maps: []int32{1}},
		&ServerChat{Name: "ann", PlayerID: 1, Text: "hi"},
		&ClientUpload{Request: 1, Offset: 0, Total: 3, Data: []byte{0xaa, 0xbb, 0xcc}},
		&ServerUploadRequest{Request: 1, Kind: UploadJoinPoint, Tick: 600, Limit: DefaultUploadLimit},
		&ServerUploadResult{Request: 1, Result: UploadAccepted},
		&ClientContentGet{Hash: contentHash(), Offset: 4},
		&ServerContent{Hash: contentHash(), Offset: 4, Total: 7, Length: 3, Data: []byte("fs/")},
		&ClientExplainReply{Request: 1, Offset: 0, Total: 3, Data: []byte{0xaa, 0xbb, 0xcc}},
		&ServerExplainRequest{Request: 1, From: 600, To: 602, Maps: []int32{1},
			Hashes: []uint64{0x11, 0x22, 0x33, 0x44}, Limit: 1 << 20},
	}
}

// contentHash is the SHA-256 of the 7 bytes "<Defs/>", the file of
// section 17.6's example manifest.
func contentHash() []byte {
	h, _ := hex.DecodeString("46398173c1e2cd29e590650800a103344fc9cd5b29ad0328112c6caedc0c9609")
	return h
}

// specExample matches an example in the spec: a line "Example <name>:"
// and the fenced hex block after it.
var specExample = regexp.MustCompile("(?m)^Example ([A-Za-z_]+):\\s*\\n+```hex\\n([0-9a-f \\n]+)```")

// specExamples returns the spec's example frames by packet name.
func specExamples(t *testing.T, spec string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, m := range specExample.FindAllStringSubmatch(spec, -1) {
		if _, dup := out[m[1]]; dup {
			t.Errorf("the spec has two examples of %s", m[1])
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(m[2]), ""))
		if err != nil {
			t.Fatalf("example %s: %v", m[1], err)
		}
		out[m[1]] = b
	}
	return out
}

// TestGoldenFrames holds every packet's encoding to the bytes the spec
// quotes, one subtest per packet: the example decodes to the packet's
// values and the packet encodes to the example.
func TestGoldenFrames(t *testing.T) {
	examples := specExamples(t, readSpec(t))
	seen := map[ID]bool{}
	for _, p := range goldenPackets() {
		seen[p.ID()] = true
		t.Run(p.ID().String(), func(t *testing.T) {
			want, ok := examples[p.ID().String()]
			if !ok {
				t.Fatalf("the spec has no example of %s", p.ID())
			}
			got := MustMarshal(p)
			if !bytes.Equal(got, want) {
				t.Errorf("%s encodes as\n%s\nthe spec says\n%s", p.ID(), hexLines(got), hexLines(want))
			}
			fr := NewFrameReader(bytes.NewReader(want), 0)
			id, body, err := fr.Next()
			if err != nil || id != p.ID() {
				t.Fatalf("the spec's example reads as %s, %v", id, err)
			}
			dec, err := Decode(id, body)
			if err != nil {
				t.Fatalf("the spec's example does not decode: %v", err)
			}
			if !bytes.Equal(MustMarshal(dec), got) {
				t.Errorf("the spec's example decodes to %+v, not %+v", dec, p)
			}
		})
	}
	for _, id := range IDs() {
		if !seen[id] {
			t.Errorf("%s has no golden example", id)
		}
	}
}

// hexLines formats b as the spec writes an example: 16 bytes a line,
// in pairs of hex digits separated by spaces.
func hexLines(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		row := b[i:min(i+16, len(b))]
		for j, c := range row {
			if j > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(hex.EncodeToString([]byte{c}))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
