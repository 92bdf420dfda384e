package status

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net"
	"net/netip"
	"testing"
	"time"
)

// pathsOf counts the players of the paths named.
func pathsOf(names ...string) Paths {
	var p Paths
	for _, n := range names {
		p.Add(n)
	}
	return p
}

// TestPathsWords: the counts by path, as join ping prints them and as
// --json gives them.
func TestPathsWords(t *testing.T) {
	for _, c := range []struct {
		name  string
		paths Paths
		words string
		m     map[string]int
	}{
		{"nobody", Paths{}, "", map[string]int{}},
		{"one LAN", pathsOf("lan"), "1 lan", map[string]int{"lan": 1}},
		{"the most used first, ties in code order", pathsOf("turn-udp", "punched", "lan", "punched"),
			"2 punched, 1 lan, 1 turn-udp", map[string]int{"punched": 2, "lan": 1, "turn-udp": 1}},
		{"every path", pathsOf("lan", "direct", "punched", "turn-udp", "turn-tcp", "turn-tls", "turn", "carrier pigeon"),
			"1 other, 1 lan, 1 direct, 1 punched, 1 turn-udp, 1 turn-tcp, 1 turn-tls, 1 turn",
			map[string]int{"other": 1, "lan": 1, "direct": 1, "punched": 1, "turn-udp": 1, "turn-tcp": 1, "turn-tls": 1, "turn": 1}},
		{"a code this version does not know", Paths{9: 3, 2: 1}, "3 path 9, 1 direct", map[string]int{"path 9": 3, "direct": 1}},
	} {
		if got := c.paths.String(); got != c.words {
			t.Errorf("%s: %q, want %q", c.name, got, c.words)
		}
		if got := c.paths.Map(); !maps.Equal(got, c.m) {
			t.Errorf("%s: map %v, want %v", c.name, got, c.m)
		}
	}
	for code, name := range []string{"other", "lan", "direct", "punched", "turn-udp", "turn-tcp", "turn-tls", "turn"} {
		if PathName(code) != name || (code > 0 && PathCode(name) != code) {
			t.Errorf("code %d: named %q, %q is code %d", code, PathName(code), name, PathCode(name))
		}
	}
	if PathCode("") != 0 || PathCode("other") != 0 {
		t.Error("an unnamed path has a code of its own")
	}
	// A count stops at the largest a reply carries rather than wrapping.
	p := Paths{1: 0xffff}
	p.Add("lan")
	if p[1] != 0xffff {
		t.Errorf("count wrapped to %d", p[1])
	}
}

// TestPathsTrailer: a version 3 reply's bytes after the reach trailer,
// both ways, and what the decoder refuses.
func TestPathsTrailer(t *testing.T) {
	info := sampleInfo()
	for _, c := range []struct {
		name    string
		paths   Paths
		trailer []byte
	}{
		{"nobody", Paths{}, []byte{0}},
		{"one LAN", pathsOf("lan"), []byte{2, 0, 0, 0, 1}},
		{"2 punched, 1 turn-udp, 1 lan", pathsOf("punched", "punched", "turn-udp", "lan"),
			[]byte{5, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1}},
		{"an unknown code", Paths{15: 0x0102}, append(append([]byte{16}, make([]byte, 30)...), 1, 2)},
	} {
		info.Paths = c.paths
		v2, err := AppendReplyVersion(nil, 5, info, ReachVersion)
		if err != nil {
			t.Fatal(err)
		}
		v3, err := AppendReplyVersion(nil, 5, info, PathsVersion)
		if err != nil {
			t.Fatal(err)
		}
		if v3[4] != PathsVersion || !bytes.Equal(v3[5:len(v2)], v2[5:]) || !bytes.Equal(v3[len(v2):], c.trailer) {
			t.Errorf("%s: version 3 reply %x; want version 2's %x and then %x", c.name, v3, v2, c.trailer)
		}
		if _, got, err := DecodeReply(v3); err != nil || got != info {
			t.Errorf("%s: decodes as %+v, %v", c.name, got.Paths, err)
		}
		// Versions 1 and 2 leave the paths out.
		for _, v := range []byte{Version, ReachVersion} {
			b, _ := AppendReplyVersion(nil, 5, info, v)
			if _, got, err := DecodeReply(b); err != nil || got.Paths != (Paths{}) {
				t.Errorf("%s: a version %d reply carries paths %v (%v)", c.name, v, got.Paths, err)
			}
		}
	}

	info.Paths = pathsOf("punched", "lan")
	good, _ := AppendReplyVersion(nil, 5, info, PathsVersion)
	end := len(good)
	start := end - 9 // k = 4, four counts: 0 other, 1 lan, 0 direct, 1 punched
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for name, b := range map[string][]byte{
		"no trailer":            good[:start],
		"truncated":             good[:end-1],
		"trailing":              append(bytes.Clone(good), 0),
		"the last count 0":      append(mod(func(b []byte) []byte { b[start]++; return b }), 0, 0),
		"more than 16 counts":   append(mod(func(b []byte) []byte { b[start] = 17; return b }), make([]byte, 26)...),
		"k says fewer":          mod(func(b []byte) []byte { b[start]--; return b }),
		"a version 2 with them": mod(func(b []byte) []byte { b[4] = ReachVersion; return b }),
		"a version 4":           mod(func(b []byte) []byte { b[4] = 4; return b }),
		"too long":              append(bytes.Clone(good), make([]byte, MaxPathsReplySize)...),
	} {
		if _, _, err := DecodeReply(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", name, err)
		}
	}
}

// TestPingVersion2Host: a host that speaks versions 1 and 2 only drops
// Ping's version 3 request; Ping takes its version 2 reply, with the
// reach and no paths.
func TestPingVersion2Host(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	want := sampleInfo()
	want.Reach = Reach{Mapping: MappingMapped, External: netip.MustParseAddrPort("203.0.113.7:30502")}
	sent := want
	sent.Paths = pathsOf("lan") // what a version 3 reply would have carried
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			id, v, ok := ParseRequestVersion(buf[:n])
			if !ok || v == PathsVersion {
				continue
			}
			b, _ := AppendReplyVersion(nil, id, sent, v)
			_, _ = pc.WriteTo(b, from)
		}
	}()
	got, _, err := Ping(context.Background(), pc.LocalAddr().String(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}
