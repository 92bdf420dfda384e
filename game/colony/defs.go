package colony

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/lockhost/lockhost/defs"
)

// Def types ContentFromDefs reads.
const (
	// TerrainDefType is the def type of terrains.
	TerrainDefType = "TerrainDef"
	// ThingDefType is the def type of things.
	ThingDefType = "ThingDef"
	// PawnKindDefType is the def type of pawn kinds.
	PawnKindDefType = "PawnKindDef"
)

//go:embed content
var contentFS embed.FS

// DefaultContentFS returns the embedded default content: a RimWorld-style
// mod folder (About/About.xml, Defs/TerrainDefs, Defs/ThingDefs,
// Defs/PawnKindDefs) with packageId lockhost.core.
func DefaultContentFS() fs.FS {
	sub, err := fs.Sub(contentFS, "content/Core")
	if err != nil {
		panic("colony: embedded content missing: " + err.Error()) // cannot happen: fixed path
	}
	return sub
}

// DefaultContent scans DefaultContentFS and builds its Content. It also
// returns the scanned def set, which the host advertises to joiners.
func DefaultContent() (*Content, *defs.Set, error) {
	set, err := defs.ScanFS([]defs.ModSource{{FS: DefaultContentFS(), Dir: "lockhost.core (embedded)"}}, defs.Options{Workers: 1})
	if err != nil {
		return nil, nil, fmt.Errorf("colony: default content: %w", err)
	}
	c, err := ContentFromDefs(set)
	if err != nil {
		return nil, nil, err
	}
	return c, set, nil
}

// defReader reads typed fields of one def. A value the simulation cannot
// use (not a number, out of range) is not an error: the field takes its
// default or the nearest value in range, and a note says so, since real
// content writes its fields for the real game, not for this simulation.
type defReader struct {
	d     *defs.Def
	err   error
	notes *[]string
}

func (r *defReader) where() string {
	where := r.d.File
	if r.d.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, r.d.Line)
	}
	if r.d.Mod != "" {
		where = "[" + r.d.Mod + "] " + where
	}
	return where
}

// failf records an error that makes the content unusable.
func (r *defReader) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("colony: %s %q (%s): %s", r.d.Type, r.d.Name, r.where(), fmt.Sprintf(format, args...))
	}
}

// notef records a value the simulation does not use as written.
func (r *defReader) notef(format string, args ...any) {
	if r.notes != nil && len(*r.notes) < maxNotes {
		*r.notes = append(*r.notes, fmt.Sprintf("%s %s (%s): %s", r.d.Type, r.d.Name, r.where(), fmt.Sprintf(format, args...)))
	}
}

// maxNotes bounds the notes one ReadContent call keeps.
const maxNotes = 100

// parseInt reads an integer, or a decimal number (the real game writes
// many fields as floats) rounded toward zero.
func parseInt(v string) (int, bool) {
	if n, err := strconv.Atoi(v); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e9 {
		return 0, false
	}
	return int(f), true
}

// int reads an integer field in lo..hi; a missing field is an error when
// required, else dflt. percentFraction marks a field the real game writes
// as a fraction of 1 (fertility 1.4): a value with a decimal point is then
// read as a percentage of that fraction (140).
func (r *defReader) int(field string, dflt, lo, hi int, required, percentFraction bool) int {
	v, ok := r.value(field)
	if !ok || v == "" {
		if required {
			r.failf("<%s> is required", field)
		}
		return dflt
	}
	if percentFraction && strings.ContainsRune(v, '.') {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) < 1e6 {
			return r.clamp(field, v, int(math.Round(f*100)), lo, hi)
		}
	}
	n, ok := parseInt(v)
	if !ok {
		r.notef("<%s> %q is not a number; %d is used", field, v, dflt)
		return dflt
	}
	return r.clamp(field, v, n, lo, hi)
}

// value returns the text at path, child names separated by '/' (such as
// "statBases/MaxHitPoints"), and whether that element exists.
func (r *defReader) value(path string) (string, bool) {
	n := r.d.Node
	for name := range strings.SplitSeq(path, "/") {
		if n = n.Child(name); n == nil {
			return "", false
		}
	}
	return n.Text, true
}

// has reports whether path holds an element with text or children.
func (r *defReader) has(path string) bool {
	n := r.d.Node
	for name := range strings.SplitSeq(path, "/") {
		if n = n.Child(name); n == nil {
			return false
		}
	}
	return n.Text != "" || len(n.Children) > 0
}

// scaled reads a number the real game writes as a float (days, fractions)
// and returns it times scale, rounded to the nearest integer, in lo..hi;
// dflt when it is missing or not a number. One multiplication of two
// doubles rounds the same on every machine, so the result is deterministic.
func (r *defReader) scaled(path string, scale float64, dflt, lo, hi int) int {
	v, ok := r.value(path)
	if !ok || v == "" {
		return dflt
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e9 {
		r.notef("<%s> %q is not a number; %d is used", path, v, dflt)
		return dflt
	}
	return r.clamp(path, v, int(math.Round(f*scale)), lo, hi)
}

func (r *defReader) clamp(field, v string, n, lo, hi int) int {
	if n < lo || n > hi {
		c := min(max(n, lo), hi)
		r.notef("<%s> %s is outside %d..%d; %d is used", field, v, lo, hi, c)
		return c
	}
	return n
}

func (r *defReader) bool(field string, dflt bool) bool {
	v, ok := r.d.Node.Value(field)
	if !ok || v == "" {
		return dflt
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	}
	r.notef("<%s> %q is not true or false; %v is used", field, v, dflt)
	return dflt
}

func (r *defReader) str(field string) string {
	v, _ := r.d.Node.Value(field)
	return v
}

// passable reads a RimWorld <passability>: Standable (default) and
// PassThroughOnly are passable, Impassable is not.
func (r *defReader) passable() bool {
	switch v := r.str("passability"); v {
	case "", "Standable", "PassThroughOnly":
		return true
	case "Impassable":
		return false
	default:
		r.notef("<passability> %q is not Standable, PassThroughOnly or Impassable; Standable is used", v)
		return true
	}
}

// Report says how ReadContent used a def set: what it simulates, what it
// carries without simulating, and which values it could not use as
// written. Carried defs stay in the def databases every joiner must
// match; the simulation just does not act on them.
type Report struct {
	// Simulated counts the defs simulated, by def type.
	Simulated map[string]int
	// Carried counts, by def type, the defs not simulated: every def of a
	// type other than TerrainDef, ThingDef and PawnKindDef, things of
	// another category (Pawn, Mote, Apparel as RimWorld's Item…), and
	// defs beyond the simulation's limits.
	Carried map[string]int
	// Notes are values not used as written, one sentence each naming the
	// def (at most 100).
	Notes []string
}

// ContentFromDefs builds a Content from a scanned def set; see ReadContent.
func ContentFromDefs(set *defs.Set) (*Content, error) {
	c, _, err := ReadContent(set)
	return c, err
}

// ReadContent builds a Content from a scanned def set and reports how. It
// accepts any content: it simulates the TerrainDef, ThingDef and
// PawnKindDef defs it knows, each database in the set's order (sorted by
// defName), and carries the rest untouched. It fails only for a set with
// scan errors, a Food thing without nutrition, or content without a
// passable terrain, a thing to simulate or a pawn kind.
//
// Fields (all optional integers unless said; see TerrainType, ThingType
// and PawnKind; a decimal number is rounded toward zero; a value out of
// range is moved into it). Where a field is missing, the real game's own
// field is read instead when there is one (in brackets; days and
// fractions are scaled):
//
//	TerrainDef:  pathCost, fertility (percent, or RimWorld's fraction such
//	             as 1.4), passability, genElevation, genMoisture
//	ThingDef:    category (Item, Food, Plant, Building are simulated, an
//	             Item with <ingestible> and a statBases Nutrition is Food;
//	             any other category, or none, is carried), stackLimit,
//	             hitPoints [statBases/MaxHitPoints], nutrition (required
//	             for Food) [statBases/Nutrition ×100], workTicks, decay,
//	             commonality; plants: growTicks [plant/growDays ×60000],
//	             minFertility [plant/fertilityMin ×100], harvestedThingDef
//	             [plant/harvestedThingDef], harvestYield [plant/harvestYield],
//	             sowable [plant/sowTags present], wildCommonality;
//	             buildings: passability, storageCapacity
//	PawnKindDef: moveTicks, hungerRate, hungryAt, starveAt, maxHealth,
//	             commonality, works, grazes (RimWorld's pawn kinds have
//	             none of these and get a colonist's values)
func ReadContent(set *defs.Set) (*Content, *Report, error) {
	if set == nil {
		return nil, nil, errors.New("colony: nil def set")
	}
	if len(set.Errors) > 0 {
		return nil, nil, fmt.Errorf("colony: def set has %d errors, first: %s", len(set.Errors), set.Errors[0])
	}
	cr := &contentReader{set: set, c: &Content{}, rep: &Report{Simulated: map[string]int{}, Carried: map[string]int{}}}
	for _, db := range set.Databases {
		switch db.Type {
		case TerrainDefType, ThingDefType, PawnKindDefType:
		default:
			cr.rep.Carried[db.Type] += db.Count()
		}
	}
	cr.readTerrains()
	if err := cr.readThings(); err != nil {
		return nil, nil, err
	}
	cr.readPawnKinds()
	c, rep := cr.c, cr.rep
	for _, db := range []string{TerrainDefType, ThingDefType, PawnKindDefType} {
		if n := set.Database(db).Count() - rep.Carried[db]; n > 0 {
			rep.Simulated[db] = n
		}
	}
	var lacks []string
	if len(c.Terrains) == 0 {
		lacks = append(lacks, TerrainDefType)
	}
	if len(c.Things) == 0 {
		lacks = append(lacks, fmt.Sprintf("%s of category %s, %s, %s or %s", ThingDefType, CategoryItem, CategoryFood, CategoryPlant, CategoryBuilding))
	}
	if len(c.PawnKinds) == 0 {
		lacks = append(lacks, PawnKindDefType)
	}
	if len(lacks) > 0 {
		return nil, nil, &LacksError{Lacks: lacks}
	}
	if _, err := compile(c); err != nil {
		return nil, nil, err
	}
	return c, rep, nil
}

// LacksError is ReadContent's error for content that lacks a kind of def
// every world needs: most often a mod read without the base content it
// builds on.
type LacksError struct {
	// Lacks names each missing kind, such as "TerrainDef".
	Lacks []string
}

func (e *LacksError) Error() string {
	return "colony: the defs have no " + strings.Join(e.Lacks, ", no ")
}

// contentReader reads a def set into the simulation's content, noting in
// rep what it carries without simulating.
type contentReader struct {
	set *defs.Set
	c   *Content
	rep *Report
}

// carry counts d as carried, with why (if not empty) as a note.
func (cr *contentReader) carry(d *defs.Def, why string) {
	cr.rep.Carried[d.Type]++
	if why != "" && len(cr.rep.Notes) < maxNotes {
		cr.rep.Notes = append(cr.rep.Notes, fmt.Sprintf("%s %s is carried, not simulated: %s", d.Type, d.Name, why))
	}
}

// simulable says whether d can be simulated as the n-th of its kind
// (limit at most), and carries it when not.
func (cr *contentReader) simulable(d *defs.Def, n, limit int) bool {
	switch {
	case len(d.Name) > maxNameLen:
		cr.carry(d, fmt.Sprintf("its name is longer than %d bytes", maxNameLen))
	case n >= limit:
		cr.carry(d, fmt.Sprintf("the simulation holds at most %d of its kind", limit))
	default:
		return true
	}
	return false
}

// readTerrains reads the terrain defs.
func (cr *contentReader) readTerrains() {
	for _, d := range defsOf(cr.set, TerrainDefType) {
		if !cr.simulable(d, len(cr.c.Terrains), MaxTerrains) {
			continue
		}
		r := &defReader{d: d, notes: &cr.rep.Notes}
		t := TerrainType{
			Name:         d.Name,
			PathCost:     r.int("pathCost", 0, 0, 200, false, false),
			Fertility:    r.int("fertility", 0, 0, 400, false, true),
			Passable:     r.passable(),
			GenElevation: r.int("genElevation", 0, 0, 1000, false, false),
			GenMoisture:  r.int("genMoisture", 0, 0, 1000, false, false),
		}
		cr.c.Terrains = append(cr.c.Terrains, t)
	}
}

// readThings reads the thing defs of the categories the simulation knows.
func (cr *contentReader) readThings() error {
	// Things are read in two passes: a plant's product must be a thing
	// that is simulated.
	var things []*defs.Def
	for _, d := range defsOf(cr.set, ThingDefType) {
		switch thingCategory(d) {
		case CategoryItem, CategoryFood, CategoryPlant, CategoryBuilding:
			if cr.simulable(d, len(things), MaxThingTypes) {
				things = append(things, d)
			}
		default:
			cr.carry(d, "")
		}
	}
	simulated := make(map[string]string, len(things)) // name -> category
	for _, d := range things {
		simulated[d.Name] = thingCategory(d)
	}
	for _, d := range things {
		t, err := cr.readThing(d, simulated)
		if err != nil {
			return err
		}
		cr.c.Things = append(cr.c.Things, t)
	}
	return nil
}

// readThing reads one thing def; simulated maps the names of the things
// simulated to their categories.
func (cr *contentReader) readThing(d *defs.Def, simulated map[string]string) (ThingType, error) {
	r := &defReader{d: d, notes: &cr.rep.Notes}
	cat := thingCategory(d)
	t := ThingType{
		Name:        d.Name,
		Category:    cat,
		StackLimit:  1,
		HitPoints:   r.int("hitPoints", 100, 1, 100000, false, false),
		WorkTicks:   r.int("workTicks", 0, 0, 10000, false, false),
		Decay:       r.int("decay", 0, 0, 100000, false, false),
		Commonality: r.int("commonality", 0, 0, 10000, false, false),
	}
	if !r.has("hitPoints") {
		t.HitPoints = r.scaled("statBases/MaxHitPoints", 1, 100, 1, 100000)
	}
	switch cat {
	case CategoryItem, CategoryFood:
		t.StackLimit = r.int("stackLimit", 1, 1, 10000, false, false)
		if cat == CategoryFood && !r.has("nutrition") && r.has("statBases/Nutrition") {
			t.Nutrition = r.scaled("statBases/Nutrition", 100, 1, 0, 1000)
		} else {
			t.Nutrition = r.int("nutrition", 0, 0, 1000, cat == CategoryFood, false)
		}
		if cat == CategoryFood && t.Nutrition == 0 && r.err == nil {
			t.Nutrition = 1
			r.notef("<nutrition> 0 for a food; 1 is used")
		}
	case CategoryPlant:
		readPlant(r, &t, simulated)
	case CategoryBuilding:
		t.Impassable = !r.passable()
		t.Storage = r.int("storageCapacity", 0, 0, 100, false, false)
		if t.Impassable && t.Storage > 0 {
			r.notef("an impassable building cannot store things; storageCapacity 0 is used")
			t.Storage = 0
		}
	}
	return t, r.err
}

// readPlant reads a plant's growth, sowing and product into t.
func readPlant(r *defReader, t *ThingType, simulated map[string]string) {
	t.Nutrition = r.int("nutrition", 0, 0, 1000, false, false)
	t.GrowTicks = r.int("growTicks", defaultGrowTicks, 1, 10000000, false, false)
	if !r.has("growTicks") {
		t.GrowTicks = r.scaled("plant/growDays", ticksPerDay, defaultGrowTicks, 1, 10000000)
	}
	t.MinFertility = r.int("minFertility", 0, 0, 400, false, true)
	if !r.has("minFertility") {
		t.MinFertility = r.scaled("plant/fertilityMin", 100, 0, 0, 400)
	}
	t.Sowable = r.bool("sowable", r.has("plant/sowTags"))
	t.WildCommonality = r.int("wildCommonality", 0, 0, 10000, false, false)
	p := r.str("harvestedThingDef")
	yield := func() int { return r.int("harvestYield", 1, 1, 10000, false, false) }
	if p == "" {
		p, _ = r.value("plant/harvestedThingDef")
		yield = func() int { return r.scaled("plant/harvestYield", 1, 1, 1, 10000) }
	}
	if p != "" {
		switch simulated[p] {
		case CategoryItem, CategoryFood:
			t.Product = p
			t.ProductCount = yield()
		default:
			r.notef("<harvestedThingDef> %s is not a simulated item or food; the plant yields nothing", p)
		}
	}
}

// readPawnKinds reads the pawn kind defs.
func (cr *contentReader) readPawnKinds() {
	for _, d := range defsOf(cr.set, PawnKindDefType) {
		if !cr.simulable(d, len(cr.c.PawnKinds), MaxPawnKinds) {
			continue
		}
		r := &defReader{d: d, notes: &cr.rep.Notes}
		k := PawnKind{
			Name:        d.Name,
			MoveTicks:   r.int("moveTicks", 12, 1, 1000, false, false),
			HungerRate:  r.int("hungerRate", 3, 0, 10000, false, false),
			StarveAt:    r.int("starveAt", 160, 1, 100000, false, false),
			MaxHealth:   r.int("maxHealth", 100, 1, 10000, false, false),
			Commonality: r.int("commonality", 0, 0, 10000, false, false),
			Works:       r.bool("works", false),
			Grazes:      r.bool("grazes", false),
		}
		k.HungryAt = r.int("hungryAt", min(40, k.StarveAt), 1, k.StarveAt, false, false)
		cr.c.PawnKinds = append(cr.c.PawnKinds, k)
	}
}

// defsOf returns the defs of one type, or none.
func defsOf(set *defs.Set, typ string) []*defs.Def {
	if db := set.Database(typ); db != nil {
		return db.Defs
	}
	return nil
}

// defaultGrowTicks is a plant's growth when its def gives none: one
// in-game day.
const defaultGrowTicks = ticksPerDay

// ticksPerDay is the game's day, for fields it writes in days.
const ticksPerDay = 60000

// thingCategory is the category a ThingDef is simulated as: its
// <category>, except that a RimWorld Item with <ingestible> and a
// statBases Nutrition (a meal, a raw food) is Food.
func thingCategory(d *defs.Def) string {
	cat, _ := d.Node.Value("category")
	if cat == CategoryItem && d.Node.Child("ingestible") != nil {
		if v, ok := d.Node.Child("statBases").Value("Nutrition"); ok && v != "" {
			return CategoryFood
		}
	}
	return cat
}
