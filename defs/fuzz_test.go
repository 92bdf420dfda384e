package defs

import (
	"bytes"
	"os"
	"path/filepath"
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
