package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/testing/testkit"
)

// samplePackets returns one fully populated packet of every type, with
// every field set to a non-zero value so a dropped field shows.
func samplePackets() []Packet {
	return []Packet{
		&ClientProtocol{Protocol: ProtocolVersion},
		&ClientDefs{Databases: []DefSummary{
			{Type: "ThingDef", Count: 120, Hash: 0xdeadbeefcafef00d},
			{Type: "TerrainDef", Count: 7, Hash: 1},
		}},
		&ClientUsername{Name: "Alice_01", PasswordProof: []byte{1, 2, 3, 4, 5}, Spectate: true, Token: bytes.Repeat([]byte{3}, TokenSize)},
		&ClientUsername{Name: "Alice_01", Token: bytes.Repeat([]byte{4}, TokenSize),
			Resume: []HeldBlob{{Index: 0, Hash: 0x1234}, {Index: 7, Hash: 1<<64 - 1}}},
		&ClientClock{Nonce: 0xfeedface, ClientTime: 1_790_000_000_000_000},
		&ClientAck{Received: 1 << 40},
		&ClientTickAck{Tick: 987654321},
		&ClientKeepalive{Seq: 9, HostTime: 123},
		&ServerKeepalive{Seq: 10, HostTime: -4},
		&ServerSession{Token: bytes.Repeat([]byte{7}, TokenSize), GraceMs: 300000, PlayerID: 4, HashEvery: 60},
		&ClientHashes{Tick: 600, World: 0x1234567890abcdef, Maps: []MapHash{
			{MapID: 0, Hash: 1, Parts: []uint64{2, 3, 1 << 63}},
			{MapID: 7, Hash: 0xffffffffffffffff},
		}},
		&ServerResync{Tick: 1200, Applied: 3, Maps: []int32{2, 5}},
		&ClientResynced{Tick: 1200, World: 0xfedcba9876543210},
		&ClientLeave{Why: "interrupted"},
		&ClientChat{Text: "hello, colony"},
		&ServerChat{Name: "Alice", PlayerID: 2, Text: "hello, colony"},
		&ServerChat{Text: "the host speaks"},
		&ServerResync{Tick: 1260, Full: true},
		&ServerDesync{State: DesyncRepaired, PlayerID: 3, Name: "Bob", Tick: 600, Maps: []int32{2}, World: true, RepairMs: 850},
		&ClientWorldReady{Tick: 123456789, WorldHash: 0xffffffffffffffff},
		&ServerExplainRequest{Request: 2, From: 540, To: 600, Maps: []int32{0, 2}, Hashes: make([]uint64, 60*3), Limit: MaxExplainReply},
		&ClientExplainReply{Request: 2, Offset: 4096, Total: 9000, Data: bytes.Repeat([]byte{0xcd}, 300)},
		&ClientExplainReply{Request: 3, Error: "no copy of the state at tick 540"},
		&ClientCommand{MapID: -1, Kind: 0xff00, Payload: []byte{9, 8, 7}},
		&ServerModList{GameVersion: "1.5.4104", Mods: []string{"ludeon.rimworld", "some.mod"}, PasswordChallenge: []byte("nonce-123")},
		&ServerDefsOK{GameName: "Colony", PlayerID: 42},
		&ServerWorldData{Offset: 512, Total: 4096, Data: bytes.Repeat([]byte{0xab}, 300)},
		&ServerPlayerList{Action: PlayerListFull, Players: []PlayerInfo{
			{ID: 1, Name: "Alice", Faction: 1, Status: StatusPlaying},
			{ID: 2, Name: "Bob", Faction: 1, Status: StatusDownloading, LatencyMs: 12},
			{ID: 3, Name: "Eve", Status: StatusSpectating, Spectator: true},
		}},
		&ServerPlayerList{Action: PlayerListRemove, Players: []PlayerInfo{{ID: 2}}},
		&ServerClock{Nonce: 7, HostTime: -5, Delta: 1234, Attempt: 31},
		&ServerDisconnect{Reason: ReasonDefs, Message: "defs differ", DefStatuses: []uint8{0, 1, 2, 3}, Detail: []byte("detail")},
		&ServerNotice{Kind: NoticeJoined, Text: "Alice joined the session."},
		&ClientUsername{Name: "Arbiter", ArbiterProof: bytes.Repeat([]byte{5}, 32)},
		&ServerModList{GameVersion: "1.5", ArbiterChallenge: bytes.Repeat([]byte{6}, 32)},
		&ClientUpload{Request: 3, Offset: 262144, Total: 300000, Data: bytes.Repeat([]byte{0xcd}, 100)},
		&ServerUploadRequest{Request: 3, Kind: UploadJoinPoint, Tick: 6000, Applied: 2, Limit: 1 << 30},
		&ServerUploadRequest{Request: 4, Kind: UploadMaps, Tick: 6060, Maps: []int32{0, 7}, Limit: 1 << 30},
		&ServerUploadResult{Request: 3, Result: UploadRefused, Message: "blob 2's hash differs"},
		&ServerModList{GameVersion: "1.6", ContentHash: bytes.Repeat([]byte{7}, ContentHashSize), ContentSize: 4096},
		&ClientContentGet{},
		&ClientContentGet{Hash: bytes.Repeat([]byte{8}, ContentHashSize), Offset: 1 << 20},
		&ServerContent{Hash: bytes.Repeat([]byte{8}, ContentHashSize), Offset: 100, Total: 300, Length: 3, Data: []byte{1, 2, 3}},
		&ServerContent{Offset: 0, Total: 5000, Length: 5000, Coding: ContentZstd, Data: []byte{9, 9}},
		&ServerTick{Tick: 77, Granted: 78, Speed: 2, Commands: []lockstep.Command{
			{Tick: 77, Seq: 0, MapID: 0, Kind: 1, Player: 3, Payload: []byte{1}},
			{Tick: 77, Seq: 1, MapID: -1, Kind: lockstep.KindSetSpeed, Player: 4, Payload: []byte{2}},
		}},
	}
}

func TestSamplesCoverEveryPacketID(t *testing.T) {
	seen := map[ID]bool{}
	for _, p := range samplePackets() {
		seen[p.ID()] = true
	}
	for _, id := range IDs() {
		if !seen[id] {
			t.Errorf("no sample for %s", id)
		}
	}
}

func TestRoundTripThroughFrames(t *testing.T) {
	for _, want := range samplePackets() {
		t.Run(want.ID().String(), func(t *testing.T) {
			frame, err := Marshal(nil, want)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			fr := NewFrameReader(bytes.NewReader(frame), 0)
			id, body, err := fr.Next()
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if id != want.ID() {
				t.Fatalf("id %s, want %s", id, want.ID())
			}
			got, err := Decode(id, body)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip:\n got %#v\nwant %#v", got, want)
			}
			if _, _, err := fr.Next(); err != io.EOF {
				t.Fatalf("after the only frame: %v, want io.EOF", err)
			}
		})
	}
}

func TestMarshalAppends(t *testing.T) {
	prefix := []byte("xyz")
	p := &ServerDefsOK{GameName: "g", PlayerID: 3}
	out, err := Marshal(prefix, p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte("xyz")) {
		t.Fatalf("prefix lost: %q", out[:3])
	}
	frame := out[3:]
	if n := binary.BigEndian.Uint32(frame); int(n) != len(frame)-4 {
		t.Fatalf("length field %d, frame holds %d bytes after it", n, len(frame)-4)
	}
	if ID(frame[4]) != IDServerDefsOK {
		t.Fatalf("id byte %d", frame[4])
	}
}

// stream concatenates frames of every sample and returns the offsets at
// which frames end.
func sampleStream(t testing.TB) (stream []byte, ends []int) {
	for _, p := range samplePackets() {
		var err error
		stream, err = Marshal(stream, p)
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, len(stream))
	}
	return stream, ends
}

func TestTruncatedStream(t *testing.T) {
	stream, ends := sampleStream(t)
	samples := samplePackets()
	boundary := map[int]int{0: 0} // prefix length -> complete frames
	for i, e := range ends {
		boundary[e] = i + 1
	}
	for n := 0; n <= len(stream); n++ {
		fr := NewFrameReader(bytes.NewReader(stream[:n]), 0)
		frames := 0
		var err error
		for {
			var id ID
			var body []byte
			id, body, err = fr.Next()
			if err != nil {
				break
			}
			p, derr := Decode(id, body)
			if derr != nil {
				t.Fatalf("prefix %d: frame %d: %v", n, frames, derr)
			}
			if !reflect.DeepEqual(p, samples[frames]) {
				t.Fatalf("prefix %d: frame %d differs", n, frames)
			}
			frames++
		}
		want, atBoundary := boundary[n]
		if atBoundary {
			if err != io.EOF {
				t.Fatalf("prefix %d (frame boundary): %v, want io.EOF", n, err)
			}
			if frames != want {
				t.Fatalf("prefix %d: %d frames, want %d", n, frames, want)
			}
		} else {
			if err != io.ErrUnexpectedEOF {
				t.Fatalf("prefix %d (mid-frame): %v, want io.ErrUnexpectedEOF", n, err)
			}
			// Every frame that ends inside the prefix was returned.
			complete := 0
			for _, e := range ends {
				if e <= n {
					complete++
				}
			}
			if frames != complete {
				t.Fatalf("prefix %d: %d frames, want %d", n, frames, complete)
			}
		}
	}
}

func TestFrameTooLarge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		length uint32
	}{
		{"one over", 1000, 1001},
		{"huge", 1000, 0xffffffff},
		{"default limit", 0, DefaultMaxFrame + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The claimed body follows, so a reader that went on reading
			// would find bytes.
			in := binary.BigEndian.AppendUint32(nil, tc.length)
			in = append(in, make([]byte, 4096)...)
			cr := &testkit.CountingReader{R: bytes.NewReader(in)}
			fr := NewFrameReader(cr, tc.max)
			_, _, err := fr.Next()
			if !errors.Is(err, ErrFrameTooLarge) {
				t.Fatalf("Next: %v, want ErrFrameTooLarge", err)
			}
			if cr.N != frameHeader {
				t.Fatalf("read %d bytes, want only the %d header bytes", cr.N, frameHeader)
			}
			if cap(fr.buf) != 0 {
				t.Fatalf("allocated a %d-byte body buffer for a refused frame", cap(fr.buf))
			}
		})
	}
}

func TestFrameAtLimitAccepted(t *testing.T) {
	const max = 64
	body := bytes.Repeat([]byte{0x7f}, max-1)
	in := AppendFrame(nil, IDClientProtocol, body)
	fr := NewFrameReader(bytes.NewReader(in), max)
	id, got, err := fr.Next()
	if err != nil {
		t.Fatalf("frame of exactly the limit: %v", err)
	}
	if id != IDClientProtocol || !bytes.Equal(got, body) {
		t.Fatalf("got id %d body %x", id, got)
	}
}

func TestEmptyFrame(t *testing.T) {
	in := []byte{0, 0, 0, 0, 1, 2, 3}
	cr := &testkit.CountingReader{R: bytes.NewReader(in)}
	_, _, err := NewFrameReader(cr, 0).Next()
	if !errors.Is(err, ErrEmptyFrame) {
		t.Fatalf("Next: %v, want ErrEmptyFrame", err)
	}
	if cr.N != frameHeader {
		t.Fatalf("read %d bytes past an empty frame header", cr.N-frameHeader)
	}
}

func TestFrameWithOnlyID(t *testing.T) {
	// Length 1: an ID and an empty body. The frame is fine; the body is not
	// valid msgpack for any packet.
	in := []byte{0, 0, 0, 1, byte(IDClientProtocol)}
	id, body, err := NewFrameReader(bytes.NewReader(in), 0).Next()
	if err != nil || id != IDClientProtocol || len(body) != 0 {
		t.Fatalf("Next: %d %x %v", id, body, err)
	}
	if _, err := Decode(id, body); err == nil {
		t.Fatal("empty body decoded without error")
	}
}

func TestTrailingBytesRejected(t *testing.T) {
	for _, p := range samplePackets() {
		frame := MustMarshal(p)
		body := append(append([]byte(nil), frame[5:]...), 0xc0) // msgpack nil
		if _, err := Decode(p.ID(), body); err == nil || !strings.Contains(err.Error(), "trailing") {
			t.Errorf("%s with a trailing byte: %v, want a trailing-bytes error", p.ID(), err)
		}
	}
}

func TestUnknownPacket(t *testing.T) {
	body := MustMarshal(&ClientProtocol{Protocol: 1})[5:]
	for _, id := range []ID{33, 255} {
		if _, err := Decode(id, body); !errors.Is(err, ErrUnknownPacket) {
			t.Errorf("Decode(%d): %v, want ErrUnknownPacket", id, err)
		}
	}
}

func TestValidateLimits(t *testing.T) {
	dbs := func(n int) []DefSummary {
		out := make([]DefSummary, n)
		for i := range out {
			out[i] = DefSummary{Type: "Def", Count: 1, Hash: uint64(i)}
		}
		return out
	}
	cmdsAt := func(tick uint64, ticks ...uint64) []lockstep.Command {
		var out []lockstep.Command
		for i, ct := range ticks {
			out = append(out, lockstep.Command{Tick: ct, Seq: uint32(i), Kind: 1, Payload: []byte{1}})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		p    Packet
		ok   bool
		is   error // when not ok and non-nil: errors.Is target
	}{
		{"512 databases", &ClientDefs{Databases: dbs(MaxDatabases)}, true, nil},
		{"513 databases", &ClientDefs{Databases: dbs(MaxDatabases + 1)}, false, ErrTooManyDatabases},
		{"empty type name", &ClientDefs{Databases: []DefSummary{{Type: "", Count: 1}}}, false, nil},
		{"long type name", &ClientDefs{Databases: []DefSummary{{Type: strings.Repeat("x", MaxTypeNameBytes+1)}}}, false, nil},
		{"negative count", &ClientDefs{Databases: []DefSummary{{Type: "T", Count: -1}}}, false, nil},
		{"payload at limit", &ClientCommand{Payload: make([]byte, MaxClientCommandPayload)}, true, nil},
		{"payload over limit", &ClientCommand{Payload: make([]byte, MaxClientCommandPayload+1)}, false, nil},
		{"name over limit", &ClientUsername{Name: strings.Repeat("a", MaxNameBytes+1)}, false, nil},
		{"proof over limit", &ClientUsername{Name: "abc", PasswordProof: make([]byte, MaxProofBytes+1)}, false, nil},
		{"arbiter proof over limit", &ClientUsername{Name: "abc", ArbiterProof: make([]byte, MaxProofBytes+1)}, false, nil},
		{"arbiter spectating", &ClientUsername{Name: "abc", ArbiterProof: make([]byte, 32), Spectate: true}, false, nil},
		{"arbiter challenge over limit", &ServerModList{ArbiterChallenge: make([]byte, MaxProofBytes+1)}, false, nil},
		{"upload chunk at limit", &ClientUpload{Request: 1, Total: MaxChunkData, Data: make([]byte, MaxChunkData)}, true, nil},
		{"upload chunk over limit", &ClientUpload{Request: 1, Total: MaxChunkData + 1, Data: make([]byte, MaxChunkData+1)}, false, nil},
		{"upload chunk past total", &ClientUpload{Request: 1, Offset: 10, Total: 12, Data: make([]byte, 3)}, false, nil},
		{"content get of a short hash", &ClientContentGet{Hash: make([]byte, 31)}, false, nil},
		{"content chunk past total", &ServerContent{Offset: 10, Total: 12, Length: 3, Data: make([]byte, 3)}, false, nil},
		{"content chunk over limit", &ServerContent{Total: MaxChunkData + 1, Length: MaxChunkData + 1, Data: make([]byte, MaxChunkData+1)}, false, nil},
		{"stored content chunk of another length", &ServerContent{Total: 12, Length: 4, Data: make([]byte, 3)}, false, nil},
		{"compressed content chunk with no data", &ServerContent{Total: 12, Length: 4, Coding: ContentGzip}, false, nil},
		{"content chunk of an unknown coding", &ServerContent{Total: 12, Length: 1, Coding: 3, Data: []byte{1}}, false, nil},
		{"content offer without a size", &ServerModList{ContentHash: make([]byte, 32)}, false, nil},
		{"content offer over the limit", &ServerModList{ContentHash: make([]byte, 32), ContentSize: MaxContentManifest + 1}, false, nil},
		{"content offer at the limit", &ServerModList{ContentHash: make([]byte, 32), ContentSize: MaxContentManifest}, true, nil},
		{"upload offset past total", &ClientUpload{Request: 1, Offset: 13, Total: 12}, false, nil},
		{"upload for request 0", &ClientUpload{Total: 1, Data: []byte{1}}, false, nil},
		{"request 0", &ServerUploadRequest{Kind: UploadJoinPoint}, false, nil},
		{"join point request naming maps", &ServerUploadRequest{Request: 1, Kind: UploadJoinPoint, Maps: []int32{1}}, false, nil},
		{"maps request naming none", &ServerUploadRequest{Request: 1, Kind: UploadMaps}, false, nil},
		{"maps request over limit", &ServerUploadRequest{Request: 1, Kind: UploadMaps, Maps: make([]int32, MaxHashMaps+1)}, false, nil},
		{"unknown upload kind", &ServerUploadRequest{Request: 1, Kind: 3}, false, nil},
		{"unknown upload result", &ServerUploadResult{Request: 1, Result: 3}, false, nil},
		{"upload result text over limit", &ServerUploadResult{Request: 1, Message: strings.Repeat("x", MaxTextBytes+1)}, false, nil},
		{"resume at limit", &ClientUsername{Name: "abc", Token: make([]byte, TokenSize), Resume: make([]HeldBlob, MaxResumeBlobs)}, true, nil},
		{"resume over limit", &ClientUsername{Name: "abc", Token: make([]byte, TokenSize), Resume: make([]HeldBlob, MaxResumeBlobs+1)}, false, nil},
		{"resume without token", &ClientUsername{Name: "abc", Resume: []HeldBlob{{Index: 1}}}, false, nil},
		{"resume index past maps", &ClientUsername{Name: "abc", Token: make([]byte, TokenSize), Resume: []HeldBlob{{Index: MaxResumeBlobs}}}, false, nil},
		{"chunk fills total", &ServerWorldData{Offset: 10, Total: 20, Data: make([]byte, 10)}, true, nil},
		{"chunk past total", &ServerWorldData{Offset: 10, Total: 20, Data: make([]byte, 11)}, false, nil},
		{"offset past total", &ServerWorldData{Offset: 21, Total: 20}, false, nil},
		{"offset near max uint64", &ServerWorldData{Offset: 1<<64 - 2, Total: 1<<64 - 1, Data: make([]byte, 2)}, false, nil},
		{"chunk over MaxChunkData", &ServerWorldData{Total: 1 << 30, Data: make([]byte, MaxChunkData+1)}, false, nil},
		{"tick commands same tick", &ServerTick{Tick: 5, Granted: 6, Commands: cmdsAt(5, 5, 5)}, true, nil},
		{"tick command of another tick", &ServerTick{Tick: 5, Granted: 6, Commands: cmdsAt(5, 5, 4)}, false, nil},
		{"tick command of a later tick", &ServerTick{Tick: 5, Granted: 6, Commands: cmdsAt(5, 6)}, false, nil},
		{"grant before tick", &ServerTick{Tick: 5, Granted: 4}, false, nil},
		{"too many tick commands", &ServerTick{Tick: 0, Commands: make([]lockstep.Command, MaxTickCommands+1)}, false, nil},
		{"too many mods", &ServerModList{Mods: make([]string, MaxMods+1)}, false, nil},
		{"too many players", &ServerPlayerList{Players: make([]PlayerInfo, MaxPlayers+1)}, false, nil},
		{"too many def statuses", &ServerDisconnect{DefStatuses: make([]uint8, MaxDatabases+1)}, false, ErrTooManyDatabases},
		{"long notice", &ServerNotice{Text: strings.Repeat("n", MaxTextBytes+1)}, false, nil},
		{"hashes at map limit", &ClientHashes{Maps: make([]MapHash, MaxHashMaps)}, true, nil},
		{"hashes over map limit", &ClientHashes{Maps: make([]MapHash, MaxHashMaps+1)}, false, nil},
		{"parts at limit", &ClientHashes{Maps: []MapHash{{Parts: make([]uint64, lockstep.MaxMapParts)}}}, true, nil},
		{"parts over limit", &ClientHashes{Maps: []MapHash{{Parts: make([]uint64, lockstep.MaxMapParts+1)}}}, false, nil},
		{"resync of nothing", &ServerResync{Tick: 5}, false, nil},
		{"full resync", &ServerResync{Tick: 5, Full: true}, true, nil},
		{"resync over map limit", &ServerResync{Maps: make([]int32, MaxHashMaps+1)}, false, nil},
		{"desync over map limit", &ServerDesync{Maps: make([]int32, MaxHashMaps+1)}, false, nil},
		{"desync long name", &ServerDesync{Name: strings.Repeat("a", MaxNameBytes+1)}, false, nil},
		{"chat at limit", &ClientChat{Text: strings.Repeat("c", MaxChatBytes)}, true, nil},
		{"chat over limit", &ClientChat{Text: strings.Repeat("c", MaxChatBytes+1)}, false, nil},
		{"relayed chat at limit", &ServerChat{Name: "Alice", Text: strings.Repeat("c", MaxChatBytes)}, true, nil},
		{"relayed chat over limit", &ServerChat{Name: "Alice", Text: strings.Repeat("c", MaxChatBytes+1)}, false, nil},
		{"relayed chat long name", &ServerChat{Name: strings.Repeat("a", MaxNameBytes+1)}, false, nil},
		{"leave reason at limit", &ClientLeave{Why: strings.Repeat("w", MaxLeaveWhyBytes)}, true, nil},
		{"leave reason over limit", &ClientLeave{Why: strings.Repeat("w", MaxLeaveWhyBytes+1)}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			if tc.ok != (err == nil) {
				t.Fatalf("Validate: %v, want ok=%v", err, tc.ok)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("Validate: %v, want %v", err, tc.is)
			}
			// Decode applies the same check to what arrives on the wire.
			frame, merr := Marshal(nil, tc.p)
			if merr != nil {
				t.Fatalf("Marshal: %v", merr)
			}
			_, derr := Decode(tc.p.ID(), frame[5:])
			if tc.ok != (derr == nil) {
				t.Fatalf("Decode: %v, want ok=%v", derr, tc.ok)
			}
			if tc.is != nil && !errors.Is(derr, tc.is) {
				t.Fatalf("Decode: %v, want %v", derr, tc.is)
			}
		})
	}
}

// mutate overwrites every byte of b.
func mutate(b []byte) {
	for i := range b {
		b[i] ^= 0xff
	}
}

func TestDecodedValuesDoNotAliasInput(t *testing.T) {
	for _, want := range samplePackets() {
		frame := MustMarshal(want)
		body := frame[5:]
		got, err := Decode(want.ID(), body)
		if err != nil {
			t.Fatalf("%s: %v", want.ID(), err)
		}
		mutate(body)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s changed when its input was overwritten:\n got %#v\nwant %#v", want.ID(), got, want)
		}
	}
}

func TestFrameReaderReuseDoesNotCorruptDecoded(t *testing.T) {
	first := &ClientUsername{Name: "first_name", PasswordProof: bytes.Repeat([]byte{1}, 40)}
	second := &ClientUsername{Name: "secnd_name", PasswordProof: bytes.Repeat([]byte{2}, 40)}
	stream := MustMarshal(first)
	stream = append(stream, MustMarshal(second)...)
	fr := NewFrameReader(bytes.NewReader(stream), 0)
	id, body, err := fr.Next()
	if err != nil {
		t.Fatal(err)
	}
	p1, err := Decode(id, body)
	if err != nil {
		t.Fatal(err)
	}
	id, body2, err := fr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if &body[0] != &body2[0] {
		t.Log("frame reader did not reuse its buffer; the check below is weaker")
	}
	p2, err := Decode(id, body2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p1, first) || !reflect.DeepEqual(p2, second) {
		t.Fatalf("decoded packets changed when the reader reused its buffer: %#v %#v", p1, p2)
	}
}

func TestDecoderRecoversAfterError(t *testing.T) {
	valid := &ClientDefs{Databases: []DefSummary{{Type: "ThingDef", Count: 3, Hash: 9}}}
	body := MustMarshal(valid)[5:]
	garbage := [][]byte{
		{0xc1},                   // never-used msgpack descriptor
		{0x81, 0xa1, 'd'},        // map cut short
		{0xdf, 0xff, 0xff, 0xff}, // map32 with a huge count
		{0x92, 0x01},             // array where a struct is expected, cut short
		body[:len(body)-1],       // valid body cut short
	}
	// Several rounds so the same pooled decoder is met after an error.
	for round := 0; round < 3; round++ {
		for _, g := range garbage {
			if _, err := Decode(IDClientDefs, g); err == nil {
				t.Fatalf("garbage %x decoded", g)
			}
			got, err := Decode(IDClientDefs, body)
			if err != nil {
				t.Fatalf("valid body after garbage %x: %v", g, err)
			}
			if !reflect.DeepEqual(got, valid) {
				t.Fatalf("valid body after garbage %x: %#v", g, got)
			}
		}
	}
}

func TestEmptyBodyNeverReadsStaleInput(t *testing.T) {
	one := MustMarshal(&ClientProtocol{Protocol: 7})[5:]
	// A body followed by a second complete value: the decoder stops after
	// the first, leaving the second unread.
	twice := append(append([]byte(nil), one...), one...)
	for round := 0; round < 3; round++ {
		var p ClientProtocol
		if err := Unmarshal(twice, &p); err == nil {
			t.Fatal("body with a trailing value decoded")
		}
		for _, empty := range [][]byte{nil, {}} {
			var q ClientProtocol
			if err := Unmarshal(empty, &q); err == nil {
				t.Fatalf("empty body %#v decoded", empty)
			}
			if q.Protocol != 0 {
				t.Fatalf("empty body %#v decoded stale input: %+v", empty, q)
			}
		}
	}
}

func TestReasons(t *testing.T) {
	// The seed protocol's numbers.
	for r, want := range map[Reason]uint8{
		ReasonGeneric: 0, ReasonProtocol: 1, ReasonDefs: 2,
		ReasonUsernameLength: 3, ReasonUsernameChars: 4, ReasonUsernameAlreadyOnline: 5,
	} {
		if uint8(r) != want {
			t.Errorf("%s = %d, want %d", r, uint8(r), want)
		}
	}
	if len(reasonNames) != len(reasonSentences) {
		t.Fatalf("%d reason names, %d sentences", len(reasonNames), len(reasonSentences))
	}
	names := map[string]Reason{}
	sentences := map[string]Reason{}
	for i := range reasonNames {
		r := Reason(i)
		name, sentence := r.String(), r.Sentence()
		if name == "" || strings.HasPrefix(name, "Reason(") {
			t.Errorf("reason %d has no name", i)
		}
		if sentence == "" || !strings.HasSuffix(sentence, ".") || strings.Contains(sentence, "reason ") {
			t.Errorf("reason %s has no proper sentence: %q", name, sentence)
		}
		if o, dup := names[name]; dup {
			t.Errorf("reasons %d and %d share the name %q", o, i, name)
		}
		if o, dup := sentences[sentence]; dup {
			t.Errorf("reasons %d and %d share the sentence %q", o, i, sentence)
		}
		names[name], sentences[sentence] = r, r
	}
	if got := ReasonKicked.String(); got != "Kicked" {
		t.Errorf("ReasonKicked.String() = %q", got)
	}
	unknown := Reason(len(reasonNames))
	if got, want := unknown.String(), fmt.Sprintf("Reason(%d)", len(reasonNames)); got != want {
		t.Errorf("unknown reason String() = %q", got)
	}
	if got := unknown.Sentence(); got == "" {
		t.Error("unknown reason has no sentence")
	} else if r, known := sentences[got]; known {
		t.Errorf("unknown reason reads as reason %s: %q", r, got)
	}
}

func TestRegistry(t *testing.T) {
	seen := map[string]ID{}
	ids := IDs()
	if len(ids) == 0 {
		t.Fatal("no packets registered")
	}
	for i, id := range ids {
		if i > 0 && ids[i-1] >= id {
			t.Errorf("registry out of order: %s before %s", ids[i-1], id)
		}
		s := id.String()
		if strings.HasPrefix(s, "packet(") {
			t.Errorf("%d has no name", id)
		}
		if o, dup := seen[s]; dup {
			t.Errorf("%d and %d share the name %q", o, id, s)
		}
		seen[s] = id
		dir, ok := id.Direction()
		if !ok {
			t.Errorf("%s: no direction", s)
		}
		wantDir, prefix := HostToClient, "Server_"
		if id.FromClient() {
			wantDir, prefix = ClientToHost, "Client_"
		}
		if dir != wantDir || !strings.HasPrefix(s, prefix) {
			t.Errorf("%s: direction %s, FromClient %v", s, dir, id.FromClient())
		}
		q, err := New(id)
		if err != nil || q.ID() != id {
			t.Errorf("New(%s) = %v, %v", s, q, err)
		}
		// Each call gives a fresh body.
		if r, _ := New(id); r == q {
			t.Errorf("New(%s) returned the same packet twice", s)
		}
	}
	for _, id := range []ID{33, 99, 255} {
		if got := id.String(); got != fmt.Sprintf("packet(%d)", id) {
			t.Errorf("ID(%d).String() = %q", id, got)
		}
		if _, ok := id.Direction(); ok {
			t.Errorf("ID(%d) has a direction", id)
		}
	}
}

func TestWorldDataHeaderDecodesLikeMarshal(t *testing.T) {
	for _, tc := range []struct {
		off, total uint64
		n          int
	}{{0, 0, 0}, {0, 10, 10}, {1 << 40, 1<<40 + 300, 300}, {5, MaxChunkData + 5, MaxChunkData}} {
		data := bytes.Repeat([]byte{0x5a}, tc.n)
		frame := append(AppendWorldDataHeader(nil, tc.off, tc.total, len(data)), data...)
		fr := NewFrameReader(bytes.NewReader(frame), 0)
		id, body, err := fr.Next()
		if err != nil || id != IDServerWorldData {
			t.Fatalf("%+v: frame %v %v", tc, id, err)
		}
		p, err := Decode(id, body)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		want := &ServerWorldData{Offset: tc.off, Total: tc.total, Data: data}
		if got := p.(*ServerWorldData); got.Offset != want.Offset || got.Total != want.Total || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("decoded %+v, want %+v", got, want)
		}
	}
}

// genericBody decodes a msgpack body into a key -> value map, numbers as
// uint64, so two encodings of one packet compare by content whatever
// widths they chose.
func genericBody(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := codec.Decode(body, &m); err != nil {
		t.Fatalf("generic decode: %v", err)
	}
	for k, v := range m {
		switch n := v.(type) {
		case int64:
			m[k] = uint64(n)
		case uint64, []byte:
		default:
			t.Fatalf("key %q: unexpected %T", k, v)
		}
	}
	return m
}

func TestWorldDataHeaderMatchesLibraryEncoding(t *testing.T) {
	// The hand-written header must carry exactly the keys and values the
	// codec library writes for the same packet; only integer and length
	// widths may differ.
	keys := map[string]bool{}
	rt := reflect.TypeOf(ServerWorldData{})
	for i := range rt.NumField() {
		keys[rt.Field(i).Tag.Get("codec")] = true
	}
	for _, tc := range []struct {
		off, total uint64
		n          int
	}{
		{0, 0, 0}, {0, 1, 1}, {127, 300, 100}, {1 << 40, 1<<40 + 300, 300},
		{1<<64 - 1 - MaxChunkData, 1<<64 - 1, MaxChunkData},
	} {
		data := bytes.Repeat([]byte{0xa5}, tc.n)
		hand := append(AppendWorldDataHeader(nil, tc.off, tc.total, len(data)), data...)
		lib := MustMarshal(&ServerWorldData{Offset: tc.off, Total: tc.total, Data: data})
		if binary.BigEndian.Uint32(hand) != uint32(len(hand)-frameHeader) {
			t.Fatalf("%+v: length field %d for %d bytes", tc, binary.BigEndian.Uint32(hand), len(hand)-frameHeader)
		}
		if hand[frameHeader] != lib[frameHeader] {
			t.Fatalf("%+v: id byte %d, library %d", tc, hand[frameHeader], lib[frameHeader])
		}
		h, l := genericBody(t, hand[frameHeader+1:]), genericBody(t, lib[frameHeader+1:])
		if !reflect.DeepEqual(h, l) {
			t.Fatalf("%+v: hand-written body %v, library's %v", tc, h, l)
		}
		if len(h) != len(keys) {
			t.Fatalf("%+v: %d keys, the struct has %d", tc, len(h), len(keys))
		}
		for k := range h {
			if !keys[k] {
				t.Fatalf("%+v: key %q is no codec tag of ServerWorldData", tc, k)
			}
		}
	}
}
