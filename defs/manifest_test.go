package defs

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

func sampleSet(t *testing.T, extra string) *Set {
	t.Helper()
	return scan(t, Options{GameVersion: "1.5"},
		mod("core", map[string]string{"Defs/A.xml": defsXML(`<ThingDef><defName>Steel</defName><mass>1</mass></ThingDef><ThingDef><defName>Wood</defName></ThingDef><RecipeDef><defName>Cook</defName></RecipeDef>`)}),
		mod("addon", map[string]string{"Defs/B.xml": defsXML(`<ThingDef><defName>Gold</defName></ThingDef>` + extra)}),
	)
}

func TestManifestRoundTrip(t *testing.T) {
	s := sampleSet(t, "")
	m := s.Manifest()
	var buf bytes.Buffer
	if err := WriteManifest(&buf, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"schema": 1`) || !strings.Contains(buf.String(), `"hash": "`) {
		t.Fatalf("unexpected JSON:\n%s", buf.String())
	}
	got, err := ReadManifest(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !Diff(m, got).Same() {
		t.Fatal("round trip differs")
	}
	a, b := s.Summary(), got.Summary()
	if len(a) != len(b) || !AllOK(Compare(a, b)) {
		t.Fatalf("summaries differ: %v %v", a, b)
	}
	if a[1].Hash != uint64(got.Database("ThingDef").Hash) || got.Mods[0].Version != "1.0" || got.GameVersion != "1.5" {
		t.Fatalf("manifest = %+v", got)
	}
	only := m.Only([]string{"ThingDef", "Nope"})
	if len(only.Databases) != 1 || only.Databases[0].Type != "ThingDef" || len(only.Mods) != 2 || only.Validate() != nil {
		t.Fatalf("Only = %+v", only)
	}
	only.Databases[0].Defs[0].Name = "changed"
	if m.Database("ThingDef").Defs[0].Name == "changed" {
		t.Fatal("Only shares def slices")
	}
}

func TestReadManifestRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteManifest(&buf, sampleSet(t, "").Manifest()); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	cases := map[string]string{
		"schema 2":          strings.Replace(good, `"schema": 1`, `"schema": 2`, 1),
		"no schema":         strings.Replace(good, `"schema": 1,`, ``, 1),
		"numeric hash":      strings.Replace(good, `"hash": "`, `"hash": 1, "x": "`, 1),
		"short hash":        `{"schema":1,"databases":[{"type":"A","count":0,"hash":"12"}]}`,
		"bad hash":          `{"schema":1,"databases":[{"type":"A","count":0,"hash":"zzzzzzzzzzzzzzzz"}]}`,
		"unsorted":          `{"schema":1,"databases":[{"type":"B","count":0,"hash":"0000000000000000"},{"type":"A","count":0,"hash":"0000000000000000"}]}`,
		"negative":          `{"schema":1,"databases":[{"type":"A","count":-1,"hash":"0000000000000000"}]}`,
		"count mismatch":    `{"schema":1,"databases":[{"type":"A","count":2,"hash":"0000000000000000","defs":[{"name":"x","mod":"m","hash":"0000000000000000"}]}]}`,
		"db hash mismatch":  `{"schema":1,"databases":[{"type":"A","count":1,"hash":"0000000000000000","defs":[{"name":"x","mod":"m","hash":"0000000000000000"}]}]}`,
		"duplicate mod":     `{"schema":1,"mods":[{"packageId":"a"},{"packageId":"A"}]}`,
		"trailing garbage":  good + "{}",
		"not json":          "<xml/>",
		"empty":             "",
		"empty type":        `{"schema":1,"databases":[{"type":"","count":0,"hash":"0000000000000000"}]}`,
		"tampered def hash": tamper(good),
		"file hash short":   `{"schema":1,"mods":[{"packageId":"a","files":[{"path":"a.png","size":1,"sha256":"00"}]}]}`,
		"file hash upper":   `{"schema":1,"mods":[{"packageId":"a","files":[{"path":"a.png","size":1,"sha256":"` + strings.Repeat("A", 64) + `"}]}]}`,
		"file unsorted":     `{"schema":1,"mods":[{"packageId":"a","files":[{"path":"b","size":1,"sha256":"` + strings.Repeat("0", 64) + `"},{"path":"a","size":1,"sha256":"` + strings.Repeat("0", 64) + `"}]}]}`,
		"file size":         `{"schema":1,"mods":[{"packageId":"a","files":[{"path":"a","size":-1,"sha256":"` + strings.Repeat("0", 64) + `"}]}]}`,
	}
	for name, in := range cases {
		if _, err := ReadManifest(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	big := strings.NewReader(`{"schema":1,"gameVersion":"` + strings.Repeat("x", MaxManifestSize) + `"}`)
	if _, err := ReadManifest(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized: %v", err)
	}
	if _, err := ReadManifest(strings.NewReader(`{"schema":1}`)); err != nil {
		t.Errorf("minimal manifest: %v", err)
	}
}

// tamper flips one digit of the first def hash in a manifest.
func tamper(s string) string {
	i := strings.Index(s, `"defs"`)
	j := strings.Index(s[i:], `"hash": "`) + i + len(`"hash": "`)
	c := byte('0')
	if s[j] == '0' {
		c = '1'
	}
	return s[:j] + string(c) + s[j+1:]
}

func TestDiffReport(t *testing.T) {
	a := sampleSet(t, "").Manifest()
	b := sampleSet(t, `<ThingDef><defName>Steel</defName><mass>2</mass></ThingDef><PawnKindDef><defName>Ghost</defName></PawnKindDef>`).Manifest()
	b.Mods = append(b.Mods, ManifestMod{PackageID: "extra", Name: "Extra"})
	b.Mods[0], b.Mods[1] = b.Mods[1], b.Mods[0]
	b.Mods[0].Version = "2.0"
	r := Diff(a, b)
	if r.Same() {
		t.Fatal("Same")
	}
	var buf bytes.Buffer
	r.WriteText(&buf, "host", "client")
	out := buf.String()
	for _, want := range []string{
		"Mod extra (Extra) is only in client.",
		"Mod addon differs: host has addon (addon name 1.0), client has addon (addon name 2.0).",
		"different order",
		"Database PawnKindDef (1 def) is only in client.",
		"PawnKindDef Ghost (mod addon, file Defs/B.xml) is only in client.",
		"ThingDef Steel has different content: in host from mod core, file Defs/A.xml; in client from mod addon, file Defs/B.xml.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	if !Diff(a, a).Same() {
		t.Fatal("self diff")
	}
	buf.Reset()
	Diff(a, a).WriteText(&buf, "x", "y")
	if !strings.Contains(buf.String(), "same") {
		t.Errorf("same report: %s", buf.String())
	}
	// Def only on one side, with counts equal.
	c := sampleSet(t, `<ThingDef><defName>Zinc</defName></ThingDef>`).Manifest()
	d := sampleSet(t, `<ThingDef><defName>Iron</defName></ThingDef>`).Manifest()
	r = Diff(c, d)
	if len(r.Databases) != 1 || len(r.Databases[0].OnlyA) != 1 || r.Databases[0].OnlyA[0].Name != "Zinc" || r.Databases[0].OnlyB[0].Mod != "addon" {
		t.Fatalf("diff = %+v", r.Databases)
	}
	if st := Compare(c.Summary(), d.Summary()); st[1] != StatusHashDiff {
		t.Fatalf("status = %v", st)
	}
}

// The host sends summaries and manifests with go-msgpack: hashes must
// survive as full 64-bit values.
func TestMsgpackRoundTrip(t *testing.T) {
	m := sampleSet(t, "").Manifest()
	m.Databases[0].Hash = 0xfedcba9876543210 // above 2^53
	sum := m.Summary()
	var h codec.MsgpackHandle
	var b []byte
	if err := codec.NewEncoderBytes(&b, &h).Encode(struct {
		M *Manifest
		S []Summary
	}{m, sum}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		M *Manifest
		S []Summary
	}
	if err := codec.NewDecoderBytes(b, &h).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.M.Databases[0].Hash != m.Databases[0].Hash || got.S[0].Hash != 0xfedcba9876543210 || len(got.M.Databases[1].Defs) != len(m.Databases[1].Defs) {
		t.Fatalf("msgpack round trip: %+v", got)
	}
	if r := Diff(m, got.M); r.GameVersionA != r.GameVersionB || len(r.Databases) != 0 || len(r.ModsChanged) != 0 {
		t.Fatalf("diff after msgpack: %+v", r)
	}
}

// TestDiffFiles: files are compared for a mod both sides list files
// for, and each that differs, is only in one side, or is the same, is
// told apart; a side without files compares none.
func TestDiffFiles(t *testing.T) {
	h := func(c string) string { return strings.Repeat(c, 64) }
	a := &Manifest{Schema: ManifestSchema, Mods: []ManifestMod{{PackageID: "m", Files: []ManifestFile{{"a.png", 1, h("1")}, {"b.png", 2, h("2")}, {"c.png", 3, h("3")}}}}}
	b := &Manifest{Schema: ManifestSchema, Mods: []ManifestMod{{PackageID: "M", Files: []ManifestFile{{"b.png", 2, h("2")}, {"c.png", 4, h("4")}, {"d.png", 5, h("5")}}}}}
	r := Diff(a, b)
	want := []FileChange{
		{Mod: "m", Path: "a.png", SizeA: 1, SHA256A: h("1")},
		{Mod: "m", Path: "c.png", SizeA: 3, SizeB: 4, SHA256A: h("3"), SHA256B: h("4")},
		{Mod: "m", Path: "d.png", SizeB: 5, SHA256B: h("5")},
	}
	if !slices.Equal(r.Files, want) || r.Same() {
		t.Errorf("files %+v", r.Files)
	}
	var buf bytes.Buffer
	r.WriteText(&buf, "A", "B")
	for _, line := range []string{"File a.png of mod m (1 bytes) is only in A.", "File c.png of mod m differs", "File d.png of mod m (5 bytes) is only in B."} {
		if !strings.Contains(buf.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, buf.String())
		}
	}
	b.Mods[0].Files = nil
	if r := Diff(a, b); len(r.Files) != 0 || !r.Same() {
		t.Errorf("a side without files: %+v", r.Files)
	}
}
