package colony

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// The protocol specification (docs/protocol.md, section 8.6) gives the
// reference game's section recipe and content fingerprint for clients in
// any language. These tests redo both from the spec's text alone and
// hold them to the code.

func readSpec(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var specRecipe = regexp.MustCompile("(?m)^recipe = (.+)$")

// recipeFromSpec lays out a recipe by the spec's line, with the named
// values.
func recipeFromSpec(t *testing.T, line string, vals map[string]uint64) []byte {
	t.Helper()
	var out []byte
	for _, tok := range strings.Fields(line) {
		kind, name, ok := strings.Cut(strings.TrimSuffix(tok, ")"), "(")
		if !ok {
			b, err := hex.DecodeString(tok)
			if err != nil {
				t.Fatalf("recipe token %q", tok)
			}
			out = append(out, b...)
			continue
		}
		v, known := vals[name]
		if !known {
			t.Fatalf("the spec's recipe names %q, which the test does not know", name)
		}
		switch kind {
		case "u64le":
			out = binary.LittleEndian.AppendUint64(out, v)
		case "uvarint":
			out = binary.AppendUvarint(out, v)
		default:
			t.Fatalf("recipe token %q", tok)
		}
	}
	return out
}

// TestSpecRecipe: every map's recipe is the spec's layout of the
// content's fingerprint, the world's seed, the map's ID and size.
func TestSpecRecipe(t *testing.T) {
	m := specRecipe.FindStringSubmatch(readSpec(t))
	if m == nil {
		t.Fatal("the spec gives no recipe = ... line")
	}
	spec := strings.Join(strings.Fields(readSpec(t)), " ")
	for _, want := range []string{fmt.Sprintf("`mapID` below %d", MaxMaps), fmt.Sprintf("`height` %d to %d cells", MinSide, MaxSide)} {
		if !strings.Contains(spec, want) {
			t.Errorf("the spec does not say %q", want)
		}
	}
	c := testContent(t)
	w := mustNew(t, c, Config{Maps: 3, Width: 131, Height: 9, Seed: 77, PawnsPerMap: 1, ThingsPerMap: 5})
	for _, id := range w.MapIDs() {
		sec, _ := w.MapSection(id)
		mp := w.mapByID(id)
		want := recipeFromSpec(t, m[1], map[string]uint64{"fingerprint": c.Fingerprint(), "seed": w.Seed(),
			"mapID": uint64(id), "width": uint64(mp.W), "height": uint64(mp.H)})
		if !bytes.Equal(sec.Recipe, want) {
			t.Errorf("map %d: recipe %x; the spec lays out %x", id, sec.Recipe, want)
		}
		if sec.Len != uint64(mp.W)*uint64(mp.H) {
			t.Errorf("map %d: section of %d bytes; the spec says width x height, %d", id, sec.Len, mp.W*mp.H)
		}
	}
}

var (
	specFingerprint = regexp.MustCompile("(?s)fingerprint = XXH64\\( \"([^\"]+)\"\\n(.*?)\\)\\n```")
	specGroup       = regexp.MustCompile(`varint\(#(\w+)\)\s*\{([^}]*)\}\.\.\.`)
	specValue       = regexp.MustCompile(`(str|varint|flag)\((\w+)\)`)
)

// fingerprintFromSpec computes a content's fingerprint from the spec's
// layout: each group names a slice of Content, each value a field of its
// items.
func fingerprintFromSpec(t *testing.T, prefix, groups string, c *Content) uint64 {
	t.Helper()
	b := []byte(prefix)
	cv := reflect.ValueOf(c).Elem()
	found := 0
	for _, g := range specGroup.FindAllStringSubmatch(groups, -1) {
		found++
		list := cv.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, g[1]) })
		if !list.IsValid() || list.Kind() != reflect.Slice {
			t.Fatalf("the spec's group %q is not a list of Content", g[1])
		}
		b = binary.AppendVarint(b, int64(list.Len()))
		for i := range list.Len() {
			item := list.Index(i)
			for _, v := range specValue.FindAllStringSubmatch(g[2], -1) {
				f := item.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, v[2]) })
				if !f.IsValid() {
					t.Fatalf("the spec's %s has a field %q, which %s does not", g[1], v[2], item.Type())
				}
				switch v[1] {
				case "str":
					b = binary.AppendUvarint(b, uint64(f.Len()))
					b = append(b, f.String()...)
				case "varint":
					b = binary.AppendVarint(b, f.Int())
				case "flag":
					if f.Bool() {
						b = append(b, 1)
					} else {
						b = append(b, 0)
					}
				}
			}
		}
	}
	if found != 3 {
		t.Fatalf("the spec's fingerprint has %d groups, want terrains, things and pawn kinds", found)
	}
	return xxhash.Sum64(b)
}

// TestSpecFingerprint: the fingerprint computed by the spec's layout is
// the code's, for the default content and a content built by hand (a
// field left out, or two in the wrong order, would differ on one).
func TestSpecFingerprint(t *testing.T) {
	m := specFingerprint.FindStringSubmatch(readSpec(t))
	if m == nil {
		t.Fatal("the spec gives no fingerprint = XXH64( ... ) block")
	}
	for _, c := range []*Content{testContent(t), handContent()} {
		if got, want := fingerprintFromSpec(t, m[1], m[2], c), c.Fingerprint(); got != want {
			t.Errorf("the spec's fingerprint is %016x; the code's %016x", got, want)
		}
	}
}
