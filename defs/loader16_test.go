package defs

import (
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
	if w1.UnresolvedParent != "LaterBase" {
		t.Errorf("UnresolvedParent = %q, want LaterBase (the game finds no parent)", w1.UnresolvedParent)
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
