package defs

import "testing"

func TestFirstDifference(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{`<label>x</label><mass>1</mass>`, `<label>x</label><mass>2</mass>`, "mass"},
		{`<statBases><A>1</A><B>1</B></statBases>`, `<statBases><A>1</A><B>2</B></statBases>`, "statBases/B"},
		{`<comps><li><c>A</c></li><li><c>B</c></li></comps>`, `<comps><li><c>A</c></li><li><c>C</c></li></comps>`, "comps/li[2]/c"},
		{`<comps><li>A</li></comps>`, `<comps><li>A</li><li>B</li></comps>`, "comps/li[2]"},
		{`<label>x</label>`, `<label>x</label><mass>1</mass>`, "mass"},
		{`<label>x</label><mass>1</mass>`, `<label>x</label><description>d</description><mass>1</mass>`, "mass"},
		{`<label a="1">x</label>`, `<label a="2">x</label>`, "label"},
	}
	for _, tc := range tests {
		get := func(body string) *Node {
			return scan(t, Options{}, mod("test.a", map[string]string{"Defs/T.xml": defsXML(`<ThingDef><defName>W</defName>` + body + `</ThingDef>`)})).Database("ThingDef").Def("W").Node
		}
		na, nb := get(tc.a), get(tc.b)
		if got := FirstDifference(na, nb); got != tc.want {
			t.Errorf("%s vs %s: %q, want %q", tc.a, tc.b, got, tc.want)
		}
		// From the fingerprints a manifest carries, the same answer.
		if got, ok := FirstDifferenceElements(Elements(na), Elements(nb)); !ok || got != tc.want {
			t.Errorf("elements of %s vs %s: %q %v, want %q", tc.a, tc.b, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "1 a 00000000", "0 a 00000000;2 b 00000000", "0 a", "0 a 00000000;x b 00000000", "0 a 00000000;0 b 00000000"} {
		if _, ok := FirstDifferenceElements(bad, "0 a 00000000"); ok {
			t.Errorf("%q read as an Elements list", bad)
		}
	}
	a := scan(t, Options{}, mod("test.a", map[string]string{"Defs/T.xml": defsXML(`<ThingDef Foo="1"><defName>W</defName></ThingDef>`)})).Database("ThingDef").Def("W").Node
	b := scan(t, Options{}, mod("test.a", map[string]string{"Defs/T.xml": defsXML(`<ThingDef Foo="2"><defName>W</defName></ThingDef>`)})).Database("ThingDef").Def("W").Node
	if got := FirstDifference(a, b); got != "" {
		t.Errorf("def element's attribute: %q, want \"\"", got)
	}
}
