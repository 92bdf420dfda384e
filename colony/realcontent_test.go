package colony

import (
	"strings"
	"testing"
)

// Content written the way the real game's defs are: categories and def
// types the simulation does not know, pawn kinds without its fields,
// fractions where it uses percentages.
func TestReadContentAcceptsRealContent(t *testing.T) {
	files := map[string]string{
		"T.xml": `<Defs>
<TerrainDef><defName>Soil</defName><fertility>1.4</fertility><pathCost>2</pathCost></TerrainDef>
<TerrainDef><defName>WaterDeep</defName><passability>Impassable</passability><pathCost>300</pathCost></TerrainDef>
</Defs>`,
		"K.xml": `<Defs><PawnKindDef><defName>Villager</defName><race>Human</race><combatPower>40</combatPower></PawnKindDef></Defs>`,
		"Th.xml": `<Defs>
<ThingDef><defName>Mote_Smoke</defName><category>Mote</category><altitudeLayer>MoteOverhead</altitudeLayer></ThingDef>
<ThingDef><defName>Human</defName><category>Pawn</category><race><body>Human</body></race></ThingDef>
<ThingDef><defName>Apparel_Parka</defName><category>Item</category><stackLimit>1</stackLimit><apparel><bodyPartGroups><li>Torso</li></bodyPartGroups></apparel></ThingDef>
<ThingDef><defName>Filth_Dirt</defName><category>Filth</category></ThingDef>
<ThingDef><defName>NoCategory</defName></ThingDef>
<ThingDef><defName>Plant_Potato</defName><category>Plant</category><plant><growDays>5.8</growDays></plant><harvestedThingDef>Mote_Smoke</harvestedThingDef></ThingDef>
<ThingDef><defName>Wall</defName><category>Building</category><passability>Impassable</passability><storageCapacity>5</storageCapacity></ThingDef>
<ThingDef><defName>Odd</defName><category>Item</category><stackLimit>many</stackLimit><hitPoints>0.5</hitPoints></ThingDef>
</Defs>`,
		"F.xml": `<Defs><FleckDef><defName>DustPuff</defName></FleckDef><SongDef><clipPath>Songs/Dawn</clipPath></SongDef></Defs>`,
	}
	set := scanMap(t, files)
	if len(set.Errors) > 0 {
		t.Fatalf("scan errors: %v", set.Errors)
	}
	c, rep, err := ReadContent(set)
	if err != nil {
		t.Fatal(err)
	}
	names := func(n int, name func(int) string) string {
		var out []string
		for i := range n {
			out = append(out, name(i))
		}
		return strings.Join(out, ",")
	}
	if got := names(len(c.Things), func(i int) string { return c.Things[i].Name }); got != "Apparel_Parka,Odd,Plant_Potato,Wall" {
		t.Errorf("simulated things %s", got)
	}
	if c.Terrains[0].Fertility != 140 || c.Terrains[1].PathCost != 200 || c.Terrains[1].Passable {
		t.Errorf("terrains %+v", c.Terrains)
	}
	if k := c.PawnKinds[0]; k.Name != "Villager" || k.MoveTicks != 12 || k.StarveAt != 160 || k.HungryAt != 40 {
		t.Errorf("pawn kind %+v", k)
	}
	potato := c.Things[c.ThingIndex("Plant_Potato")]
	if potato.Product != "" || potato.GrowTicks != defaultGrowTicks {
		t.Errorf("potato %+v", potato)
	}
	if w := c.Things[c.ThingIndex("Wall")]; !w.Impassable || w.Storage != 0 {
		t.Errorf("wall %+v", w)
	}
	if o := c.Things[c.ThingIndex("Odd")]; o.StackLimit != 1 || o.HitPoints != 1 {
		t.Errorf("odd %+v", o)
	}
	if rep.Carried["ThingDef"] != 4 || rep.Carried["FleckDef"] != 1 || rep.Carried["SongDef"] != 1 || rep.Simulated["ThingDef"] != 4 || rep.Simulated["PawnKindDef"] != 1 {
		t.Errorf("report carried %v simulated %v", rep.Carried, rep.Simulated)
	}
	for _, want := range []string{
		"WaterDeep", "<pathCost> 300 is outside 0..200",
		"Plant_Potato", "<harvestedThingDef> Mote_Smoke is not a simulated item or food",
		`<stackLimit> "many" is not a number`,
		"an impassable building cannot store things",
	} {
		if !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
			t.Errorf("notes lack %q:\n%s", want, strings.Join(rep.Notes, "\n"))
		}
	}
	// The content runs: a world is generated and simulated.
	w, err := New(c, Config{Maps: 1, Width: 24, Height: 24, PawnsPerMap: 3, ThingsPerMap: 20})
	if err != nil {
		t.Fatal(err)
	}
	for range 500 {
		w.Step()
	}
}
