package snapshot

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// TestThinPayloadSplicesBack: a payload for a joiner that makes two of
// three maps' sections (and offers a wrong hash for the third) sends
// those two thin, the third whole, and the maps rebuilt by splicing the
// made sections back load and verify against the header's hashes.
func TestThinPayloadSplicesBack(t *testing.T) {
	content, _, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	w, err := colony.New(content, colony.Config{Maps: 3, Width: 90, Height: 70, Seed: 41, PawnsPerMap: 4, ThingsPerMap: 80})
	if err != nil {
		t.Fatal(err)
	}
	comp := Compression{Codec: Zstd}
	p, err := Build(w, BuildOptions{Compression: comp})
	if err != nil {
		t.Fatal(err)
	}
	thin, err := Thin(p, comp, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	build := colony.SectionBuilder(content)
	made := map[int32]uint64{}
	sections := map[int32][]byte{}
	for _, m := range p.Maps {
		if m.Section == nil {
			t.Fatalf("map %d: no section recorded", m.ID)
		}
		b, err := build(m.Section.Recipe, m.Section.Len)
		if err != nil {
			t.Fatal(err)
		}
		sections[m.ID], made[m.ID] = b, m.Section.Hash
	}
	made[1]++ // a wrong hash: map 1 goes whole
	full, err := NewPayload(p, 1, p.Tick, nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewJoinPayload(p, JoinLayout{Faction: 1, Granted: p.Tick, Thin: thin, Made: made})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Thinned() == 0 || pl.Total() >= full.Total() || pl.Total()+pl.Thinned() < full.Total() {
		t.Fatalf("thin payload %d bytes sparing %d, the full one is %d", pl.Total(), pl.Thinned(), full.Total())
	}
	parsed := parseThin(t, pl.Bytes())
	for _, m := range parsed.Header.Maps {
		if (m.Cut != nil) != (m.ID != 1) {
			t.Fatalf("map %d: cut %v", m.ID, m.Cut)
		}
	}
	if _, err := parsed.Load(colony.Loader(content), Limits{}); err == nil {
		t.Fatal("a thin payload loaded without its sections")
	}
	maps := make([][]byte, len(parsed.Maps))
	for i, b := range parsed.Maps {
		raw, err := Decompress(b, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		if cut := parsed.Header.Maps[i].Cut; cut != nil {
			if raw, err = Splice(raw, *cut, sections[parsed.Header.Maps[i].ID]); err != nil {
				t.Fatal(err)
			}
		}
		maps[i] = raw
	}
	world, err := Decompress(parsed.World, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parsed.Header.Load(colony.Loader(content), world, maps); err != nil {
		t.Fatalf("spliced maps: %v", err)
	}
	// A wrong section spliced in fails the header's state hash check.
	bad := append([]byte(nil), sections[0]...)
	bad[0] ^= 1
	raw, _ := Decompress(parsed.Maps[0], 1<<30)
	if maps[0], err = Splice(raw, *parsed.Header.Maps[0].Cut, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := parsed.Header.Load(lockstep.Loader(colony.Loader(content)), world, maps); err == nil {
		t.Fatal("a map with a wrong section verified")
	}
}

// parseThin splits a payload that may hold thin blobs.
func parseThin(t *testing.T, b []byte) *Parsed {
	t.Helper()
	p, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSpliceBounds(t *testing.T) {
	if _, err := Splice([]byte("abc"), 4, []byte("x")); err == nil {
		t.Fatal("a cut past the end was taken")
	}
	for _, tc := range []struct {
		raw  []byte
		off  uint64
		want string
	}{{[]byte("abef"), 2, "abcdef"}, {[]byte("ab"), 2, "abcd"}, {append(make([]byte, 0, 16), "ef"...), 0, "cdef"}} {
		got, err := Splice(tc.raw, tc.off, []byte("cd"))
		if err != nil || string(got) != tc.want {
			t.Fatalf("Splice(%q, %d) = %q, %v; want %q", tc.raw, tc.off, got, err, tc.want)
		}
	}
}

// FuzzThinPayload parses payloads grown from one with thin maps, splices
// the sections a joiner made back into the maps the header marks as cut
// and loads them: nothing may panic, and what loads matches the header's
// hashes (Header.Load checks; a wrong splice must fail there).
func FuzzThinPayload(f *testing.F) {
	content, _, err := colony.DefaultContent()
	if err != nil {
		f.Fatal(err)
	}
	w, err := colony.New(content, colony.Config{Maps: 2, Width: 24, Height: 16, Seed: 3, PawnsPerMap: 2, ThingsPerMap: 10})
	if err != nil {
		f.Fatal(err)
	}
	p, err := Build(w, BuildOptions{Compression: Compression{Codec: Zstd}})
	if err != nil {
		f.Fatal(err)
	}
	thin, err := Thin(p, Compression{Codec: Zstd}, 1, 0)
	if err != nil {
		f.Fatal(err)
	}
	build := colony.SectionBuilder(content)
	sections := map[int32][]byte{}
	made := map[int32]uint64{}
	for _, m := range p.Maps {
		if sections[m.ID], err = build(m.Section.Recipe, m.Section.Len); err != nil {
			f.Fatal(err)
		}
		made[m.ID] = m.Section.Hash
	}
	pl, err := NewJoinPayload(p, JoinLayout{Granted: p.Tick, Thin: thin, Made: made})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(pl.Bytes())
	load := colony.Loader(content)
	f.Fuzz(func(t *testing.T, b []byte) {
		parsed, err := Parse(b)
		if err != nil {
			return
		}
		world, err := Decompress(parsed.World, 1<<20)
		if err != nil {
			return
		}
		maps := make([][]byte, len(parsed.Maps))
		for i, blob := range parsed.Maps {
			raw, err := Decompress(blob, 1<<20)
			if err != nil {
				return
			}
			if cut := parsed.Header.Maps[i].Cut; cut != nil {
				if raw, err = Splice(raw, *cut, sections[parsed.Header.Maps[i].ID]); err != nil {
					return
				}
			}
			maps[i] = raw
		}
		_, _ = parsed.Header.Load(load, world, maps)
	})
}

// FuzzSplice: Splice puts the section at the offset and keeps the rest
// in order, or refuses an offset past the end.
func FuzzSplice(f *testing.F) {
	f.Add([]byte("abef"), uint64(2), []byte("cd"))
	f.Add([]byte{}, uint64(0), []byte{})
	f.Add([]byte("x"), uint64(9), []byte("y"))
	f.Fuzz(func(t *testing.T, raw []byte, off uint64, sec []byte) {
		// The fuzzer's arguments may share one array: sec in raw's spare
		// capacity, which Splice writes. A joiner's are apart.
		sec = bytes.Clone(sec)
		in := append([]byte(nil), raw...)
		got, err := Splice(raw, off, sec)
		if off > uint64(len(in)) {
			if err == nil {
				t.Fatal("an offset past the end was taken")
			}
			return
		}
		want := append(append(append([]byte(nil), in[:off]...), sec...), in[off:]...)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Splice(%x, %d, %x) = %x, %v; want %x", in, off, sec, got, err, want)
		}
	})
}

// TestCutPresenceIsTheSignal: the header's m[].o marks a thin blob by
// being there, and 0 is a valid offset: a cut at 0 is written as o 0 and
// read back as a cut at 0, while no cut leaves the key out, and o nil
// reads as no cut (nil is any field's zero value: absent).
func TestCutPresenceIsTheSignal(t *testing.T) {
	zero := uint64(0)
	for _, tc := range []struct {
		info MapInfo
		want string // the body's hex
	}{
		{MapInfo{Cut: &zero}, "84a16283a16800a17200a17300a16900a16f00a17800"},
		{MapInfo{}, "83a16283a16800a17200a17300a16900a17800"},
	} {
		b, err := codec.Encode(&tc.info)
		if err != nil || hex.EncodeToString(b) != tc.want {
			t.Errorf("cut %v encodes as %x, %v; want %s", tc.info.Cut, b, err, tc.want)
		}
	}
	for body, thin := range map[string]bool{"81a16f00": true, "81a16fc0": false, "80": false} {
		raw, _ := hex.DecodeString(body)
		var m MapInfo
		if err := codec.Decode(raw, &m); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if (m.Cut != nil) != thin || thin && *m.Cut != 0 {
			t.Errorf("%s reads as cut %v; want thin %v at 0", body, m.Cut, thin)
		}
	}
}
