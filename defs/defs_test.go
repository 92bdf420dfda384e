package defs

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func TestInheritance(t *testing.T) {
	s := scan(t, Options{}, mod("base", map[string]string{
		"Defs/A/Bases.xml": defsXML(`
  <ThingDef Name="Root" Abstract="True">
    <category>Item</category>
    <stats><li>Mass</li><li>Beauty</li></stats>
    <graphic Class="Graphic_Single"><path>root</path><size>1</size></graphic>
    <comps><li Class="CompA"/></comps>
    <tags><li>x</li></tags>
  </ThingDef>
  <ThingDef Name="Mid" ParentName="Root" Abstract="True">
    <stats><li>Flammability</li></stats>
    <graphic><path>mid</path></graphic>
    <label>mid</label>
  </ThingDef>`),
		"Defs/B/Things.xml": defsXML(`
  <ThingDef ParentName="Mid">
    <defName>Leaf</defName>
    <graphic Class="Graphic_Multi"><size>2</size></graphic>
    <comps Inherit="False"><li Class="CompB"/></comps>
    <category></category>
    <label>leaf</label>
  </ThingDef>
  <ThingDef ParentName="Mid" Name="Concrete">
    <defName>Middle</defName>
  </ThingDef>
  <ThingDef ParentName="Concrete">
    <defName>Grandchild</defName>
    <tags><li>y</li></tags>
  </ThingDef>`),
	}))
	if len(s.Errors) > 0 || len(s.Warnings) > 0 {
		t.Fatalf("errors %v warnings %v", s.Errors, s.Warnings)
	}
	db := s.Database("ThingDef")
	if db.Count() != 3 {
		t.Fatalf("count = %d, want 3 (abstract defs excluded)", db.Count())
	}
	leaf := db.Def("Leaf").Node
	texts := func(n *Node) string {
		var out []string
		for _, c := range n.Children {
			s := c.Text
			if v, ok := c.Attr("Class"); ok {
				s += "@" + v
			}
			out = append(out, s)
		}
		return strings.Join(out, ",")
	}
	checks := []struct{ got, want string }{
		{texts(leaf.Child("stats")), "Mass,Beauty,Flammability"},
		{leaf.Child("graphic").Attrs[0].Value, "Graphic_Multi"},
		{mustValue(t, leaf.Child("graphic"), "path"), "mid"},
		{mustValue(t, leaf.Child("graphic"), "size"), "2"},
		{texts(leaf.Child("comps")), "@CompB"},
		{mustValue(t, leaf, "category"), "Item"}, // empty child keeps the parent's value
		{mustValue(t, leaf, "label"), "leaf"},
		{texts(db.Def("Grandchild").Node.Child("tags")), "x,y"},
		{mustValue(t, db.Def("Grandchild").Node, "label"), "mid"},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %q, want %q\n%s", i, c.got, c.want, leaf)
		}
	}
	if leaf.Int("missing", 7) != 7 || db.Def("Grandchild").Node.Child("graphic").Int("size", 0) != 1 {
		t.Errorf("Int")
	}
	var nilNode *Node
	if nilNode.Child("x") != nil {
		t.Errorf("nil Child")
	}
	for _, a := range db.Def("Grandchild").Node.Attrs {
		if a.Name == "Name" || a.Name == "ParentName" || a.Name == "Abstract" {
			t.Errorf("inheritance attribute %s left in resolved node", a.Name)
		}
	}
}

// TestInheritedAttributes checks what becomes of an element's attributes
// when a child def inherits it. The game (XmlInheritance.
// RecursiveNodeCopyOverwriteElements) removes all the attributes of the
// parent's element and copies the child's: the child's attributes replace
// the parent's, they are not merged, at the def element as below it.
func TestInheritedAttributes(t *testing.T) {
	attrs := func(n *Node) string {
		if n == nil {
			return "(no element)"
		}
		var out []string
		for _, a := range n.Attrs {
			out = append(out, a.Name+"="+a.Value)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		name, parent, child string
		elem                string // the element to look at, "" for the def
		want                string // its attributes, name=value, sorted
	}{
		{"child's attribute replaces the parent's, another is dropped",
			`<graphic Class="Graphic_Single" Foo="x"><path>p</path></graphic>`, `<graphic Class="Graphic_Multi"><size>2</size></graphic>`,
			"graphic", "Class=Graphic_Multi"},
		{"child without attributes drops the parent's",
			`<graphic Class="Graphic_Single"><path>p</path></graphic>`, `<graphic><size>2</size></graphic>`,
			"graphic", ""},
		{"child's text over the parent's",
			`<label Foo="x">a</label>`, `<label>b</label>`,
			"label", ""},
		{"empty child keeps the parent's children, not its attributes",
			`<statBases Foo="x"><Mass>1</Mass></statBases>`, `<statBases/>`,
			"statBases", ""},
		{"attribute only on the child",
			`<comps><li>a</li></comps>`, `<comps Bar="y"><li>b</li></comps>`,
			"comps", "Bar=y"},
		{"element the child does not name keeps its attributes",
			`<graphic Class="Graphic_Single"><path>p</path></graphic>`, `<label>b</label>`,
			"graphic", "Class=Graphic_Single"},
	} {
		s := scan(t, Options{}, mod("m", map[string]string{"Defs/T.xml": defsXML(
			`<ThingDef Name="Base" Abstract="True">` + c.parent + `</ThingDef>
<ThingDef ParentName="Base"><defName>Leaf</defName>` + c.child + `</ThingDef>`)}))
		if got := attrs(s.Database("ThingDef").Def("Leaf").Node.Child(c.elem)); got != c.want {
			t.Errorf("%s: <%s> has attributes %q, want %q", c.name, c.elem, got, c.want)
		}
	}
	// The def element itself: a parent's Class is not inherited, the
	// child's own is kept.
	for _, c := range []struct{ child, want string }{
		{`<ThingDef ParentName="Base"><defName>Leaf</defName></ThingDef>`, ""},
		{`<ThingDef ParentName="Base" Class="OtherDef"><defName>Leaf</defName></ThingDef>`, "Class=OtherDef"},
	} {
		s := scan(t, Options{}, mod("m", map[string]string{"Defs/T.xml": defsXML(
			`<ThingDef Name="Base" Abstract="True" Class="MyDef"><label>x</label></ThingDef>` + "\n" + c.child)}))
		if got := attrs(s.Database("ThingDef").Def("Leaf").Node); got != c.want {
			t.Errorf("def element of %s: attributes %q, want %q", c.child, got, c.want)
		}
	}
}

func mustValue(t *testing.T, n *Node, name string) string {
	t.Helper()
	v, ok := n.Value(name)
	if !ok {
		t.Errorf("no <%s> in\n%s", name, n)
	}
	return v
}

func TestOverrideAcrossMods(t *testing.T) {
	a := mod("core", map[string]string{"Defs/X.xml": defsXML(`<ThingDef Name="P" Abstract="True"><v>core</v></ThingDef><ThingDef><defName>Steel</defName><mass>1</mass></ThingDef><ThingDef ParentName="P"><defName>Kid</defName></ThingDef>`)})
	b := mod("addon", map[string]string{"Defs/Y.xml": defsXML(`<ThingDef Name="P" Abstract="True"><v>addon</v></ThingDef><ThingDef><defName>Steel</defName><mass>2</mass></ThingDef><ThingDef ParentName="P"><defName>Kid2</defName></ThingDef>`)})
	s := scan(t, Options{}, a, b)
	if len(s.Errors) > 0 {
		t.Fatal(s.Errors)
	}
	steel := s.Database("ThingDef").Def("Steel")
	if steel.Mod != "addon" || mustValue(t, steel.Node, "mass") != "2" {
		t.Fatalf("steel from %s:\n%s", steel.Mod, steel.Node)
	}
	if s.Database("ThingDef").Count() != 3 {
		t.Fatalf("count %d", s.Database("ThingDef").Count())
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Msg, "core") || !strings.Contains(s.Warnings[0].Msg, "addon") || s.Warnings[0].File != "Defs/Y.xml" {
		t.Fatalf("warnings = %v", s.Warnings)
	}
	// Parents resolve within their own mod first.
	if v := mustValue(t, s.Database("ThingDef").Def("Kid").Node, "v"); v != "core" {
		t.Errorf("Kid inherits %q", v)
	}
	if v := mustValue(t, s.Database("ThingDef").Def("Kid2").Node, "v"); v != "addon" {
		t.Errorf("Kid2 inherits %q", v)
	}
	// Reversed load order: core wins.
	s = scan(t, Options{}, b, a)
	if s.Database("ThingDef").Def("Steel").Mod != "core" {
		t.Fatal("reversed order did not change the winner")
	}
}

func TestVersionFolders(t *testing.T) {
	files := map[string]string{
		"Defs/Base.xml":            defsXML(`<ThingDef><defName>Root</defName></ThingDef>`),
		"Defs/Shared.xml":          defsXML(`<ThingDef><defName>Shared</defName><v>root</v></ThingDef>`),
		"Common/Defs/Common.xml":   defsXML(`<ThingDef><defName>Common</defName></ThingDef>`),
		"1.4/Defs/Shared.xml":      defsXML(`<ThingDef><defName>Shared</defName><v>1.4</v></ThingDef>`),
		"1.5/Defs/Shared.xml":      defsXML(`<ThingDef><defName>Shared</defName><v>1.5</v></ThingDef>`),
		"v1.5/Defs/Shared.xml":     defsXML(`<ThingDef><defName>Shared</defName><v>v1.5</v></ThingDef>`),
		"v1.5/Defs/Sub/Only15.xml": defsXML(`<ThingDef><defName>Only15</defName></ThingDef>`),
		"v1.6/Defs/Shared.xml":     defsXML(`<ThingDef><defName>Shared</defName><v>v1.6</v></ThingDef>`),
	}
	// The game's rule without LoadFolders.xml: the folder named exactly
	// major.minor, else the highest not above, else the lowest above;
	// "v1.5" and "v1.6" are no version folders to it.
	cases := []struct {
		gv, shared string
		names      string
	}{
		{"", "1.5", "Common,Root,Shared"}, // DefaultGameVersion, 1.6: the highest below
		{"1.3", "1.4", "Common,Root,Shared"},
		{"1.4", "1.4", "Common,Root,Shared"},
		{"1.4.1", "1.4", "Common,Root,Shared"},
		{"1.5", "1.5", "Common,Root,Shared"},
		{"1.6", "1.5", "Common,Root,Shared"},
	}
	for _, c := range cases {
		s := scan(t, Options{GameVersion: c.gv}, mod("m", files))
		if len(s.Errors)+len(s.Warnings) > 0 {
			t.Fatalf("%s: %v %v", c.gv, s.Errors, s.Warnings)
		}
		db := s.Database("ThingDef")
		if got := defNames(db); got != c.names {
			t.Errorf("%s: defs %s, want %s", c.gv, got, c.names)
		}
		if got := mustValue(t, db.Def("Shared").Node, "v"); got != c.shared {
			t.Errorf("%s: Shared from %s, want %s", c.gv, got, c.shared)
		}
	}

	// LoadFolders.xml takes precedence, with conditions and fallback to
	// the highest listed version not above the game version.
	files["LoadFolders.xml"] = `<loadFolders>
  <v1.4><li>/</li><li>1.4</li></v1.4>
  <v1.5><li>/</li><li IfModActive="other.mod">Extra</li><li>v1.5</li></v1.5>
</loadFolders>`
	files["Extra/Defs/Extra.xml"] = defsXML(`<ThingDef><defName>Extra</defName></ThingDef>`)
	other := mod("other.mod", nil)
	for _, c := range []struct {
		gv    string
		mods  []ModSource
		names string
	}{
		{"1.3", []ModSource{mod("m", files)}, "Common,Root,Shared"}, // no usable entry: default rule
		{"1.4", []ModSource{mod("m", files)}, "Root,Shared"},
		{"1.5", []ModSource{mod("m", files)}, "Only15,Root,Shared"},
		{"1.5", []ModSource{mod("m", files), other}, "Extra,Only15,Root,Shared"},
		{"1.7", []ModSource{mod("m", files), other}, "Extra,Only15,Root,Shared"},
	} {
		s := scan(t, Options{GameVersion: c.gv}, c.mods...)
		if got := defNames(s.Database("ThingDef")); got != c.names {
			t.Errorf("LoadFolders %s (%d mods): defs %s, want %s", c.gv, len(c.mods), got, c.names)
		}
	}
}

func defNames(db *Database) string {
	var out []string
	for _, d := range db.Defs {
		out = append(out, d.Name)
	}
	return strings.Join(out, ",")
}

func TestHashCanonical(t *testing.T) {
	base := `<ThingDef Class="A" Extra="b"><defName>Steel</defName><label>steel bar</label><stats><li>1</li><li>2</li></stats></ThingDef>`
	hash := func(body string) (uint64, uint64) {
		t.Helper()
		s := scan(t, Options{}, mod("m", map[string]string{"Defs/X.xml": defsXML(body)}))
		if len(s.Errors) > 0 {
			t.Fatalf("%s: %v", body, s.Errors)
		}
		db := s.Database("ThingDef")
		return db.Defs[0].Hash, db.Hash
	}
	h0, d0 := hash(base)
	same := []string{
		"<!-- c -->\n<ThingDef   Extra='b'\n Class=\"A\" >\n\t<defName> Steel </defName>\r\n<!-- x --><label>steel bar</label>\n<stats>\n <li>1</li>\n <!--y-->  <li>2</li></stats>\n</ThingDef>",
		`<ThingDef Class="A" Extra="b"><defName>Steel</defName><label>steel <![CDATA[bar]]></label><stats><li>&#49;</li><li>2</li></stats></ThingDef>`,
		`<ThingDef Name="Unused" Class="A" Extra="b"><defName>Steel</defName><label>steel bar</label><stats><li>1</li><li>2</li></stats></ThingDef>`,
	}
	for _, v := range same {
		if h, d := hash(v); h != h0 || d != d0 {
			t.Errorf("hash changed for equivalent\n%s", v)
		}
	}
	diff := []string{
		strings.Replace(base, "steel bar", "steel  bar", 1),
		strings.Replace(base, "steel bar", "Steel bar", 1),
		strings.Replace(base, `Extra="b"`, `Extra="c"`, 1),
		strings.Replace(base, `Extra="b"`, ``, 1),
		strings.Replace(base, `<li>1</li><li>2</li>`, `<li>2</li><li>1</li>`, 1),
		strings.Replace(base, `<li>2</li>`, `<li>2</li><li/>`, 1),
		strings.Replace(base, `<label>`, `<labelx>`, 1),
		strings.Replace(base, `<defName>Steel</defName><label>steel bar</label>`, `<label>steel bar</label><defName>Steel</defName>`, 1),
	}
	seen := map[uint64]string{h0: base}
	for _, v := range diff {
		v = strings.Replace(v, "</labelx>", "</label>", 1)
		v = strings.Replace(v, "<labelx>steel bar</label>", "<labelx>steel bar</labelx>", 1)
		h, d := hash(v)
		if prev, dup := seen[h]; dup {
			t.Errorf("same hash for\n%s\n%s", prev, v)
		}
		if d == d0 {
			t.Errorf("database hash unchanged for\n%s", v)
		}
		seen[h] = v
	}
	// Same content inherited or written out gives the same hash. (The
	// def element's attributes are the child's own, as in the game.)
	h1, _ := hash(`<ThingDef Name="P" Abstract="True" Class="X"><defName>Steel</defName><label>steel bar</label><stats><li>1</li></stats></ThingDef>
<ThingDef ParentName="P" Class="A" Extra="b"><stats><li>2</li></stats></ThingDef>`)
	if h1 != h0 {
		t.Errorf("inherited content hashes differently")
	}
}

// Known values pin the hash rule: changing it breaks compatibility with
// every other build, so this must only change on purpose.
func TestHashStable(t *testing.T) {
	s := scan(t, Options{}, mod("m", map[string]string{"Defs/X.xml": defsXML(`<ThingDef Class="A"><defName>Steel</defName><stats><li>1</li></stats></ThingDef>`)}))
	d := s.Databases[0]
	const wantDef, wantDB = 0x35f3af42c0d8a48f, 0x428e81f0db132a9a
	if d.Defs[0].Hash != wantDef || d.Hash != wantDB {
		t.Errorf("def %016x db %016x, want %016x %016x", d.Defs[0].Hash, d.Hash, uint64(wantDef), uint64(wantDB))
	}
	n := &Node{Name: "ThingDef", Attrs: []Attr{{"Class", "A"}}, Children: []*Node{{Name: "defName", Text: "Steel"}, {Name: "stats", Children: []*Node{{Name: "li", Text: "1"}}}}}
	h, _ := defHash(nil, "ThingDef", "Steel", n)
	if h != d.Defs[0].Hash {
		t.Errorf("defHash of hand-built node %016x != scanned %016x", h, d.Defs[0].Hash)
	}
}

func TestFileErrors(t *testing.T) {
	s := scan(t, Options{}, mod("m", map[string]string{
		"Defs/A_Good.xml":   defsXML(`<ThingDef><defName>Good</defName></ThingDef>`),
		"Defs/B_Broken.xml": "<Defs>\n<ThingDef>\n<defName>Lost</defName>\n</ThingDeff>\n</Defs>",
		"Defs/C_NoName.xml": defsXML("<ThingDef><label>x</label></ThingDef>\n<ThingDef><defName>Kept</defName></ThingDef>"),
		"Defs/D_Parent.xml": defsXML("\n<ThingDef ParentName=\"Nope\"><defName>Orphan</defName></ThingDef>"),
		"Defs/E_Cycle.xml":  defsXML(`<ThingDef Name="X" ParentName="Y"><defName>X1</defName></ThingDef><ThingDef Name="Y" ParentName="X"><defName>Y1</defName></ThingDef>`),
		"Defs/F_Enc.xml":    `<?xml version="1.0" encoding="x-klingon"?><Defs/>`,
		"Defs/G_Empty.xml":  ``,
		"Defs/H_Entity.xml": defsXML(`<ThingDef><defName>E</defName><label>&nbsp;</label></ThingDef>`),
		"Defs/I_Other.xml":  `<ThingDefs><ThingDef><defName>OldRoot</defName></ThingDef></ThingDefs>`,
		"Defs/readme.txt":   "not xml",
	}))
	want := []struct{ file, msg string }{
		{"Defs/B_Broken.xml:4", "closed by </ThingDeff>"},
		{"Defs/C_NoName.xml:3", "ThingDef has no defName"},
		{"Defs/E_Cycle.xml:3", "cycle"},
		{"Defs/E_Cycle.xml:3", "has errors"},
		{"Defs/F_Enc.xml:1", "unsupported encoding"},
		{"Defs/G_Empty.xml:1", "no root element"},
		{"Defs/H_Entity.xml:3", "undefined entity &nbsp;"},
	}
	if len(s.Errors) != len(want) {
		t.Errorf("got %d errors, want %d", len(s.Errors), len(want))
	}
	for i, w := range want {
		if i >= len(s.Errors) {
			break
		}
		str := s.Errors[i].String()
		if !strings.Contains(str, "[m] "+w.file+": ") || !strings.Contains(str, w.msg) {
			t.Errorf("error %d = %q, want %s ... %s", i, str, w.file, w.msg)
		}
	}
	if got := defNames(s.Database("ThingDef")); got != "Good,Kept,OldRoot,Orphan" {
		t.Errorf("defs = %s", got)
	}
	if len(s.Unresolved) != 1 || s.Unresolved[0].Name != "Orphan" || s.Unresolved[0].UnresolvedParent != "Nope" {
		t.Errorf("unresolved = %v", s.Unresolved)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Msg, "<ThingDefs>") {
		t.Errorf("warnings = %v", s.Warnings)
	}
}

func TestUnusableInput(t *testing.T) {
	if _, err := ScanFS([]ModSource{{FS: fstest.MapFS{}, Dir: "empty"}}, Options{}); err == nil || !strings.Contains(err.Error(), "empty") || !strings.Contains(err.Error(), "About.xml") {
		t.Errorf("missing About.xml: %v", err)
	}
	if _, err := ScanFS([]ModSource{mod("a.b", nil), mod("A.B", nil)}, Options{}); err == nil || !strings.Contains(err.Error(), "also used") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := ScanDirs([]string{filepath.Join(t.TempDir(), "nope")}, Options{}); err == nil {
		t.Errorf("missing dir: no error")
	}
}

// bigSet builds a content set large enough to exercise the worker pool.
func bigSet() []ModSource {
	var mods []ModSource
	for m := 0; m < 3; m++ {
		files := map[string]string{}
		for f := 0; f < 40; f++ {
			var b strings.Builder
			b.WriteString(`<ThingDef Name="Base` + itoa(f) + `" Abstract="True"><mass>` + itoa(f) + `</mass><stats><li>A</li></stats></ThingDef>`)
			for d := 0; d < 20; d++ {
				b.WriteString(`<ThingDef ParentName="Base` + itoa(f) + `"><defName>T` + itoa(f*100+d) + `</defName><stats><li>m` + itoa(m) + `</li></stats></ThingDef>`)
				b.WriteString(`<RecipeDef><defName>R` + itoa(m*10000+f*100+d) + `</defName></RecipeDef>`)
			}
			files["Defs/F"+itoa(f)+".xml"] = defsXML(b.String())
		}
		mods = append(mods, mod("mod"+itoa(m), files))
	}
	return mods
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDeterministicParallel(t *testing.T) {
	var first []byte
	for _, w := range []int{1, 2, 7, 0} {
		s := scan(t, Options{Workers: w}, bigSet()...)
		var buf bytes.Buffer
		if err := WriteManifest(&buf, s.Manifest()); err != nil {
			t.Fatal(err)
		}
		for _, is := range s.Warnings {
			buf.WriteString(is.String() + "\n")
		}
		if first == nil {
			first = buf.Bytes()
			if len(s.Warnings) != 2*40*20 {
				t.Fatalf("warnings = %d", len(s.Warnings))
			}
			continue
		}
		if !bytes.Equal(first, buf.Bytes()) {
			t.Fatalf("workers=%d: different result", w)
		}
	}
}

func TestCompare(t *testing.T) {
	host := []Summary{{"A", 1, 10}, {"B", 2, 20}, {"C", 3, 30}}
	client := []Summary{{"C", 3, 30}, {"X", 1, 1}, {"B", 3, 20}, {"A", 1, 11}}
	got := Compare(host, client)
	want := []Status{StatusOK, StatusNotFound, StatusCountDiff, StatusHashDiff}
	if len(got) != len(want) {
		t.Fatal(got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, got[i], want[i])
		}
	}
	if StatusHashDiff.String() != "hash differs" || Status(9).String() != "status(9)" {
		t.Errorf("String")
	}
	if len(Compare(host, nil)) != 0 {
		t.Errorf("empty client")
	}
}

func TestLoadOrder(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	about := func(id string) string { return "<ModMetaData><packageId>" + id + "</packageId></ModMetaData>" }
	write("Data/Core/About/About.xml", about("Ludeon.RimWorld"))
	write("Mods/zeta/About/About.xml", about("A.Zeta"))
	write("Mods/alpha/About/About.xml", about("B.Alpha"))
	write("Mods/notamod/readme.txt", "x")
	write("Config/ModsConfig.xml", `<ModsConfigData><version>1.5</version><activeMods><li>ludeon.rimworld</li><li>b.alpha_steam</li><li>a.zeta</li></activeMods></ModsConfigData>`)
	got, err := LoadOrder(filepath.Join(dir, "Config/ModsConfig.xml"), []string{filepath.Join(dir, "Data"), filepath.Join(dir, "Mods")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Data/Core", "Mods/alpha", "Mods/zeta"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != filepath.Join(dir, want[i]) {
			t.Errorf("%d: %s", i, got[i])
		}
	}
	write("Config/ModsConfig.xml", `<ModsConfigData><activeMods><li>a.zeta</li><li>gone.mod</li></activeMods></ModsConfigData>`)
	got, err = LoadOrder(filepath.Join(dir, "Config/ModsConfig.xml"), []string{filepath.Join(dir, "Mods")})
	if err == nil || !strings.Contains(err.Error(), "gone.mod") || len(got) != 1 {
		t.Errorf("missing mod: %v %v", got, err)
	}
}

func TestRealModsDiffer(t *testing.T) {
	a, b := filepath.Join(realMods, "AllowTool@efb0de6"), filepath.Join(realMods, "AllowTool@cc168e8")
	if _, err := os.Stat(a); err != nil {
		t.Skip("real mods not available")
	}
	sa, err := ScanDirs([]string{a}, Options{GameVersion: "1.6"})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := ScanDirs([]string{b}, Options{GameVersion: "1.6"})
	if err != nil {
		t.Fatal(err)
	}
	r := Diff(sa.Manifest(), sb.Manifest())
	if r.Same() {
		t.Fatal("expected differences at 1.6")
	}
	var buf bytes.Buffer
	r.WriteText(&buf, "old", "new")
	t.Log(buf.String())
	if !strings.Contains(buf.String(), "WorkTypeDef HaulingUrgent has different content: in old from mod UnlimitedHugs.AllowTool, file v1.3/Defs/WorkTypeDefs/AllowToolWorkTypes.xml; in new from mod UnlimitedHugs.AllowTool, file Defs/WorkTypeDefs/AllowToolWorkTypes.xml.") {
		t.Errorf("report lacks the WorkTypeDef change")
	}
	sb5, _ := ScanDirs([]string{b}, Options{GameVersion: "1.5"})
	sa5, _ := ScanDirs([]string{a}, Options{GameVersion: "1.5"})
	if !AllOK(Compare(sa5.Summary(), sb5.Summary())) {
		t.Errorf("1.5 databases differ")
	}
}

func TestLoadFoldersBroken(t *testing.T) {
	s := scan(t, Options{GameVersion: "1.5"}, mod("m", map[string]string{
		"LoadFolders.xml":   "<loadFolders>\n<v1.5><li>/</li>\n</loadFolders>",
		"Defs/A.xml":        defsXML(`<ThingDef><defName>A</defName></ThingDef>`),
		"1.5/Defs/B.xml":    defsXML(`<ThingDef><defName>B</defName></ThingDef>`),
		"NotNow/Defs/C.xml": defsXML(`<ThingDef><defName>C</defName></ThingDef>`),
	}))
	if len(s.Errors) != 1 || s.Errors[0].File != "LoadFolders.xml" || s.Errors[0].Line != 3 {
		t.Fatalf("errors = %v", s.Errors)
	}
	if got := defNames(s.Database("ThingDef")); got != "A,B" {
		t.Fatalf("fallback defs = %s", got)
	}
	s = scan(t, Options{GameVersion: "1.5"}, mod("m", map[string]string{
		"LoadFolders.xml":   `<loadFolders><v1.5><li>/</li><li IfModNotActive="absent.mod">NotNow</li><li>..\..\1.5</li></v1.5></loadFolders>`,
		"Defs/A.xml":        defsXML(`<ThingDef><defName>A</defName></ThingDef>`),
		"1.5/Defs/B.xml":    defsXML(`<ThingDef><defName>B</defName></ThingDef>`),
		"NotNow/Defs/C.xml": defsXML(`<ThingDef><defName>C</defName></ThingDef>`),
	}))
	if got := defNames(s.Database("ThingDef")); got != "A,B,C" || len(s.Errors) > 0 {
		t.Fatalf("defs = %s, errors %v", got, s.Errors)
	}
}
