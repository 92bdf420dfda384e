package defs

import (
	"slices"
	"strings"
	"testing"
)

// The tests in this file pin rules of RimWorld 1.6's loader that real
// mods rely on: LoadFolders.xml's conditions, where a parent is looked up,
// and what a MayRequire on a parent does.

// TestLoadFoldersConditions checks the three conditions the game reads on
// a LoadFolders.xml entry: IfModActive (any listed mod active),
// IfModActiveAll (every listed mod active) and IfModNotActive (no listed
// mod active), all of them met when several are given. Any other
// attribute, such as IfModNotActiveAll, is not read by the game and does
// not stop the folder from loading.
func TestLoadFoldersConditions(t *testing.T) {
	for _, c := range []struct {
		name, attrs string
		active      []string
		loaded      bool
	}{
		{"all: both active", `IfModActiveAll="a.mod, b.mod"`, []string{"a.mod", "b.mod"}, true},
		{"all: one missing", `IfModActiveAll="a.mod,not.active"`, []string{"a.mod"}, false},
		{"all: none active", `IfModActiveAll="a.mod,b.mod"`, nil, false},
		{"all: steam copy active", `IfModActiveAll="a.mod"`, []string{"A.Mod_steam"}, true},
		{"all: empty value names no active mod", `IfModActiveAll=""`, []string{"a.mod"}, false},
		{"any: one of two", `IfModActive="a.mod,not.active"`, []string{"a.mod"}, true},
		{"any: none", `IfModActive="x.mod,not.active"`, []string{"a.mod"}, false},
		{"not: none active", `IfModNotActive="x.mod,y.mod"`, []string{"a.mod"}, true},
		{"not: one active", `IfModNotActive="x.mod,a.mod"`, []string{"a.mod"}, false},
		{"all and not, both met", `IfModActiveAll="a.mod,b.mod" IfModNotActive="c.mod"`, []string{"a.mod", "b.mod"}, true},
		{"all and not, not fails", `IfModActiveAll="a.mod,b.mod" IfModNotActive="c.mod"`, []string{"a.mod", "b.mod", "c.mod"}, false},
		{"any and all, all fails", `IfModActive="a.mod" IfModActiveAll="a.mod,b.mod"`, []string{"a.mod"}, false},
		{"not-all is no condition of the game", `IfModNotActiveAll="a.mod,b.mod"`, []string{"a.mod", "b.mod"}, true},
	} {
		s := scan(t, Options{Active: c.active, ActiveComplete: true}, mod("m", map[string]string{
			"LoadFolders.xml":  `<loadFolders><v1.6><li>/</li><li ` + c.attrs + `>x</li></v1.6></loadFolders>`,
			"Defs/Root.xml":    defsXML(`<ThingDef><defName>Root</defName></ThingDef>`),
			"x/Defs/Extra.xml": defsXML(`<ThingDef><defName>Extra</defName></ThingDef>`),
		}))
		got := s.Database("ThingDef").Def("Extra") != nil
		if got != c.loaded {
			t.Errorf("%s: x/ loaded = %v, want %v (folders %v)", c.name, got, c.loaded, s.Mods[0].Folders)
		}
	}
}

// TestParentOnlyInLaterMod checks where a parent is looked up: in the
// child's own mod, else in the latest mod loaded before it, never in a mod
// loaded after it (the game logs "Could not find parent node" and loads
// the def as written). What a later mod's parent holds must not change the
// child.
func TestParentOnlyInLaterMod(t *testing.T) {
	child := mod("test.child", map[string]string{"Defs/W.xml": defsXML(`<ThingDef ParentName="LaterBase"><defName>Widget</defName></ThingDef>`)})
	parent := func(label string) ModSource {
		return mod("test.parent", map[string]string{"Defs/B.xml": defsXML(`<ThingDef Name="LaterBase" Abstract="True"><label>` + label + `</label></ThingDef>`)})
	}
	s1 := scan(t, Options{}, child, parent("old"))
	s2 := scan(t, Options{}, child, parent("new"))
	w1, w2 := s1.Database("ThingDef").Def("Widget"), s2.Database("ThingDef").Def("Widget")
	if w1.Node.Child("label") != nil {
		t.Errorf("Widget inherited from a parent in a later mod: %+v", w1.Node.Child("label"))
	}
	if w1.Hash != w2.Hash {
		t.Error("a later mod's parent changed the child's hash")
	}
	// The game finds no parent and loads Widget as written: nothing is
	// missing, the parent's name stays in the hash.
	if w1.UnresolvedParent != "" || !s1.Complete() {
		t.Errorf("UnresolvedParent = %q, complete %v; want none, true (the game loads it as written)", w1.UnresolvedParent, s1.Complete())
	}
	if p, _ := w1.Node.Attr("ParentName"); p != "LaterBase" {
		t.Errorf("Widget's node carries ParentName %q, want LaterBase", p)
	}
	if len(s1.Warnings) != 1 || !strings.Contains(s1.Warnings[0].Msg, `parent "LaterBase" is only in mod test.parent`) {
		t.Errorf("warnings = %v", s1.Warnings)
	}
	// With the same parent name in a mod before and one after, the one
	// before is used.
	early := mod("test.early", map[string]string{"Defs/B.xml": defsXML(`<ThingDef Name="LaterBase" Abstract="True"><label>early</label></ThingDef>`)})
	s3 := scan(t, Options{}, early, child, parent("late"))
	if got := mustValue(t, s3.Database("ThingDef").Def("Widget").Node, "label"); got != "early" {
		t.Errorf("label %q, want early (the mod loaded before the child)", got)
	}
}

// TestGatedParent checks a parent whose own MayRequire is not met: the
// game does not register it for inheritance (XmlInheritance.TryRegister),
// so a child finds no parent there and loads without its fields, and the
// name stays free for another parent in the same mod. MayRequireAnyOf is
// not looked at there: such a parent can still be inherited from. When
// the parent's mod is unknown, the child depends on it too.
func TestGatedParent(t *testing.T) {
	const royalty = "Ludeon.RimWorld.Royalty"
	m := mod("test.m", map[string]string{"Defs/T.xml": defsXML(`
<ThingDef Name="RoyalBase" Abstract="True" MayRequire="Ludeon.RimWorld.Royalty"><label>royal</label><size>2</size></ThingDef>
<ThingDef ParentName="RoyalBase"><defName>Throne</defName></ThingDef>
<ThingDef Name="AnyBase" Abstract="True" MayRequireAnyOf="Ludeon.RimWorld.Royalty,Ludeon.RimWorld.Biotech"><label>any</label></ThingDef>
<ThingDef ParentName="AnyBase"><defName>Stool</defName></ThingDef>`)})
	s := scan(t, Options{ActiveComplete: true}, m)
	throne := s.Database("ThingDef").Def("Throne")
	if throne == nil {
		t.Fatal("Throne not loaded")
	}
	if throne.Node.Child("label") != nil || throne.Node.Child("size") != nil {
		t.Errorf("Throne inherited from a parent whose MayRequire is not met: %v", throne.Node.Children)
	}
	if throne.UnresolvedParent != "" || !s.Complete() {
		t.Errorf("Throne.UnresolvedParent = %q, complete %v; want none, true (the game loads it as written)", throne.UnresolvedParent, s.Complete())
	}
	if !slices.ContainsFunc(s.Warnings, func(is Issue) bool {
		return strings.Contains(is.Msg, `parent "RoyalBase"`) && strings.Contains(is.Msg, "MayRequire")
	}) {
		t.Errorf("no warning about the gated parent: %v", s.Warnings)
	}
	if got := mustValue(t, s.Database("ThingDef").Def("Stool").Node, "label"); got != "any" {
		t.Errorf("Stool label %q, want any (MayRequireAnyOf does not stop inheritance)", got)
	}
	// Royalty active: inherited as usual.
	s = scan(t, Options{Active: []string{royalty}, ActiveComplete: true}, m)
	if got := mustValue(t, s.Database("ThingDef").Def("Throne").Node, "label"); got != "royal" {
		t.Errorf("with Royalty: label %q, want royal", got)
	}
	// Royalty unknown: the child is kept as resolved but is undecided.
	s = scan(t, Options{}, m)
	throne = s.Database("ThingDef").Def("Throne")
	if !slices.Equal(throne.Undecided, []string{"ludeon.rimworld.royalty"}) {
		t.Errorf("Royalty unknown: Throne.Undecided = %v, want [ludeon.rimworld.royalty]", throne.Undecided)
	}
	// A gated parent does not take its name: a second parent of that name
	// in the same mod is used.
	m2 := mod("test.m", map[string]string{"Defs/T.xml": defsXML(`
<ThingDef Name="Base" Abstract="True" MayRequire="Ludeon.RimWorld.Royalty"><label>royal</label></ThingDef>
<ThingDef Name="Base" Abstract="True"><label>plain</label></ThingDef>
<ThingDef ParentName="Base"><defName>Chair</defName></ThingDef>`)})
	s = scan(t, Options{ActiveComplete: true}, m2)
	if got := mustValue(t, s.Database("ThingDef").Def("Chair").Node, "label"); got != "plain" {
		t.Errorf("Chair label %q, want plain (the gated parent is not registered)", got)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings = %v, want none", s.Warnings)
	}
}

// TestFileOrderAsTheGame checks the order in which a mod's files are
// read within one load folder, which decides the first of two defs of one
// name: the game lists a folder's own files before those of its
// subfolders (depth first) and names in NTFS order, letter case ignored.
func TestFileOrderAsTheGame(t *testing.T) {
	files := map[string]string{}
	for _, p := range []string{"Defs/Royalty/Crates.xml", "Defs/Things.xml", "Defs/a.xml", "Defs/B.xml", "Defs/Royalty/Sub/Deep.xml", "Defs/Royalty/z.xml", "Defs/_x.xml"} {
		files[p] = defsXML(`<ThingDef><defName>X</defName></ThingDef>`)
	}
	got, err := listDefFiles(mod("m", files).FS, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got {
		paths = append(paths, f.Path)
	}
	want := []string{"Defs/a.xml", "Defs/B.xml", "Defs/Things.xml", "Defs/_x.xml", "Defs/Royalty/Crates.xml", "Defs/Royalty/z.xml", "Defs/Royalty/Sub/Deep.xml"}
	if !slices.Equal(paths, want) {
		t.Errorf("order %v,\nwant  %v", paths, want)
	}
	// A plain Crate in Defs/ and a Royalty-only one in a subfolder: the
	// plain one is the mod's first, so it is loaded whatever Royalty is,
	// and nothing is undecided.
	s := scan(t, Options{}, mod("m", map[string]string{
		"Defs/Royalty/Crates.xml": defsXML(crate(royalGate, "royal")),
		"Defs/Things.xml":         defsXML(crate("", "plain")),
	}))
	c := s.Database("ThingDef").Def("Crate")
	if got := mustValue(t, c.Node, "label"); got != "plain" || len(s.Undecided) != 0 {
		t.Errorf("Crate label %q, undecided %d; want plain, 0", got, len(s.Undecided))
	}
}

// TestSameFileInTwoLoadFolders checks which of a mod's files the game
// reads when two load folders hold a file at the same path relative to the
// folder. The game (DirectXmlLoader.XmlAssetsInModFolder) keys the files
// by that relative path in a dictionary with the default, case-sensitive
// string comparer, visiting the highest-priority folder first: an equal
// path hides the lower folder's file, a path that differs only in letter
// case is another file and both are read.
func TestSameFileInTwoLoadFolders(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"same path: the version folder's hides the root's",
			[]string{"Defs/Things.xml", "1.6/Defs/Things.xml"},
			[]string{"1.6/Defs/Things.xml"}},
		{"file name differs in letter case: both read",
			[]string{"Defs/Things.xml", "1.6/Defs/things.xml"},
			[]string{"1.6/Defs/things.xml", "Defs/Things.xml"}},
		{"subfolder name differs in letter case: both read",
			[]string{"Defs/Royalty/Crates.xml", "1.6/Defs/royalty/Crates.xml"},
			[]string{"1.6/Defs/royalty/Crates.xml", "Defs/Royalty/Crates.xml"}},
		{"extension differs in letter case: both read",
			[]string{"Defs/Things.xml", "1.6/Defs/Things.XML"},
			[]string{"1.6/Defs/Things.XML", "Defs/Things.xml"}},
		{"two names differing in case in one folder: both read",
			[]string{"Defs/Things.xml", "Defs/things.xml"},
			[]string{"Defs/Things.xml", "Defs/things.xml"}},
	} {
		files := map[string]string{}
		for _, p := range c.files {
			files[p] = defsXML(`<ThingDef><defName>X</defName></ThingDef>`)
		}
		got, err := listDefFiles(mod("m", files).FS, []string{".", "1.6"})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var paths []string
		for _, f := range got {
			paths = append(paths, f.Path)
		}
		if !slices.Equal(paths, c.want) {
			t.Errorf("%s: read %v, want %v", c.name, paths, c.want)
		}
	}
}

// TestParentTheGameDoesNotUse checks how a diff answers for a child whose
// parent is in the scan but where the game does not use it: only in a mod
// loaded after the child's, or with a MayRequire that is not met. The
// game then loads the child as written on both sides, whatever that
// parent holds: the sides are the same and the answer is complete (exit 0
// of "defs diff"). The answer stays incomplete only where it can turn on
// something outside the scan: a parent in no scanned mod, on either side.
func TestParentTheGameDoesNotUse(t *testing.T) {
	child := mod("test.child", map[string]string{"Defs/W.xml": defsXML(`<ThingDef ParentName="LaterBase"><defName>Widget</defName></ThingDef>`)})
	later := func(label string) ModSource {
		return mod("test.parent", map[string]string{"Defs/B.xml": defsXML(`<ThingDef Name="LaterBase" Abstract="True"><label>` + label + `</label></ThingDef>`)})
	}
	gated := func(label string) ModSource {
		return mod("test.gated", map[string]string{"Defs/T.xml": defsXML(`
<ThingDef Name="RoyalBase" Abstract="True" MayRequire="Ludeon.RimWorld.Royalty"><label>` + label + `</label></ThingDef>
<ThingDef ParentName="RoyalBase"><defName>Throne</defName></ThingDef>`)})
	}
	gatedLater := func(label string) ModSource {
		return mod("test.gatedlater", map[string]string{"Defs/B.xml": defsXML(`<ThingDef Name="LaterBase" Abstract="True" MayRequire="Ludeon.RimWorld.Royalty"><label>` + label + `</label></ThingDef>`)})
	}
	orphan := mod("test.orphan", map[string]string{"Defs/O.xml": defsXML(`<ThingDef ParentName="Nowhere"><defName>Orphan</defName></ThingDef>`)})
	declared := Options{ActiveComplete: true}
	for _, c := range []struct {
		name           string
		opts           Options
		a, b           []ModSource
		same, complete bool
	}{
		{"parent only in a later mod, different on the sides", Options{}, []ModSource{child, later("old")}, []ModSource{child, later("new")}, true, true},
		{"parent only in a later mod, and the mods declared", declared, []ModSource{child, later("old")}, []ModSource{child, later("new")}, true, true},
		{"parent only in a later mod, its MayRequire not met", declared, []ModSource{child, gatedLater("old")}, []ModSource{child, gatedLater("new")}, true, true},
		{"parent's MayRequire not met, parent different on the sides", declared, []ModSource{gated("royal")}, []ModSource{gated("regal")}, true, true},
		{"parent's MayRequire on an undeclared mod, same sides", Options{}, []ModSource{gated("royal")}, []ModSource{gated("royal")}, true, true},
		{"parent's MayRequire on an undeclared mod, different parents", Options{}, []ModSource{gated("royal")}, []ModSource{gated("regal")}, false, false},
		{"parent in no scanned mod", Options{}, []ModSource{orphan}, []ModSource{orphan}, true, false},
		{"parent in a later mod on A, in none on B", Options{}, []ModSource{child, later("old")}, []ModSource{child}, false, false},
	} {
		scanSide := func(opts Options, mods []ModSource) *Set {
			s := scan(t, opts, mods...)
			if len(s.Errors) > 0 {
				t.Fatalf("%s: errors %v", c.name, s.Errors)
			}
			return s
		}
		r, err := DecideDiff(DiffSets(scanSide(c.opts, c.a), scanSide(c.opts, c.b)), func(on, off []string) (*Report, error) {
			opts := c.opts
			opts.Active, opts.Inactive = on, off
			return DiffSets(scanSide(opts, c.a), scanSide(opts, c.b)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.Same() != c.same || r.Complete() != c.complete {
			var b strings.Builder
			r.WriteText(&b, "A", "B")
			t.Errorf("%s: same %v, complete %v; want %v, %v\n%s", c.name, r.Same(), r.Complete(), c.same, c.complete, b.String())
		}
	}
}
