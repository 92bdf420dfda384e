package colony

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lockhost/lockhost/defs"
)

func TestDefaultContent(t *testing.T) {
	c, set, err := DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Mods) != 1 || set.Mods[0].PackageID != "lockhost.core" {
		t.Fatalf("mods = %+v, want lockhost.core", set.Mods)
	}
	if len(set.Warnings) != 0 {
		t.Errorf("warnings: %v", set.Warnings)
	}
	if n := len(c.Terrains); n < 6 || n > 10 {
		t.Errorf("%d terrains", n)
	}
	if n := len(c.Things); n < 15 || n > 25 {
		t.Errorf("%d things", n)
	}
	if n := len(c.PawnKinds); n < 2 || n > 4 {
		t.Errorf("%d pawn kinds", n)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	meal := c.Things[c.ThingIndex("MealSimple")]
	if meal.Category != CategoryFood || meal.Nutrition != 90 || meal.StackLimit != 10 {
		t.Errorf("MealSimple = %+v", meal)
	}
	// inherited through two abstract levels: CropBase -> PlantBase
	potato := c.Things[c.ThingIndex("PlantPotato")]
	if potato.Category != CategoryPlant || !potato.Sowable || potato.HitPoints != 85 || potato.Product != "RawPotatoes" {
		t.Errorf("PlantPotato = %+v", potato)
	}
	if c.ThingIndex("PlantBase") >= 0 || c.ThingIndex("NoSuchThing") >= 0 {
		t.Error("abstract or unknown def found")
	}
	// the same content scanned twice gives the same fingerprint
	c2, _, err := DefaultContent()
	if err != nil || c2.Fingerprint() != c.Fingerprint() {
		t.Fatalf("fingerprint not stable: %v", err)
	}
}

func TestFingerprint(t *testing.T) {
	a := handContent()
	b := handContent()
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("equal contents differ")
	}
	b.Things[0].Nutrition++
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("a changed nutrition keeps the fingerprint")
	}
	b = handContent()
	b.PawnKinds[0].Grazes = false
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("a changed flag keeps the fingerprint")
	}
}

func TestContentValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Content)
		want   string
	}{
		{"ok", func(c *Content) {}, ""},
		{"unsorted", func(c *Content) { c.Things[0], c.Things[1] = c.Things[1], c.Things[0] }, "sorted"},
		{"duplicate", func(c *Content) { c.Terrains[1].Name = "Rock" }, "unique"},
		{"empty name", func(c *Content) { c.PawnKinds[0].Name = "" }, "name"},
		{"no passable", func(c *Content) {
			for i := range c.Terrains {
				c.Terrains[i].Passable = false
			}
		}, "no passable terrain"},
		{"no food is fine", func(c *Content) { c.Things[0].Category = CategoryItem; c.Things[0].Nutrition = 0 }, ""},
		{"no pawn kinds", func(c *Content) { c.PawnKinds = nil }, "0 pawn kinds"},
		{"bad category", func(c *Content) { c.Things[3].Category = "Weapon" }, "category \"Weapon\""},
		{"unknown product", func(c *Content) { c.Things[1].Product = "Gold" }, "unknown Product"},
		{"negative path cost", func(c *Content) { c.Terrains[2].PathCost = -1 }, "PathCost"},
		{"huge stack", func(c *Content) { c.Things[3].StackLimit = 1 << 20 }, "StackLimit"},
		{"plant without growth", func(c *Content) { c.Things[1].GrowTicks = 0 }, "GrowTicks"},
		{"food without nutrition", func(c *Content) { c.Things[0].Nutrition = 0 }, "Nutrition"},
		{"hungry after starving", func(c *Content) { c.PawnKinds[1].HungryAt = 100 }, "HungryAt"},
		{"impassable storage", func(c *Content) { c.Things[2].Impassable = true }, "storage"},
		{"sowable item", func(c *Content) { c.Things[3].Sowable = true }, "sowable"},
		{"zero move ticks", func(c *Content) { c.PawnKinds[0].MoveTicks = 0 }, "MoveTicks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := handContent()
			tt.modify(c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if err := (*Content)(nil).Validate(); err == nil {
		t.Fatal("nil content accepted")
	}
}

const aboutXML = `<ModMetaData><packageId>test.mod</packageId><name>Test</name></ModMetaData>`

const goodTerrain = `<Defs><TerrainDef><defName>Soil</defName><fertility>100</fertility><genElevation>1000</genElevation></TerrainDef></Defs>`

const goodKinds = `<Defs><PawnKindDef><defName>Colonist</defName><moveTicks>10</moveTicks><hungerRate>3</hungerRate>
<hungryAt>40</hungryAt><starveAt>100</starveAt><maxHealth>100</maxHealth><works>true</works></PawnKindDef></Defs>`

const goodThings = `<Defs>
<ThingDef Name="PlantBase" Abstract="True"><category>Plant</category><hitPoints>50</hitPoints></ThingDef>
<ThingDef ParentName="PlantBase"><defName>PlantBush</defName><growTicks>1000</growTicks>
  <harvestedThingDef>Berries</harvestedThingDef><harvestYield>4</harvestYield></ThingDef>
<ThingDef><defName>Berries</defName><category>Food</category><stackLimit>50</stackLimit><nutrition>5</nutrition></ThingDef>
</Defs>`

func scanMap(t *testing.T, files map[string]string) *defs.Set {
	t.Helper()
	fsys := fstest.MapFS{"About/About.xml": {Data: []byte(aboutXML)}}
	for name, data := range files {
		fsys["Defs/"+name] = &fstest.MapFile{Data: []byte(data)}
	}
	set, err := defs.ScanFS([]defs.ModSource{{FS: fsys, Dir: "test"}}, defs.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestContentFromDefs(t *testing.T) {
	good := map[string]string{"T.xml": goodTerrain, "K.xml": goodKinds, "Th.xml": goodThings}
	c, err := ContentFromDefs(scanMap(t, good))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Things) != 2 || c.Things[1].Name != "PlantBush" || c.Things[1].HitPoints != 50 || c.Things[1].ProductCount != 4 {
		t.Fatalf("things = %+v", c.Things)
	}
	if _, err := New(c, Config{Maps: 1, Width: 16, Height: 16, PawnsPerMap: 3, ThingsPerMap: 20}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		file  string
		data  string
		wants []string
	}{
		{"missing nutrition", "Th.xml", strings.Replace(goodThings, "<nutrition>5</nutrition>", "", 1),
			[]string{`ThingDef "Berries"`, "<nutrition> is required", "Th.xml"}},
		{"no pawn kinds", "K.xml", "<Defs/>", []string{"no PawnKindDef"}},
		{"no passable terrain", "T.xml", strings.Replace(goodTerrain, "<fertility>", "<passability>Impassable</passability><fertility>", 1),
			[]string{"no passable terrain"}},
		{"nothing to simulate", "Th.xml", `<Defs><ThingDef><defName>Spark</defName><category>Mote</category></ThingDef></Defs>`,
			[]string{"no ThingDef of category"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range good {
				files[k] = v
			}
			files[tt.file] = tt.data
			_, err := ContentFromDefs(scanMap(t, files))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tt.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
	if _, err := ContentFromDefs(nil); err == nil {
		t.Fatal("nil set accepted")
	}
}

func TestDefaultContentFS(t *testing.T) {
	fsys := DefaultContentFS()
	about, err := fsys.Open("About/About.xml")
	if err != nil {
		t.Fatal(err)
	}
	about.Close()
	for _, dir := range []string{"Defs/TerrainDefs", "Defs/ThingDefs", "Defs/PawnKindDefs"} {
		if f, err := fsys.Open(dir); err != nil {
			t.Errorf("%s: %v", dir, err)
		} else {
			f.Close()
		}
	}
}
