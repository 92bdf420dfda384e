package defs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

const realMods = "../../shared/testdata/real-mods"

// mod builds an in-memory mod with the given packageId and extra files.
func mod(id string, files map[string]string) ModSource {
	m := fstest.MapFS{
		"About/About.xml": {Data: []byte("<ModMetaData><packageId>" + id + "</packageId><name>" + id + " name</name><modVersion>1.0</modVersion></ModMetaData>")},
	}
	for p, s := range files {
		m[p] = &fstest.MapFile{Data: []byte(s)}
	}
	return ModSource{FS: m, Dir: id}
}

func scan(t *testing.T, opts Options, mods ...ModSource) *Set {
	t.Helper()
	s, err := ScanFS(mods, opts)
	if err != nil {
		t.Fatalf("ScanFS: %v", err)
	}
	return s
}

func defsXML(body string) string {
	return `<?xml version="1.0" encoding="utf-8"?>` + "\n<Defs>\n" + body + "\n</Defs>\n"
}

func TestBasicScan(t *testing.T) {
	s := scan(t, Options{}, mod("a.one", map[string]string{
		"Defs/Things.xml": defsXML(`
  <ThingDef Name="BaseThing" Abstract="True"><category>Item</category><stats><li>A</li></stats></ThingDef>
  <ThingDef ParentName="BaseThing"><defName>Steel</defName><label>steel</label></ThingDef>
  <ThingDef><defName>Wood</defName></ThingDef>
  <RecipeDef><defName>Make</defName></RecipeDef>`),
	}))
	if len(s.Errors) > 0 {
		t.Fatalf("errors: %v", s.Errors)
	}
	sum := s.Summary()
	if len(sum) != 2 || sum[0].Type != "RecipeDef" || sum[0].Count != 1 || sum[1].Type != "ThingDef" || sum[1].Count != 2 {
		t.Fatalf("summary = %+v", sum)
	}
	steel := s.Database("ThingDef").Def("Steel")
	if steel == nil || steel.Mod != "a.one" || steel.File != "Defs/Things.xml" || steel.Line != 5 {
		t.Fatalf("steel = %+v", steel)
	}
	if v, _ := steel.Node.Value("category"); v != "Item" {
		t.Fatalf("inherited category = %q", v)
	}
	if st := Compare(sum, sum); !AllOK(st) {
		t.Fatalf("self compare: %v", st)
	}
}

func TestRealMods(t *testing.T) {
	entries, err := os.ReadDir(realMods)
	if err != nil {
		t.Skipf("real mods not available: %v", err)
	}
	for _, gv := range []string{"", "1.3", "1.4", "1.5", "1.6"} {
		var sums [][]Summary
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			s, err := ScanDirs([]string{filepath.Join(realMods, e.Name())}, Options{GameVersion: gv})
			if err != nil {
				t.Fatalf("%s %s: %v", gv, e.Name(), err)
			}
			if len(s.Errors) > 0 {
				t.Errorf("%s %s: errors: %v", gv, e.Name(), s.Errors)
			}
			for _, w := range s.Warnings {
				t.Logf("%s %s: warning: %v", gv, e.Name(), w)
			}
			if len(s.Databases) == 0 {
				t.Errorf("%s %s: no databases", gv, e.Name())
			}
			if s.Mods[0].PackageID != "UnlimitedHugs.AllowTool" {
				t.Errorf("packageId = %q", s.Mods[0].PackageID)
			}
			var b strings.Builder
			for _, x := range s.Summary() {
				b.WriteString(x.Type + " ")
			}
			t.Logf("%s %s: %d dbs: %s", gv, e.Name(), len(s.Databases), b.String())
			sums = append(sums, s.Summary())
		}
		if len(sums) == 2 {
			st := Compare(sums[0], sums[1])
			t.Logf("game version %q: compare %v", gv, st)
		}
	}
}
