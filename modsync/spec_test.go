package modsync

import (
	"bytes"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
)

// specExample is the manifest of the spec's example (docs/protocol.md,
// section 17.6).
func specExample() *Manifest {
	data := []byte("<Defs/>")
	return &Manifest{Format: FormatVersion, GameVersion: "1.5", Mods: []Mod{{
		PackageID: "ex.mod", Name: "Example", Version: "1.0", Folders: []string{"."},
		Files:     []File{{Path: "Defs/A.xml", Size: int64(len(data)), Hash: sumOf(data), Kind: KindDefs, Databases: []string{"ThingDef"}}},
		NotShared: []NotShared{{Path: "Assemblies/Ex.dll", Size: 3, Reason: "code"}},
	}}}
}

var (
	specManifest = regexp.MustCompile("(?m)^Content manifest example:\\s*\\n+```hex\\n([0-9a-f \\n]+)```")
	specHash     = regexp.MustCompile("(?m)^Its hash \\(SHA-256\\): `([0-9a-f]{64})`")
	specFileHash = regexp.MustCompile("(?m)^The file's URL: `/content/([0-9a-f]{64})`")
)

func hexLines(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 && i%16 == 0 {
			sb.WriteByte('\n')
		} else if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(hex.EncodeToString([]byte{c}))
	}
	return sb.String()
}

// TestSpecGolden holds section 17.6's example bytes, manifest hash and
// file URL to the encoder and the decoder.
func TestSpecGolden(t *testing.T) {
	spec, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	m := specExample()
	enc := mustEncode(t, m)
	mm := specManifest.FindSubmatch(spec)
	if mm == nil {
		t.Fatalf("docs/protocol.md has no content manifest example; it should read:\n%s", hexLines(enc))
	}
	doc, err := hex.DecodeString(strings.Join(strings.Fields(string(mm[1])), ""))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, enc) {
		t.Errorf("the content manifest example should read:\n%s", hexLines(enc))
	}
	got, err := Decode(doc, DefaultLimits)
	if err != nil || got.Mods[0].Files[0].Hash != m.Mods[0].Files[0].Hash || got.Mods[0].NotShared[0].Reason != "code" {
		t.Errorf("the spec's example decodes as %+v, %v", got, err)
	}
	sum, _ := m.Hash()
	if h := specHash.FindSubmatch(spec); h == nil || string(h[1]) != sum.String() {
		t.Errorf("the spec should give the example's hash as `%s`", sum)
	}
	if h := specFileHash.FindSubmatch(spec); h == nil || string(h[1]) != m.Mods[0].Files[0].Hash.String() {
		t.Errorf("the spec should give the file's URL as `/content/%s`", m.Mods[0].Files[0].Hash)
	}
}
