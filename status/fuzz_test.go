package status

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/testing/testkit"
)

func FuzzDecodeReply(f *testing.F) {
	for _, info := range []Info{{}, sampleInfo(), {GameName: strings.Repeat("n", MaxString), GameVersion: "é"}} {
		b, err := AppendReply(nil, 0xfeedface, info)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("LHPR"))
	f.Add(AppendRequest(nil, 1))
	f.Fuzz(func(t *testing.T, p []byte) {
		id, info, err := DecodeReply(p)
		if err != nil {
			return
		}
		// Whatever decodes is valid and encodes back to the same bytes.
		if err := info.Validate(); err != nil {
			t.Fatalf("decoded an invalid Info: %v", err)
		}
		b, err := AppendReply(nil, id, info)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, p) {
			t.Fatalf("re-encoded\n%x\nwant\n%x", b, p)
		}
	})
}

// FuzzRequest fuzzes the server's side: parsing a datagram and, if it is a
// request, building the reply with whatever Info the game reports.
func FuzzRequest(f *testing.F) {
	f.Add(AppendRequest(nil, 0), "Colony", "1.5", int32(3))
	f.Add(AppendRequest(nil, 0xffffffff), strings.Repeat("é", 40), "\xff\xfe", int32(-1))
	f.Add([]byte("LHPQ\x01"), "", "", int32(0))
	f.Fuzz(func(t *testing.T, p []byte, name, version string, players int32) {
		id, ok := ParseRequest(p)
		if !ok {
			return
		}
		if len(p) != RequestSize || !bytes.Equal(AppendRequest(nil, id), p) {
			t.Fatalf("accepted a non-canonical request %x", p)
		}
		s := NewServer(nil, func() Info {
			return Info{GameName: name, GameVersion: version, Players: players, MaxPlayers: players, Databases: players}
		}, Options{Logger: testkit.Quiet()})
		reply, ok := s.reply(nil, id)
		if !ok {
			t.Fatal("no reply to a valid request")
		}
		if len(reply) > MaxReplySize || len(reply) > MaxAmplification*len(p) {
			t.Fatalf("reply of %d bytes to a %d-byte request", len(reply), len(p))
		}
		got, _, err := DecodeReply(reply)
		if err != nil || got != id {
			t.Fatalf("reply does not decode: %v (id %d, want %d)", err, got, id)
		}
	})
}
