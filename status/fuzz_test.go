package status

import (
	"bytes"
	"net/netip"
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
	reach := Reach{Mapping: MappingMapped, External: netip.MustParseAddrPort("198.51.100.1:30502")}
	b, err := AppendReplyVersion(nil, 9, Info{GameName: "Colony", Reach: reach}, ReachVersion)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	paths := Info{GameName: "Colony", Players: 3, Reach: reach, Paths: Paths{1: 1, 3: 2}}
	for _, info := range []Info{paths, {Paths: Paths{15: 0xffff}}, {}} {
		b, err := AppendReplyVersion(nil, 11, info, PathsVersion)
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
		b, err := AppendReplyVersion(nil, id, info, p[4])
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
	f.Add(AppendRequestVersion(nil, 7, ReachVersion), "Colony", "1.5", int32(3))
	f.Add(AppendRequestVersion(nil, 8, PathsVersion), "Colony", "1.5", int32(3))
	f.Fuzz(func(t *testing.T, p []byte, name, version string, players int32) {
		id, v, ok := ParseRequestVersion(p)
		if !ok {
			return
		}
		if len(p) != RequestSize || !bytes.Equal(AppendRequestVersion(nil, id, v), p) {
			t.Fatalf("accepted a non-canonical request %x", p)
		}
		if _, ok1 := ParseRequest(p); ok1 != (v == Version) {
			t.Fatalf("ParseRequest took a version %d request: %v", v, ok1)
		}
		// The largest reach: an IPv6 address; the largest paths: every
		// count, the players' number as it comes.
		reach := Reach{Mapping: MappingMapped, External: netip.MustParseAddrPort("[2001:db8::1]:30502")}
		var paths Paths
		for c := range paths {
			paths[c] = uint16(players) + uint16(c)
		}
		s := NewServer(nil, func() Info {
			return Info{GameName: name, GameVersion: version, Players: players, MaxPlayers: players, Databases: players, Reach: reach, Paths: paths}
		}, Options{Logger: testkit.Quiet()})
		reply, ok := s.reply(nil, id, v)
		if !ok {
			t.Fatal("no reply to a valid request")
		}
		if len(reply) > MaxPathsReplySize || len(reply) > MaxAmplification*len(p) {
			t.Fatalf("reply of %d bytes to a %d-byte request", len(reply), len(p))
		}
		got, info, err := DecodeReply(reply)
		if err != nil || got != id {
			t.Fatalf("reply does not decode: %v (id %d, want %d)", err, got, id)
		}
		if want := map[byte]Reach{Version: {}, ReachVersion: reach, PathsVersion: reach}[v]; info.Reach != want {
			t.Fatalf("version %d reply carries reach %+v, want %+v", v, info.Reach, want)
		}
		if want := map[byte]Paths{PathsVersion: paths}[v]; info.Paths != want {
			t.Fatalf("version %d reply carries paths %v, want %v", v, info.Paths, want)
		}
	})
}
