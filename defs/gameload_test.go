package defs

import (
	"strings"
	"testing"
	"testing/fstest"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// The tests in this file pin the rules by which defs are read as the game
// reads them, each on content written for it.

func TestDuplicateInOneModFirstWins(t *testing.T) {
	// As in the game's own Core: a SoundDef defined twice in one file with
	// different values. The game keeps the first.
	body := func(first, second string) string {
		return defsXML(`<SoundDef><defName>Click</defName><volume>` + first + `</volume></SoundDef>
<SoundDef><defName>Click</defName><volume>` + second + `</volume></SoundDef>`)
	}
	s := scan(t, Options{}, mod("m", map[string]string{"Defs/Sounds.xml": body("1", "2")}))
	d := s.Database("SoundDef").Def("Click")
	if got := mustValue(t, d.Node, "volume"); got != "1" {
		t.Fatalf("kept volume %s, want the first definition's 1", got)
	}
	if d.Line != 3 {
		t.Errorf("kept def at line %d, want 3", d.Line)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Msg, "keeps the first") {
		t.Errorf("warnings = %v", s.Warnings)
	}
	// A change to the copy the game uses changes the hash; a change to the
	// skipped copy does not.
	h := func(first, second string) uint64 {
		return scan(t, Options{}, mod("m", map[string]string{"Defs/Sounds.xml": body(first, second)})).Database("SoundDef").Hash
	}
	if h("1", "2") == h("5", "2") {
		t.Error("changing the first (used) definition did not change the hash")
	}
	if h("1", "2") != h("1", "9") {
		t.Error("changing the skipped definition changed the hash")
	}
	// Across files of one mod the first file in load order wins; across
	// mods the later mod still wins.
	a := mod("a", map[string]string{
		"Defs/A.xml": defsXML(`<ThingDef><defName>X</defName><v>a1</v></ThingDef>`),
		"Defs/B.xml": defsXML(`<ThingDef><defName>X</defName><v>a2</v></ThingDef>`),
	})
	b := mod("b", map[string]string{
		"Defs/A.xml": defsXML(`<ThingDef><defName>X</defName><v>b1</v></ThingDef>`),
		"Defs/B.xml": defsXML(`<ThingDef><defName>X</defName><v>b2</v></ThingDef>`),
	})
	if got := mustValue(t, scan(t, Options{}, a).Database("ThingDef").Def("X").Node, "v"); got != "a1" {
		t.Errorf("one mod: %s, want a1", got)
	}
	if got := mustValue(t, scan(t, Options{}, a, b).Database("ThingDef").Def("X").Node, "v"); got != "b1" {
		t.Errorf("two mods: %s, want b1 (later mod, its first definition)", got)
	}
}

func TestUnresolvedParentsKept(t *testing.T) {
	files := func(label, parent string) map[string]string {
		return map[string]string{"Defs/Things.xml": defsXML(`
<ThingDef Name="MyBase" ParentName="` + parent + `" Abstract="True"><tickerType>Never</tickerType></ThingDef>
<ThingDef ParentName="MyBase"><defName>Chair</defName><label>` + label + `</label></ThingDef>
<ThingDef ParentName="` + parent + `"><defName>Table</defName></ThingDef>
<ThingDef><defName>Plain</defName></ThingDef>`)}
	}
	s := scan(t, Options{}, mod("my.mod", files("chair", "BuildingBase")))
	if len(s.Errors) > 0 {
		t.Fatalf("errors: %v", s.Errors)
	}
	db := s.Database("ThingDef")
	if got := defNames(db); got != "Chair,Plain,Table" {
		t.Fatalf("defs %s, want Chair,Plain,Table", got)
	}
	var un []string
	for _, d := range s.Unresolved {
		un = append(un, d.Name+"<"+d.UnresolvedParent)
	}
	if got := strings.Join(un, ","); got != "Chair<BuildingBase,Table<BuildingBase" {
		t.Errorf("unresolved %s", got)
	}
	if s.Complete() {
		t.Error("Complete() with unresolved parents")
	}
	chair := db.Def("Chair")
	if v := mustValue(t, chair.Node, "tickerType"); v != "Never" {
		t.Errorf("Chair did not inherit from its resolvable parent: %q", v)
	}
	if p, _ := chair.Node.Attr("ParentName"); p != "BuildingBase" {
		t.Errorf("Chair's node carries ParentName %q, want BuildingBase", p)
	}
	// The hash covers the def's own XML and the missing parent's name.
	other := scan(t, Options{}, mod("my.mod", files("armchair", "BuildingBase"))).Database("ThingDef")
	if other.Def("Chair").Hash == chair.Hash || other.Def("Table").Hash != db.Def("Table").Hash {
		t.Error("changing Chair's own XML must change its hash and only its hash")
	}
	renamed := scan(t, Options{}, mod("my.mod", files("chair", "FurnitureBase"))).Database("ThingDef")
	if renamed.Def("Table").Hash == db.Def("Table").Hash || renamed.Def("Plain").Hash != db.Def("Plain").Hash {
		t.Error("changing the missing parent's name must change the hash")
	}
	// Diff names them and is not complete.
	r := Diff(s.Manifest(), scan(t, Options{}, mod("my.mod", files("armchair", "BuildingBase"))).Manifest())
	if r.Same() || r.Complete() || len(r.Databases) != 1 || len(r.Databases[0].Changed) != 1 || r.Databases[0].Changed[0].UnresolvedA != "BuildingBase" {
		t.Fatalf("diff = %+v", r)
	}
	var out strings.Builder
	r.WriteText(&out, "A", "B")
	for _, want := range []string{"ThingDef Chair (mod my.mod, file Defs/Things.xml) has different content (its parent \"BuildingBase\" is not in the scan", "A has 2 defs whose parent is not in the scan"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	same := Diff(s.Manifest(), s.Manifest())
	if !same.Same() || same.Complete() {
		t.Errorf("identical unresolved sides: Same %v Complete %v, want true false", same.Same(), same.Complete())
	}
	out.Reset()
	same.WriteText(&out, "A", "B")
	if !strings.Contains(out.String(), "not everything could be compared") {
		t.Errorf("report:\n%s", out.String())
	}
	// With the parent's mod in the scan, everything resolves.
	core := mod("core", map[string]string{"Defs/B.xml": defsXML(`<ThingDef Name="BuildingBase" Abstract="True"><category>Building</category></ThingDef>`)})
	full := scan(t, Options{}, core, mod("my.mod", files("chair", "BuildingBase")))
	if !full.Complete() || mustValue(t, full.Database("ThingDef").Def("Chair").Node, "category") != "Building" {
		t.Errorf("with core: complete %v errors %v", full.Complete(), full.Errors)
	}
}

func TestSelfNamedDefs(t *testing.T) {
	s := scan(t, Options{}, mod("m", map[string]string{"Defs/Songs.xml": defsXML(`
<SongDef><clipPath>Songs/Ambient/Dawn</clipPath><volume>0.8</volume></SongDef>
<SongDef><clipPath>Songs\Night</clipPath></SongDef>
<SongDef><defName>Named</defName><clipPath>Songs/Other</clipPath></SongDef>
<ScatterableDef><texturePath>Things/Scatter/Rock</texturePath></ScatterableDef>
<SongDef><volume>1</volume></SongDef>
<ConceptDef><label>no name</label></ConceptDef>`)}))
	if got := defNames(s.Database("SongDef")); got != "Dawn,Named,Night" {
		t.Errorf("songs %s", got)
	}
	if got := defNames(s.Database("ScatterableDef")); got != "Scatterable_Things/Scatter/Rock" {
		t.Errorf("scatterables %s", got)
	}
	if len(s.Errors) != 2 || !strings.Contains(s.Errors[0].Msg, "SongDef has no defName") || !strings.Contains(s.Errors[1].Msg, "ConceptDef has no defName") {
		t.Errorf("errors %v: want the SongDef without clipPath and the ConceptDef", s.Errors)
	}
	if got := strings.Join(SelfNamedTypes(), ","); got != "ScatterableDef,SongDef" {
		t.Errorf("SelfNamedTypes() = %s, want the two types named above", got)
	}
}

func TestDefNameLetterCase(t *testing.T) {
	s := scan(t, Options{}, mod("old", map[string]string{"Defs/Old.xml": defsXML(`<ThingDef><DefName>OldThing</DefName></ThingDef>`)}))
	if len(s.Errors) > 0 || defNames(s.Database("ThingDef")) != "OldThing" {
		t.Fatalf("errors %v defs %s", s.Errors, defNames(s.Database("ThingDef")))
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Msg, "<DefName> is read as <defName>") {
		t.Errorf("warnings %v", s.Warnings)
	}
}

func TestEncodings(t *testing.T) {
	const body = `<Defs>
  <ThingDef><defName>Cafe</defName><label>café crème à 5 €</label><description>Ærø — „quoted“</description></ThingDef>
</Defs>
`
	utf8Body := `<?xml version="1.0" encoding="utf-8"?>` + "\n" + body
	want := scan(t, Options{}, mod("m", map[string]string{"Defs/X.xml": utf8Body})).Database("ThingDef").Hash

	latin := strings.NewReplacer(" à 5 €", " à 5", " — „quoted“", "").Replace(body) // what Latin-1 can hold
	wantLatin := scan(t, Options{}, mod("m", map[string]string{"Defs/X.xml": latin})).Database("ThingDef").Hash
	iso, err := charmap.ISO8859_1.NewEncoder().String(`<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" + latin)
	if err != nil {
		t.Fatal(err)
	}
	win, err := charmap.Windows1252.NewEncoder().String(`<?xml version='1.0' encoding='windows-1252'?>` + "\n" + body)
	if err != nil {
		t.Fatal(err)
	}
	le, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(`<?xml version="1.0" encoding="utf-16"?>` + "\n" + body)
	if err != nil {
		t.Fatal(err)
	}
	be, err := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String(`<?xml version="1.0" encoding="UTF-16"?>` + "\n" + body)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, data string
		want       uint64
	}{
		{"utf-8 with BOM", "\xef\xbb\xbf" + utf8Body, want},
		{"iso-8859-1", iso, wantLatin},
		{"windows-1252", win, want},
		{"utf-16le BOM", le, want},
		{"utf-16be BOM", be, want},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name != "utf-8 with BOM" && strings.Contains(c.data, "é") {
				t.Fatal("test data is still UTF-8")
			}
			s := scan(t, Options{}, mod("m", map[string]string{"Defs/X.xml": c.data}))
			if len(s.Errors) > 0 {
				t.Fatalf("errors %v", s.Errors)
			}
			if got := s.Database("ThingDef").Hash; got != c.want {
				t.Errorf("hash %016x, want %016x (the same defs in UTF-8)", got, c.want)
			}
		})
	}
	bad := scan(t, Options{}, mod("m", map[string]string{"Defs/X.xml": `<?xml version="1.0" encoding="utf-16"?><Defs/>`}))
	if len(bad.Errors) != 1 || !strings.Contains(bad.Errors[0].Msg, "byte-order mark") {
		t.Errorf("UTF-16 declared on UTF-8 bytes: %v", bad.Errors)
	}
}

func TestModWithoutPackageID(t *testing.T) {
	old := ModSource{Dir: "/mods/My Old Mod!", FS: fstest.MapFS{
		"About/About.xml": {Data: []byte("<ModMetaData><name>Old</name></ModMetaData>")},
		"Defs/X.xml":      {Data: []byte(defsXML(`<ThingDef><defName>Old</defName></ThingDef>`))},
	}}
	s := scan(t, Options{}, old, mod("new.mod", nil))
	if got := s.Mods[0].PackageID; got != "legacy.my_old_mod_" || !s.Mods[0].DerivedID {
		t.Errorf("derived id %q (derived %v)", got, s.Mods[0].DerivedID)
	}
	if s.Database("ThingDef").Def("Old").Mod != "legacy.my_old_mod_" {
		t.Error("def not attributed to the derived id")
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].String(), `using "legacy.my_old_mod_", derived from its folder name`) {
		t.Errorf("warnings %v", s.Warnings)
	}
	// Stable: the same folder gives the same id on every scan.
	if again := scan(t, Options{}, old); again.Mods[0].PackageID != s.Mods[0].PackageID {
		t.Error("derived id not stable")
	}
}

func TestLoadFoldersDotDot(t *testing.T) {
	m := mod("m", map[string]string{
		"LoadFolders.xml":      `<loadFolders><v1.6><li>/</li><li>../../elsewhere</li></v1.6></loadFolders>`,
		"elsewhere/Defs/X.xml": defsXML(`<ThingDef><defName>Inside</defName></ThingDef>`),
	})
	s := scan(t, Options{}, m)
	if got := defNames(s.Database("ThingDef")); got != "Inside" {
		t.Errorf("defs %s", got)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].String(), `LoadFolders.xml:1: folder "../../elsewhere" goes up with ".."`) {
		t.Errorf("warnings %v", s.Warnings)
	}
	if strings.Join(s.Mods[0].Folders, ",") != ".,elsewhere" {
		t.Errorf("folders %v", s.Mods[0].Folders)
	}
}

func TestCheckGameVersion(t *testing.T) {
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"1.6", true}, {"1.5", true}, {"1.10", true}, {"1.5.4104", true},
		{"abc", false}, {"1,5", false}, {"1", false}, {"", false}, {"1.", false}, {".5", false},
		{"v1.5", false}, {"1.-5", false}, {"1.+5", false}, {"1.5.6.7.8", false}, {" 1.5", false},
	} {
		if err := CheckGameVersion(c.v); (err == nil) != c.ok {
			t.Errorf("CheckGameVersion(%q) = %v, want ok %v", c.v, err, c.ok)
		}
	}
	if err := CheckGameVersion(DefaultGameVersion); err != nil {
		t.Error(err)
	}
}

func TestOnlyVersionFolders(t *testing.T) {
	// A mod with only version folders is read with the default game
	// version (the newest), not scanned as empty.
	m := mod("m", map[string]string{
		"1.5/Defs/X.xml": defsXML(`<ThingDef><defName>X</defName><v>1.5</v></ThingDef>`),
		"1.6/Defs/X.xml": defsXML(`<ThingDef><defName>X</defName><v>1.6</v></ThingDef>`),
	})
	s := scan(t, Options{}, m)
	if s.GameVersion != DefaultGameVersion || mustValue(t, s.Database("ThingDef").Def("X").Node, "v") != "1.6" {
		t.Errorf("game version %q, defs %v", s.GameVersion, s.Databases)
	}
	if got := strings.Join(s.Mods[0].Folders, ","); got != ".,1.6" {
		t.Errorf("folders %s", got)
	}
}

func TestLoadFoldersNameAnyCase(t *testing.T) {
	m := mod("m", map[string]string{
		"loadFolders.xml":  `<loadFolders><v1.6><li>/</li><li>Extra</li></v1.6></loadFolders>`,
		"Extra/Defs/X.xml": defsXML(`<ThingDef><defName>Extra</defName></ThingDef>`),
		"1.6/Defs/Y.xml":   defsXML(`<ThingDef><defName>NotListed</defName></ThingDef>`),
	})
	if got := defNames(scan(t, Options{}, m).Database("ThingDef")); got != "Extra" {
		t.Errorf("defs %s, want Extra (from loadFolders.xml)", got)
	}
}

func TestLoadFoldersFallbacks(t *testing.T) {
	base := map[string]string{
		"Defs/R.xml":        defsXML(`<ThingDef><defName>Root</defName></ThingDef>`),
		"Common/Defs/C.xml": defsXML(`<ThingDef><defName>Common</defName></ThingDef>`),
		"1.5/Defs/F.xml":    defsXML(`<ThingDef><defName>F15</defName></ThingDef>`),
		"1.6/Defs/F.xml":    defsXML(`<ThingDef><defName>F16</defName></ThingDef>`),
		"Def/Defs/D.xml":    defsXML(`<ThingDef><defName>FromDefault</defName></ThingDef>`),
	}
	for _, c := range []struct {
		name, loadFolders, want string
	}{
		{"exact", `<loadFolders><v1.6><li>/</li><li>1.6</li></v1.6><default><li>Def</li></default></loadFolders>`, "F16,Root"},
		{"exact entry without folders: highest below, which is itself", `<loadFolders><v1.6></v1.6><v1.5><li>1.5</li></v1.5></loadFolders>`, ""},
		{"no entry for the version: highest below", `<loadFolders><v1.7><li>1.6</li></v1.7><v1.5><li>1.5</li></v1.5><v1.4><li>/</li></v1.4></loadFolders>`, "F15"},
		{"no version entry: default", `<loadFolders><v1.7><li>1.6</li></v1.7><default><li>Def</li></default></loadFolders>`, "FromDefault"},
		{"nothing usable: the rule without LoadFolders.xml", `<loadFolders><v1.7><li>1.6</li></v1.7></loadFolders>`, "Common,F16,Root"},
		{"every folder inactive: nothing", `<loadFolders><v1.6><li IfModActive="not.here">1.5</li></v1.6></loadFolders>`, ""},
	} {
		files := map[string]string{"LoadFolders.xml": c.loadFolders}
		for k, v := range base {
			files[k] = v
		}
		got := ""
		if db := scan(t, Options{}, mod("m", files)).Database("ThingDef"); db != nil {
			got = defNames(db)
		}
		if got != c.want {
			t.Errorf("%s: defs %s, want %s", c.name, got, c.want)
		}
	}
}

func TestDuplicateAcrossFoldersVersionFolderFirst(t *testing.T) {
	// The game reads a mod's highest-priority folder first, so of two
	// defs of one name in different files, the version folder's is kept.
	s := scan(t, Options{}, mod("m", map[string]string{
		"Defs/A.xml":     defsXML(`<ThingDef><defName>X</defName><v>root</v></ThingDef>`),
		"1.6/Defs/B.xml": defsXML(`<ThingDef><defName>X</defName><v>1.6</v></ThingDef>`),
	}))
	if got := mustValue(t, s.Database("ThingDef").Def("X").Node, "v"); got != "1.6" {
		t.Errorf("kept the %s definition, want the version folder's", got)
	}
}

func TestReadFileBounded(t *testing.T) {
	fsys := fstest.MapFS{"small": {Data: []byte("12345")}, "big": {Data: []byte(strings.Repeat("x", 100))}, "empty": {}}
	for _, c := range []struct {
		name string
		ok   bool
	}{{"small", true}, {"empty", true}, {"big", false}, {"missing", false}} {
		b, err := readFileBounded(fsys, c.name, 10)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.ok && string(b) != string(fsys[c.name].Data) {
			t.Errorf("%s: read %q", c.name, b)
		}
	}
}

func TestCoreNeverOverrides(t *testing.T) {
	core := mod("Ludeon.RimWorld", map[string]string{"Defs/A.xml": defsXML(`<ThingDef><defName>X</defName><v>core</v></ThingDef>`)})
	other := mod("some.mod", map[string]string{"Defs/A.xml": defsXML(`<ThingDef><defName>X</defName><v>mod</v></ThingDef>`)})
	for _, order := range [][]ModSource{{core, other}, {other, core}} {
		s := scan(t, Options{}, order...)
		if got := mustValue(t, s.Database("ThingDef").Def("X").Node, "v"); got != "mod" {
			t.Errorf("load order %s, %s: X from %s, want the mod's", order[0].Dir, order[1].Dir, got)
		}
	}
}
