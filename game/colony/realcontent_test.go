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
	if potato.Product != "" || potato.GrowTicks != 5.8*ticksPerDay {
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

// Things written with the real game's nested fields are simulated from
// them: a meal is food, a crop grows for its days and yields its product.
func TestReadContentRealGameFields(t *testing.T) {
	files := map[string]string{
		"T.xml": `<Defs><TerrainDef><defName>Soil</defName><fertility>1.0</fertility></TerrainDef></Defs>`,
		"K.xml": `<Defs><PawnKindDef><defName>Colonist</defName><race>Human</race></PawnKindDef></Defs>`,
		"Th.xml": `<Defs>
<ThingDef><defName>MealSimple</defName><category>Item</category><stackLimit>10</stackLimit>
  <statBases><MaxHitPoints>50</MaxHitPoints><Nutrition>0.9</Nutrition></statBases><ingestible><foodType>Meal</foodType></ingestible></ThingDef>
<ThingDef><defName>RawPotatoes</defName><category>Item</category><stackLimit>75</stackLimit>
  <statBases><Nutrition>0.05</Nutrition></statBases><ingestible><foodType>VegetableOrFruit</foodType></ingestible></ThingDef>
<ThingDef><defName>Beer</defName><category>Item</category><ingestible><drugCategory>Social</drugCategory></ingestible></ThingDef>
<ThingDef><defName>Plant_Potato</defName><category>Plant</category><statBases><MaxHitPoints>85</MaxHitPoints></statBases>
  <plant><growDays>5.8</growDays><fertilityMin>0.7</fertilityMin><harvestedThingDef>RawPotatoes</harvestedThingDef><harvestYield>11</harvestYield><sowTags><li>Ground</li></sowTags></plant></ThingDef>
</Defs>`,
	}
	c, rep, err := ReadContent(scanMap(t, files))
	if err != nil {
		t.Fatal(err)
	}
	get := func(name string) ThingType {
		i := c.ThingIndex(name)
		if i < 0 {
			t.Fatalf("%s not simulated", name)
		}
		return c.Things[i]
	}
	if m := get("MealSimple"); m.Category != CategoryFood || m.Nutrition != 90 || m.HitPoints != 50 {
		t.Errorf("meal %+v", m)
	}
	if p := get("RawPotatoes"); p.Category != CategoryFood || p.Nutrition != 5 {
		t.Errorf("potatoes %+v", p)
	}
	if b := get("Beer"); b.Category != CategoryItem {
		t.Errorf("beer without nutrition %+v, want an item", b)
	}
	p := get("Plant_Potato")
	if p.GrowTicks != 348000 || p.MinFertility != 70 || p.Product != "RawPotatoes" || p.ProductCount != 11 || !p.Sowable || p.HitPoints != 85 {
		t.Errorf("potato plant %+v", p)
	}
	if c.Terrains[0].Fertility != 100 {
		t.Errorf("soil fertility %d, want 100", c.Terrains[0].Fertility)
	}
	if len(rep.Notes) != 0 {
		t.Errorf("notes %v", rep.Notes)
	}
	// Pawns eat the meals and the crop grows: the world runs.
	w, err := New(c, Config{Maps: 1, Width: 24, Height: 24, PawnsPerMap: 3, ThingsPerMap: 20})
	if err != nil {
		t.Fatal(err)
	}
	for range 300 {
		w.Step()
	}
}
