package defs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func FuzzParseDefXML(f *testing.F) {
	seeds := []string{
		defsXML(`<ThingDef Name="B" Abstract="True"><a>1</a></ThingDef><ThingDef ParentName="B"><defName>X</defName><li Inherit="False"/></ThingDef>`),
		"\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n<Defs><!-- c --><A><defName>x</defName><t><![CDATA[a<b]]>&amp;&#x41;&#65;</t></A></Defs>",
		`<!DOCTYPE Defs [<!ELEMENT Defs ANY>]><Defs/>`,
		"<Defs>\r\n<A x='1' y=\"2\"\t/></Defs>",
		`<Defs><A></B></Defs>`,
		`<Defs><A x=1/></Defs>`,
		`<Defs>&bogus;</Defs>`,
		`<?xml version="1.0" encoding="latin1"?><Defs/>`,
		"<Defs>\xff</Defs>",
		"<?xml version=\"1.0\" encoding=\"windows-1252\"?>\n<Defs><A><defName>Caf\xe9</defName><b>\x80\x9d</b></A></Defs>",
		"<?xml version='1.0' encoding='ISO-8859-1'?><Defs><A>\xff\xe0</A></Defs>",
		"\xff\xfe<\x00D\x00e\x00f\x00s\x00/\x00>\x00",
		"\xfe\xff\x00<\x00D\x00/\x00>",
		"<\x00?\x00x\x00m\x00l\x00?\x00>\x00",
		"\xff\xfe\x00\xd8",
		"",
		"<a><b><c><d/></c></b></a>trailing",
	}
	if files, _ := filepath.Glob(filepath.Join(realMods, "*", "Defs", "*", "*.xml")); len(files) > 0 {
		for _, p := range files[:min(4, len(files))] {
			if b, err := os.ReadFile(p); err == nil {
				seeds = append(seeds, string(b))
			}
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defs, issues := parseDefXML(bytes.Clone(data))
		fatalParse := false
		for _, is := range issues {
			if is.Line < 1 || is.Line > bytes.Count(data, []byte{'\n'})+1 {
				t.Fatalf("issue line %d out of range: %s", is.Line, is.Msg)
			}
			if is.Fatal {
				fatalParse = true
			}
		}
		if fatalParse && len(defs) > 0 {
			t.Fatalf("defs returned with a syntax error")
		}
		for _, d := range defs {
			if d.Node == nil || d.Type != d.Node.Name {
				t.Fatalf("bad def %+v", d)
			}
			checkTree(t, d.Node, 1)
			// Hashing is deterministic.
			h1, _ := defHash(nil, d.Type, d.DefName, d.Node)
			h2, _ := defHash(make([]byte, 0, 7), d.Type, d.DefName, d.Node)
			if h1 != h2 {
				t.Fatal("hash not deterministic")
			}
		}
	})
}

func checkTree(t *testing.T, n *Node, depth int) {
	if depth > maxDepth+1 {
		t.Fatalf("depth %d", depth)
	}
	if n.Name == "" || n.Line < 1 {
		t.Fatalf("bad node %+v", n)
	}
	if strings.Trim(n.Text, " \t\r\n") != n.Text {
		t.Fatalf("text not trimmed: %q", n.Text)
	}
	for i := 1; i < len(n.Attrs); i++ {
		if n.Attrs[i-1].Name > n.Attrs[i].Name {
			t.Fatalf("attrs not sorted: %v", n.Attrs)
		}
	}
	for _, c := range n.Children {
		checkTree(t, c, depth+1)
	}
}

func FuzzReadManifest(f *testing.F) {
	var buf bytes.Buffer
	s, err := ScanFS([]ModSource{mod("core", map[string]string{"Defs/A.xml": defsXML(`<ThingDef><defName>Steel</defName></ThingDef><RecipeDef><defName>Cook</defName></RecipeDef>`)})}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	if err := WriteManifest(&buf, s.Manifest()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	// With element fingerprints, diffed against another def of the same
	// name, the fingerprints are read.
	buf.Reset()
	if err := WriteManifest(&buf, s.ManifestWithElements()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	other, err := ScanFS([]ModSource{mod("core", map[string]string{"Defs/A.xml": defsXML(`<ThingDef><defName>Steel</defName><comps><li>x</li></comps></ThingDef>`)})}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	om := other.ManifestWithElements()
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`{"schema":1,"gameVersion":"1.5","mods":[{"packageId":"a","name":"A","version":"1"}],"databases":[{"type":"A","count":0,"hash":"0000000000000000"}]}`))
	f.Add([]byte(`{"schema":2}`))
	f.Add([]byte(`{"schema":1,"databases":[{"type":"A","count":1,"hash":"00000000000000zz"}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadManifest(bytes.NewReader(data))
		if err != nil {
			if m != nil {
				t.Fatal("manifest with error")
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted invalid manifest: %v", err)
		}
		// Whatever is accepted survives a round trip unchanged.
		var out bytes.Buffer
		if err := WriteManifest(&out, m); err != nil {
			t.Fatalf("write: %v", err)
		}
		m2, err := ReadManifest(&out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if r := Diff(m, m2); !r.Same() {
			t.Fatalf("round trip changed the manifest: %+v", r)
		}
		_ = m.Summary()
		_ = m.Only([]string{"A"})
		var sink bytes.Buffer
		Diff(m, m2).WriteText(&sink, "a", "b")
		Diff(m, om).WriteText(&sink, "a", "b")
	})
}

// FuzzScanLoadOrder scans two mods, a then b, with b's defs in two
// versions. Whatever the files hold, scanning does not depend on the
// number of workers, and a def that mod a provides in both scans is the
// same in both: the game looks for parents only in a def's own mod and
// those loaded before it, so nothing in a later mod changes it.
func FuzzScanLoadOrder(f *testing.F) {
	f.Add([]byte(`<ThingDef ParentName="P"><defName>W</defName></ThingDef>`), []byte(`<ThingDef Name="P" Abstract="True"><label>1</label></ThingDef>`), []byte(`<ThingDef Name="P" Abstract="True"><label>2</label></ThingDef>`))
	f.Add([]byte(`<ThingDef Name="P" Abstract="True" MayRequire="x.y"><a>1</a></ThingDef><ThingDef ParentName="P"><defName>W</defName></ThingDef>`), []byte(`<ThingDef ParentName="P"><defName>V</defName></ThingDef>`), []byte(`<ThingDef Name="P"><defName>W</defName></ThingDef>`))
	f.Add([]byte(`<ThingDef MayRequire="x.y"><defName>C</defName><l>r</l></ThingDef><ThingDef><defName>C</defName></ThingDef>`), []byte(``), []byte(`<ThingDef><defName>C</defName></ThingDef>`))
	f.Fuzz(func(t *testing.T, a, b1, b2 []byte) {
		ma := mod("test.a", map[string]string{"Defs/A.xml": "<Defs>" + string(a) + "</Defs>"})
		mb := func(b []byte) ModSource {
			return mod("test.b", map[string]string{"Defs/B.xml": "<Defs>" + string(b) + "</Defs>"})
		}
		s1, err := ScanFS([]ModSource{ma, mb(b1)}, Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		s2, err := ScanFS([]ModSource{ma, mb(b2)}, Options{Workers: 3})
		if err != nil {
			t.Fatal(err)
		}
		again, _ := ScanFS([]ModSource{ma, mb(b2)}, Options{Workers: 1})
		if !slices.EqualFunc(s2.Summary(), again.Summary(), func(x, y Summary) bool { return x == y }) {
			t.Fatal("scan depends on the number of workers")
		}
		for _, db := range s1.Databases {
			for _, d := range db.Defs {
				o := s2.Database(db.Type).Def(d.Name)
				if d.Mod == "test.a" && o != nil && o.Mod == "test.a" && o.Hash != d.Hash {
					t.Fatalf("%s %s of mod a changed with mod b's content:\n%s\n%s", db.Type, d.Name, d.Node, o.Node)
				}
			}
		}
	})
}
