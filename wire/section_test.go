package wire

import (
	"bytes"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

// sectionExamples are the frames of the spec's regenerable-section
// example (section 8.6): a Server_DefsOK naming one map's terrain and the
// Client_Username that says the client made it.
func sectionExamples() []Packet {
	recipe := append([]byte{0x01}, bytes.Repeat([]byte{0x5f}, 8)...) // version, content fingerprint
	recipe = append(recipe, 7, 0, 0, 0, 0, 0, 0, 0)                  // the world's seed, 7
	recipe = append(recipe, 0x00, 0x40, 0x40)                        // map 0, 64 x 64
	return []Packet{
		&ServerDefsOK{GameName: "colony", PlayerID: 1, Sections: []SectionRecipe{{MapID: 0, Hash: 0x0123456789abcdef, Length: 4096, Recipe: recipe}}},
		&ClientUsername{Name: "ann", Made: []MadeSection{{MapID: 0, Hash: 0x0123456789abcdef}}},
	}
}

var sectionExample = regexp.MustCompile("(?m)^Section example ([A-Za-z_]+):\\s*\\n+```hex\\n([0-9a-f \\n]+)```")

// TestSectionFramesInSpec holds the spec's section example frames to the
// code's encoding, and checks they decode to the same packets.
func TestSectionFramesInSpec(t *testing.T) {
	found := map[string][]byte{}
	for _, m := range sectionExample.FindAllStringSubmatch(readSpec(t), -1) {
		b, err := hex.DecodeString(strings.Join(strings.Fields(m[2]), ""))
		if err != nil {
			t.Fatal(err)
		}
		found[m[1]] = b
	}
	for _, p := range sectionExamples() {
		got := MustMarshal(p)
		want, ok := found[p.ID().String()]
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("section example %s should read:\n%s", p.ID(), hexLines(got))
			continue
		}
		fr := NewFrameReader(bytes.NewReader(want), 0)
		id, body, err := fr.Next()
		if err != nil {
			t.Fatal(err)
		}
		dec, err := Decode(id, body)
		if err != nil || !bytes.Equal(MustMarshal(dec), got) {
			t.Errorf("%s: decodes to %+v, %v", id, dec, err)
		}
	}
}

// TestSectionLimits: the new lists are bounded and a recipe over its
// limit is refused.
func TestSectionLimits(t *testing.T) {
	if err := (&ServerDefsOK{Sections: make([]SectionRecipe, MaxSections+1)}).Validate(); err == nil {
		t.Error("too many sections taken")
	}
	if err := (&ServerDefsOK{Sections: []SectionRecipe{{Recipe: make([]byte, 257)}}}).Validate(); err == nil {
		t.Error("a 257-byte recipe taken")
	}
	if err := (&ClientUsername{Name: "ann", Made: make([]MadeSection, MaxSections+1)}).Validate(); err == nil {
		t.Error("too many made sections taken")
	}
	if err := (&ClientUsername{Name: "ann", Made: make([]MadeSection, MaxSections)}).Validate(); err != nil {
		t.Errorf("MaxSections made sections refused: %v", err)
	}
}
