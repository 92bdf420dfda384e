package defs

import (
	"slices"
	"testing"
)

// TestMayRequire checks MayRequire and MayRequireAnyOf on defs and list
// items against the active set, as the game applies them.
func TestMayRequire(t *testing.T) {
	const biotech = "Ludeon.RimWorld.Biotech"
	tests := []struct {
		name     string
		opts     Options
		xml      string
		loaded   bool     // Widget is in the database
		items    []string // Widget's recipe list items, when loaded
		unknown  []string // Widget.Undecided
		skipped  int      // len(Set.Skipped)
		dropped  int      // Set.SkippedItems
		sameHash bool     // Widget hashes as the plain def with items
	}{
		{name: "def, mod active", opts: Options{Active: []string{biotech}, ActiveComplete: true},
			xml: `<ThingDef MayRequire="Ludeon.RimWorld.Biotech"><defName>Widget</defName></ThingDef>`, loaded: true, sameHash: true},
		{name: "def, mod active in other case and spaced", opts: Options{Active: []string{"LUDEON.RIMWORLD.BIOTECH"}, ActiveComplete: true},
			xml: `<ThingDef MayRequire=" ludeon.rimworld.biotech , test.a"><defName>Widget</defName></ThingDef>`, loaded: true, sameHash: true},
		{name: "def, steam copy active", opts: Options{Active: []string{"ludeon.rimworld.biotech_steam"}, ActiveComplete: true},
			xml: `<ThingDef MayRequire="Ludeon.RimWorld.Biotech"><defName>Widget</defName></ThingDef>`, loaded: true, sameHash: true},
		{name: "def, asks for the steam copy by name", opts: Options{Active: []string{biotech}, ActiveComplete: true},
			xml: `<ThingDef MayRequire="Ludeon.RimWorld.Biotech_steam"><defName>Widget</defName></ThingDef>`, skipped: 1},
		{name: "def, mod inactive", opts: Options{ActiveComplete: true},
			xml: `<ThingDef MayRequire="Ludeon.RimWorld.Biotech"><defName>Widget</defName></ThingDef>`, skipped: 1},
		{name: "def, one of two inactive", opts: Options{Active: []string{biotech}, ActiveComplete: true},
			xml: `<ThingDef MayRequire="Ludeon.RimWorld.Biotech,Ludeon.RimWorld.Royalty"><defName>Widget</defName></ThingDef>`, skipped: 1},
		{name: "def, any of two", opts: Options{Active: []string{biotech}, ActiveComplete: true},
			xml: `<ThingDef MayRequireAnyOf="Ludeon.RimWorld.Royalty,Ludeon.RimWorld.Biotech"><defName>Widget</defName></ThingDef>`, loaded: true, sameHash: true},
		{name: "def, none of two", opts: Options{ActiveComplete: true},
			xml: `<ThingDef MayRequireAnyOf="Ludeon.RimWorld.Royalty,Ludeon.RimWorld.Biotech"><defName>Widget</defName></ThingDef>`, skipped: 1},
		{name: "def, scanned mod", opts: Options{},
			xml: `<ThingDef MayRequire="test.a"><defName>Widget</defName></ThingDef>`, loaded: true, sameHash: true},
		{name: "def, empty MayRequire names no mod", opts: Options{ActiveComplete: true},
			xml: `<ThingDef MayRequire=""><defName>Widget</defName></ThingDef>`, skipped: 1},
		{name: "def, unknown", opts: Options{},
			xml: `<ThingDef MayRequire="Ludeon.RimWorld.Biotech"><defName>Widget</defName></ThingDef>`, loaded: true, unknown: []string{"ludeon.rimworld.biotech"}},
		{name: "def, unknown but another condition fails", opts: Options{},
			xml: `<ThingDef MayRequire="Ludeon.RimWorld.Biotech,"><defName>Widget</defName></ThingDef>`, skipped: 1},
		{name: "items", opts: Options{Active: []string{biotech}, ActiveComplete: true},
			xml:    `<ThingDef><defName>Widget</defName><recipes><li>A</li><li MayRequire="Ludeon.RimWorld.Biotech">B</li><li MayRequire="Ludeon.RimWorld.Royalty">C</li><li MayRequireAnyOf="Ludeon.RimWorld.Royalty, Ludeon.RimWorld.Biotech">D</li><li MayRequire="">E</li></recipes></ThingDef>`,
			loaded: true, items: []string{"A", "B", "D", "E"}, dropped: 1, sameHash: true},
		{name: "items, unknown", opts: Options{},
			xml:    `<ThingDef><defName>Widget</defName><recipes><li>A</li><li MayRequire="Ludeon.RimWorld.Royalty">C</li></recipes></ThingDef>`,
			loaded: true, items: []string{"A", "C"}, unknown: []string{"ludeon.rimworld.royalty"}},
		{name: "inherited items", opts: Options{ActiveComplete: true},
			xml:    `<ThingDef Name="Base" Abstract="True"><recipes><li MayRequire="Ludeon.RimWorld.Royalty">C</li><li>A</li></recipes></ThingDef><ThingDef ParentName="Base"><defName>Widget</defName><recipes><li>B</li></recipes></ThingDef>`,
			loaded: true, items: []string{"A", "B"}, dropped: 1},
		// The game registers parents before it skips defs, looking only at
		// MayRequire (see TestGatedParent for a parent it does not take).
		{name: "parent skipped by MayRequireAnyOf is still a parent", opts: Options{ActiveComplete: true},
			xml:    `<ThingDef Name="Base" MayRequireAnyOf="Ludeon.RimWorld.Royalty"><defName>Crown</defName><recipes><li>A</li></recipes></ThingDef><ThingDef ParentName="Base"><defName>Widget</defName></ThingDef>`,
			loaded: true, items: []string{"A"}, skipped: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := scan(t, tc.opts, mod("test.a", map[string]string{"Defs/Things.xml": defsXML(tc.xml)}))
			if len(s.Errors) > 0 {
				t.Fatalf("errors: %v", s.Errors)
			}
			w := s.Database("ThingDef").Def("Widget")
			if (w != nil) != tc.loaded {
				t.Fatalf("Widget loaded = %v, want %v", w != nil, tc.loaded)
			}
			if len(s.Skipped) != tc.skipped || s.SkippedItems != tc.dropped {
				t.Errorf("skipped %d defs %v and %d items, want %d and %d", len(s.Skipped), s.Skipped, s.SkippedItems, tc.skipped, tc.dropped)
			}
			if w == nil {
				return
			}
			var items []string
			for _, li := range w.Node.Child("recipes").childrenOrNil() {
				items = append(items, li.Text)
			}
			if !slices.Equal(items, tc.items) {
				t.Errorf("items %v, want %v", items, tc.items)
			}
			if !slices.Equal(w.Undecided, tc.unknown) || (len(tc.unknown) > 0) != (len(s.Undecided) == 1) || s.Complete() != (len(tc.unknown) == 0) {
				t.Errorf("undecided %v (set %d, complete %v), want %v", w.Undecided, len(s.Undecided), s.Complete(), tc.unknown)
			}
			if tc.sameHash {
				plain := `<ThingDef><defName>Widget</defName></ThingDef>`
				if tc.items != nil {
					plain = `<ThingDef><defName>Widget</defName><recipes>`
					for _, it := range tc.items {
						plain += "<li>" + it + "</li>"
					}
					plain += `</recipes></ThingDef>`
				}
				p := scan(t, Options{}, mod("test.a", map[string]string{"Defs/Things.xml": defsXML(plain)})).Database("ThingDef").Def("Widget")
				if p.Hash != w.Hash {
					t.Errorf("Widget hashes %x, the same def as the game loads it %x:\n%s", w.Hash, p.Hash, w.Node)
				}
			}
		})
	}
}

// TestMayRequireHidesOverride is case 10 of the content bugs at the level
// of the databases the host compares: a later mod's Widget that needs
// Biotech replaces the first mod's only when Biotech is active.
func TestMayRequireHidesOverride(t *testing.T) {
	sides := func(mass string, opts Options) *Set {
		return scan(t, opts,
			mod("test.one", map[string]string{"Defs/Things.xml": defsXML(`<ThingDef><defName>Widget</defName><mass>` + mass + `</mass></ThingDef>`)}),
			mod("test.two", map[string]string{"Defs/Things.xml": defsXML(`<ThingDef MayRequire="Ludeon.RimWorld.Biotech"><defName>Widget</defName><mass>9</mass></ThingDef>`)}))
	}
	without := Options{ActiveComplete: true}
	if st := Compare(sides("1", without).Summary(), sides("2", without).Summary()); AllOK(st) {
		t.Error("without Biotech the first mod's Widgets are loaded, and they differ")
	}
	with := Options{Active: []string{"Ludeon.RimWorld.Biotech"}, ActiveComplete: true}
	a, b := sides("1", with), sides("2", with)
	if st := Compare(a.Summary(), b.Summary()); !AllOK(st) {
		t.Errorf("with Biotech the second mod's Widget is loaded on both sides: %v", st)
	}
	if w := a.Database("ThingDef").Def("Widget"); w == nil || w.Mod != "test.two" {
		t.Errorf("Widget = %+v, want test.two's", w)
	}
	r := Diff(sides("1", Options{}).Manifest(), sides("2", Options{}).Manifest())
	if !r.Same() || r.Complete() || len(r.UndecidedA) != 1 || r.UndecidedA[0].Mods[0] != "ludeon.rimworld.biotech" {
		t.Errorf("unknown state: report %+v, want same but not complete, naming Biotech", r)
	}
}

func (n *Node) childrenOrNil() []*Node {
	if n == nil {
		return nil
	}
	return n.Children
}
