package colony

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Thing categories (ThingType.Category).
const (
	// CategoryItem is a haulable resource that is not eaten.
	CategoryItem = "Item"
	// CategoryFood is a haulable resource that pawns eat.
	CategoryFood = "Food"
	// CategoryPlant grows on fertile terrain and can be harvested or grazed.
	CategoryPlant = "Plant"
	// CategoryBuilding is a fixed structure (a wall, a storage shelf...).
	CategoryBuilding = "Building"
)

// Content limits. A Content outside them is refused by Validate.
const (
	// MaxTerrains is the most terrain types a Content may hold (one byte per cell).
	MaxTerrains = 255
	// MaxThingTypes is the most thing types a Content may hold.
	MaxThingTypes = 4096
	// MaxPawnKinds is the most pawn kinds a Content may hold.
	MaxPawnKinds = 256
	// maxNameLen bounds def names.
	maxNameLen = 64
)

// TerrainType is one kind of ground. All fields are integers or flags so
// the simulation never touches floating point.
type TerrainType struct {
	// Name is the defName; Content.Terrains is sorted by it.
	Name string
	// PathCost is the extra ticks a pawn spends entering a cell (0..200).
	PathCost int
	// Fertility is the plant growth rate in percent (0..400).
	Fertility int
	// Passable tells whether pawns may stand on the terrain.
	Passable bool
	// GenElevation is the upper bound (1..1000) of the elevation band in
	// which map generation places this terrain; 0 means never generated.
	GenElevation int
	// GenMoisture is the least moisture (0..1000) at which generation picks
	// this terrain inside its elevation band.
	GenMoisture int
}

// ThingType is one kind of thing: an item, a food, a plant or a building.
type ThingType struct {
	// Name is the defName; Content.Things is sorted by it.
	Name string
	// Category is one of CategoryItem, CategoryFood, CategoryPlant and
	// CategoryBuilding.
	Category string
	// StackLimit is the largest stack of an item or food (1 for plants and
	// buildings).
	StackLimit int
	// HitPoints is the starting and largest hit points.
	HitPoints int
	// Nutrition is the food value of one unit (foods) or of a fully grown
	// plant (plants, for grazers); a simple meal is 90.
	Nutrition int
	// WorkTicks is the work needed to eat one unit, pick the stack up, sow
	// or harvest.
	WorkTicks int
	// Decay is the hit points lost every rare tick (250 ticks); 0 never.
	Decay int
	// GrowTicks is the growth a plant needs to mature, in ticks at 100%
	// fertility.
	GrowTicks int
	// MinFertility is the least terrain fertility (percent) a plant needs.
	MinFertility int
	// Product is the defName of the thing a plant yields when harvested;
	// empty for none.
	Product string
	// ProductCount is how many units of Product a harvest yields.
	ProductCount int
	// Sowable marks a crop: harvesting leaves it unsown instead of removing it.
	Sowable bool
	// WildCommonality is the weight of a plant in wild spawning; 0 never.
	WildCommonality int
	// Impassable marks a building pawns cannot walk through.
	Impassable bool
	// Storage is the number of item stacks a storage building holds; 0 for
	// buildings that store nothing.
	Storage int
	// Commonality is the weight of the thing when map generation scatters
	// things; 0 never scattered.
	Commonality int
}

// PawnKind is one kind of pawn.
type PawnKind struct {
	// Name is the defName; Content.PawnKinds is sorted by it.
	Name string
	// MoveTicks is the ticks a pawn takes to cross one cell orthogonally.
	MoveTicks int
	// HungerRate is the hunger gained per tick, in thousandths of a
	// nutrition point.
	HungerRate int
	// HungryAt is the hunger, in nutrition points, at which a pawn looks
	// for food.
	HungryAt int
	// StarveAt is the hunger, in nutrition points, at which a pawn starts
	// losing health.
	StarveAt int
	// MaxHealth is the starting and largest health.
	MaxHealth int
	// Commonality is the weight of the kind when map generation places pawns.
	Commonality int
	// Works tells whether pawns of this kind sow, harvest and haul.
	Works bool
	// Grazes tells whether pawns of this kind eat plants instead of food.
	Grazes bool
}

// Content is everything the simulation takes from defs. Each slice is
// sorted by Name, so indices agree on every machine that loaded the same
// defs.
type Content struct {
	Terrains  []TerrainType
	Things    []ThingType
	PawnKinds []PawnKind
}

// Validate checks that the content is usable: names unique and sorted,
// every field in range, and at least one passable terrain, one thing type
// and one pawn kind.
func (c *Content) Validate() error {
	_, err := compile(c)
	return err
}

// Fingerprint is a stable hash of the whole content. Encoded worlds carry
// it, and a Loader refuses a world built for different content.
func (c *Content) Fingerprint() uint64 {
	var b []byte
	b = append(b, "lockhost.colony.content.v1"...)
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(v int) { b = binary.AppendVarint(b, int64(v)) }
	flag := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	num(len(c.Terrains))
	for _, t := range c.Terrains {
		str(t.Name)
		num(t.PathCost)
		num(t.Fertility)
		flag(t.Passable)
		num(t.GenElevation)
		num(t.GenMoisture)
	}
	num(len(c.Things))
	for _, t := range c.Things {
		str(t.Name)
		str(t.Category)
		num(t.StackLimit)
		num(t.HitPoints)
		num(t.Nutrition)
		num(t.WorkTicks)
		num(t.Decay)
		num(t.GrowTicks)
		num(t.MinFertility)
		str(t.Product)
		num(t.ProductCount)
		flag(t.Sowable)
		num(t.WildCommonality)
		flag(t.Impassable)
		num(t.Storage)
		num(t.Commonality)
	}
	num(len(c.PawnKinds))
	for _, k := range c.PawnKinds {
		str(k.Name)
		num(k.MoveTicks)
		num(k.HungerRate)
		num(k.HungryAt)
		num(k.StarveAt)
		num(k.MaxHealth)
		num(k.Commonality)
		flag(k.Works)
		flag(k.Grazes)
	}
	return xxhash.Sum64(b)
}

// ThingIndex returns the index of the named thing type, or -1.
func (c *Content) ThingIndex(name string) int {
	i, ok := slices.BinarySearchFunc(c.Things, name, func(t ThingType, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return -1
	}
	return i
}

// Category codes used inside the simulation.
const (
	catItem uint8 = iota
	catFood
	catPlant
	catBuilding
)

// thingRule is a ThingType compiled to fixed-size integers.
type thingRule struct {
	cat          uint8
	stackLimit   int32
	hitPoints    int32
	nutrition    int32
	workTicks    int32 // at least 1
	decay        int32
	growTicks    int32
	minFertility int32
	product      int32 // thing index or -1
	productCount int32
	sowable      bool
	wild         int32
	impassable   bool
	storage      int32
	commonality  int32
}

// kindRule is a PawnKind compiled to fixed-size integers.
type kindRule struct {
	moveTicks   int32
	hungerRate  int32
	hungryAt    int32 // in thousandths of a nutrition point
	starveAt    int32 // in thousandths of a nutrition point
	maxHealth   int32
	commonality int32
	works       bool
	grazes      bool
}

// terrainRule is a TerrainType compiled to fixed-size integers.
type terrainRule struct {
	pathCost  int32
	fertility int32
	passable  bool
}

// rules is a validated, private copy of a Content with lookup tables. The
// simulation only reads it.
type rules struct {
	content     Content
	fingerprint uint64
	terrains    []terrainRule
	enterCost   [256]int32 // 10*PathCost by terrain: a path search's extra cost of entering a cell
	things      []thingRule
	kinds       []kindRule
	thingByName map[string]int32 // lookups only, never iterated

	firstPassable int32   // a passable terrain index
	genOrder      []int32 // generated terrains sorted by (elevation, -moisture, index)
	scatter       []int32 // things with Commonality > 0, not buildings
	scatterTotal  int32
	wild          []int32 // plants with WildCommonality > 0
	storageType   int32   // first storage building, or -1
	wallType      int32   // first impassable building, or -1
	kindTotal     int32
}

// field range check helper.
type checker struct {
	err error
}

func (ck *checker) rng(what, name, field string, v, lo, hi int) {
	if ck.err == nil && (v < lo || v > hi) {
		ck.err = fmt.Errorf("colony: %s %q: %s = %d, want %d..%d", what, name, field, v, lo, hi)
	}
}

func checkNames[T any](what string, list []T, name func(T) string) error {
	for i, t := range list {
		n := name(t)
		if n == "" || len(n) > maxNameLen {
			return fmt.Errorf("colony: %s #%d: name %q must be 1..%d bytes", what, i, n, maxNameLen)
		}
		if i > 0 && strings.Compare(name(list[i-1]), n) >= 0 {
			return fmt.Errorf("colony: %s %q: names must be unique and sorted (after %q)", what, n, name(list[i-1]))
		}
	}
	return nil
}

// compile validates c and builds the rules the simulation runs on.
func compile(c *Content) (*rules, error) {
	if err := checkContentShape(c); err != nil {
		return nil, err
	}
	r := &rules{
		content: Content{
			Terrains:  slices.Clone(c.Terrains),
			Things:    slices.Clone(c.Things),
			PawnKinds: slices.Clone(c.PawnKinds),
		},
		thingByName:   make(map[string]int32, len(c.Things)),
		firstPassable: -1,
		storageType:   -1,
		wallType:      -1,
	}
	c = &r.content
	r.fingerprint = c.Fingerprint()
	if err := r.compileTerrains(c); err != nil {
		return nil, err
	}
	if err := r.compileThings(c); err != nil {
		return nil, err
	}
	if err := r.compilePawnKinds(c); err != nil {
		return nil, err
	}
	return r, nil
}

// checkContentShape checks c's counts (terrains, thing types, pawn kinds)
// against their limits and that no two of a kind share a name.
func checkContentShape(c *Content) error {
	if c == nil {
		return errors.New("colony: nil content")
	}
	switch {
	case len(c.Terrains) == 0 || len(c.Terrains) > MaxTerrains:
		return fmt.Errorf("colony: content has %d terrains, want 1..%d", len(c.Terrains), MaxTerrains)
	case len(c.Things) == 0 || len(c.Things) > MaxThingTypes:
		return fmt.Errorf("colony: content has %d thing types, want 1..%d", len(c.Things), MaxThingTypes)
	case len(c.PawnKinds) == 0 || len(c.PawnKinds) > MaxPawnKinds:
		return fmt.Errorf("colony: content has %d pawn kinds, want 1..%d", len(c.PawnKinds), MaxPawnKinds)
	}
	if err := checkNames("terrain", c.Terrains, func(t TerrainType) string { return t.Name }); err != nil {
		return err
	}
	if err := checkNames("thing", c.Things, func(t ThingType) string { return t.Name }); err != nil {
		return err
	}
	if err := checkNames("pawn kind", c.PawnKinds, func(k PawnKind) string { return k.Name }); err != nil {
		return err
	}
	return nil
}

// compileTerrains checks c's terrains and builds their rules, the first
// passable terrain and the map generator's terrain order.
func (r *rules) compileTerrains(c *Content) error {
	var ck checker
	for i, t := range c.Terrains {
		ck.rng("terrain", t.Name, "PathCost", t.PathCost, 0, 200)
		ck.rng("terrain", t.Name, "Fertility", t.Fertility, 0, 400)
		ck.rng("terrain", t.Name, "GenElevation", t.GenElevation, 0, 1000)
		ck.rng("terrain", t.Name, "GenMoisture", t.GenMoisture, 0, 1000)
		r.terrains = append(r.terrains, terrainRule{pathCost: int32(t.PathCost), fertility: int32(t.Fertility), passable: t.Passable})
		r.enterCost[i] = 10 * int32(t.PathCost)
		if t.Passable && r.firstPassable < 0 {
			r.firstPassable = int32(i)
		}
		if t.GenElevation > 0 {
			r.genOrder = append(r.genOrder, int32(i))
		}
	}
	if ck.err != nil {
		return ck.err
	}
	if r.firstPassable < 0 {
		return errors.New("colony: content has no passable terrain")
	}
	slices.SortFunc(r.genOrder, func(a, b int32) int {
		ta, tb := c.Terrains[a], c.Terrains[b]
		if ta.GenElevation != tb.GenElevation {
			return ta.GenElevation - tb.GenElevation
		}
		if ta.GenMoisture != tb.GenMoisture {
			return tb.GenMoisture - ta.GenMoisture
		}
		return int(a - b)
	})
	return nil
}

// compileThings checks c's thing types and builds their rules and the
// lists the generator and the simulation pick from.
func (r *rules) compileThings(c *Content) error {
	for i, t := range c.Things {
		r.thingByName[t.Name] = int32(i)
	}
	for i, t := range c.Things {
		tr, err := r.thingRuleFor(c, t)
		if err != nil {
			return err
		}
		r.things = append(r.things, tr)
		if tr.commonality > 0 && tr.cat != catBuilding {
			r.scatter = append(r.scatter, int32(i))
			r.scatterTotal += tr.commonality
		}
		if tr.cat == catPlant && tr.wild > 0 {
			r.wild = append(r.wild, int32(i))
		}
		if tr.storage > 0 && r.storageType < 0 {
			r.storageType = int32(i)
		}
		if tr.impassable && r.wallType < 0 {
			r.wallType = int32(i)
		}
	}
	return nil
}

// thingRuleFor checks one thing type t of c and returns its rule.
func (r *rules) thingRuleFor(c *Content, t ThingType) (thingRule, error) {
	tr := thingRule{product: -1}
	cat, err := categoryOf(t)
	if err != nil {
		return tr, err
	}
	tr.cat = cat
	if err := checkThingRanges(t, tr.cat); err != nil {
		return tr, err
	}
	if tr.cat == catFood && t.Nutrition == 0 {
		return tr, fmt.Errorf("colony: thing %q: food needs Nutrition > 0", t.Name)
	}
	if t.Product != "" {
		p, err := r.thingProduct(c, t, tr.cat)
		if err != nil {
			return tr, err
		}
		tr.product = p
	}
	if err := checkThingCategoryFields(t, tr.cat); err != nil {
		return tr, err
	}
	tr.stackLimit = int32(max(t.StackLimit, 1))
	tr.hitPoints = int32(t.HitPoints)
	tr.nutrition = int32(t.Nutrition)
	tr.workTicks = int32(max(t.WorkTicks, 1))
	tr.decay = int32(t.Decay)
	tr.growTicks = int32(t.GrowTicks)
	tr.minFertility = int32(t.MinFertility)
	tr.productCount = int32(t.ProductCount)
	tr.sowable = t.Sowable
	tr.wild = int32(t.WildCommonality)
	tr.impassable = t.Impassable
	tr.storage = int32(t.Storage)
	tr.commonality = int32(t.Commonality)
	return tr, nil
}

// categoryOf is the category of thing type t, which must be one of
// the four.
func categoryOf(t ThingType) (uint8, error) {
	switch t.Category {
	case CategoryItem:
		return catItem, nil
	case CategoryFood:
		return catFood, nil
	case CategoryPlant:
		return catPlant, nil
	case CategoryBuilding:
		return catBuilding, nil
	}
	return 0, fmt.Errorf("colony: thing %q: category %q, want %s, %s, %s or %s", t.Name, t.Category,
		CategoryItem, CategoryFood, CategoryPlant, CategoryBuilding)
}

// checkThingRanges checks that each number of thing type t, of category
// cat, is in its range: the first one out is the error.
func checkThingRanges(t ThingType, cat uint8) error {
	var ck checker
	if cat == catItem || cat == catFood {
		ck.rng("thing", t.Name, "StackLimit", t.StackLimit, 1, 10000)
	} else {
		ck.rng("thing", t.Name, "StackLimit", t.StackLimit, 0, 1)
	}
	ck.rng("thing", t.Name, "HitPoints", t.HitPoints, 1, 100000)
	ck.rng("thing", t.Name, "Nutrition", t.Nutrition, 0, 1000)
	ck.rng("thing", t.Name, "WorkTicks", t.WorkTicks, 0, 10000)
	ck.rng("thing", t.Name, "Decay", t.Decay, 0, 100000)
	ck.rng("thing", t.Name, "MinFertility", t.MinFertility, 0, 400)
	ck.rng("thing", t.Name, "ProductCount", t.ProductCount, 0, 10000)
	ck.rng("thing", t.Name, "WildCommonality", t.WildCommonality, 0, 10000)
	ck.rng("thing", t.Name, "Storage", t.Storage, 0, 100)
	ck.rng("thing", t.Name, "Commonality", t.Commonality, 0, 10000)
	if cat == catPlant {
		ck.rng("thing", t.Name, "GrowTicks", t.GrowTicks, 1, 10000000)
	} else {
		ck.rng("thing", t.Name, "GrowTicks", t.GrowTicks, 0, 0)
	}
	return ck.err
}

// thingProduct is the index of the Product of thing type t, of category
// cat: an item or food of c that only a plant has, in a count of one or
// more.
func (r *rules) thingProduct(c *Content, t ThingType, cat uint8) (int32, error) {
	p, ok := r.thingByName[t.Product]
	if !ok {
		return -1, fmt.Errorf("colony: thing %q: unknown Product %q", t.Name, t.Product)
	}
	if cat != catPlant {
		return -1, fmt.Errorf("colony: thing %q: only plants have a Product", t.Name)
	}
	if pc := r.thingCat(c.Things[p].Category); pc != catItem && pc != catFood {
		return -1, fmt.Errorf("colony: thing %q: Product %q is not an item or food", t.Name, t.Product)
	}
	if t.ProductCount < 1 {
		return -1, fmt.Errorf("colony: thing %q: Product needs ProductCount >= 1", t.Name)
	}
	return p, nil
}

// checkThingCategoryFields checks that thing type t, of category cat,
// uses only the fields of its category: sowing and growing wild are for
// plants, blocking the way and storing things for buildings, and not
// both at once.
func checkThingCategoryFields(t ThingType, cat uint8) error {
	if cat != catPlant && (t.Sowable || t.WildCommonality > 0) {
		return fmt.Errorf("colony: thing %q: only plants are sowable or wild", t.Name)
	}
	if cat != catBuilding && (t.Impassable || t.Storage > 0) {
		return fmt.Errorf("colony: thing %q: only buildings are impassable or store things", t.Name)
	}
	if cat == catBuilding && t.Impassable && t.Storage > 0 {
		return fmt.Errorf("colony: thing %q: a storage building must be passable", t.Name)
	}
	return nil
}

// compilePawnKinds checks c's pawn kinds and builds their rules.
func (r *rules) compilePawnKinds(c *Content) error {
	var ck checker
	// Content without food or plants is valid (RimWorld's own defs have
	// no Food category): pawns then go hungry and nothing grows.
	for _, k := range c.PawnKinds {
		ck.rng("pawn kind", k.Name, "MoveTicks", k.MoveTicks, 1, 1000)
		ck.rng("pawn kind", k.Name, "HungerRate", k.HungerRate, 0, 10000)
		ck.rng("pawn kind", k.Name, "StarveAt", k.StarveAt, 1, 100000)
		ck.rng("pawn kind", k.Name, "HungryAt", k.HungryAt, 1, k.StarveAt)
		ck.rng("pawn kind", k.Name, "MaxHealth", k.MaxHealth, 1, 10000)
		ck.rng("pawn kind", k.Name, "Commonality", k.Commonality, 0, 10000)
		if ck.err != nil {
			return ck.err
		}
		r.kinds = append(r.kinds, kindRule{
			moveTicks:   int32(k.MoveTicks),
			hungerRate:  int32(k.HungerRate),
			hungryAt:    int32(k.HungryAt) * 1000,
			starveAt:    int32(k.StarveAt) * 1000,
			maxHealth:   int32(k.MaxHealth),
			commonality: int32(k.Commonality),
			works:       k.Works,
			grazes:      k.Grazes,
		})
		r.kindTotal += int32(k.Commonality)
	}
	return nil
}

func (r *rules) thingCat(category string) uint8 {
	switch category {
	case CategoryFood:
		return catFood
	case CategoryPlant:
		return catPlant
	case CategoryBuilding:
		return catBuilding
	}
	return catItem
}

// pickKind chooses a pawn kind by commonality (uniformly if all are zero).
func (r *rules) pickKind(g *rng) int32 {
	if r.kindTotal == 0 {
		return g.intn(int32(len(r.kinds)))
	}
	x := g.intn(r.kindTotal)
	for i, k := range r.kinds {
		if x < k.commonality {
			return int32(i)
		}
		x -= k.commonality
	}
	return int32(len(r.kinds) - 1)
}

// pickScatter chooses a thing type to scatter, or -1 if none is scattered.
func (r *rules) pickScatter(g *rng) int32 {
	if r.scatterTotal == 0 {
		return -1
	}
	x := g.intn(r.scatterTotal)
	for _, i := range r.scatter {
		c := r.things[i].commonality
		if x < c {
			return i
		}
		x -= c
	}
	return r.scatter[len(r.scatter)-1]
}
