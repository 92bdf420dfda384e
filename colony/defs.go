package colony

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
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

// defReader reads typed fields of one def; the first error sticks and
// names the def and the field.
type defReader struct {
	d   *defs.Def
	err error
}

func (r *defReader) failf(format string, args ...any) {
	if r.err == nil {
		where := r.d.File
		if r.d.Line > 0 {
			where = fmt.Sprintf("%s:%d", where, r.d.Line)
		}
		if r.d.Mod != "" {
			where = "[" + r.d.Mod + "] " + where
		}
		r.err = fmt.Errorf("colony: %s %q (%s): %s", r.d.Type, r.d.Name, where, fmt.Sprintf(format, args...))
	}
}

// int reads an integer field; a missing field is an error when required,
// else dflt.
func (r *defReader) int(field string, dflt int, required bool) int {
	v, ok := r.d.Node.Value(field)
	if !ok || v == "" {
		if required {
			r.failf("<%s> is required", field)
		}
		return dflt
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.failf("<%s> %q is not an integer", field, v)
		return dflt
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
	r.failf("<%s> %q is not true or false", field, v)
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
		r.failf("<passability> %q is not Standable, PassThroughOnly or Impassable", v)
		return true
	}
}

// ContentFromDefs builds a Content from a scanned def set: TerrainDef,
// ThingDef and PawnKindDef databases, each in the set's order (sorted by
// defName). A set with scan errors, a def with a missing or invalid
// required field, or content without a passable terrain, a food, a plant
// or a pawn kind is refused with an error that names the def.
//
// Fields (all integers; see TerrainType, ThingType and PawnKind):
//
//	TerrainDef:  pathCost, fertility, passability, genElevation, genMoisture
//	ThingDef:    category (required), stackLimit, hitPoints, nutrition,
//	             workTicks, decay, growTicks, minFertility, harvestedThingDef,
//	             harvestYield, sowable, wildCommonality, passability,
//	             storageCapacity, commonality
//	PawnKindDef: moveTicks, hungerRate, hungryAt, starveAt, maxHealth
//	             (all required), commonality, works, grazes
func ContentFromDefs(set *defs.Set) (*Content, error) {
	if set == nil {
		return nil, errors.New("colony: nil def set")
	}
	if len(set.Errors) > 0 {
		return nil, fmt.Errorf("colony: def set has %d errors, first: %s", len(set.Errors), set.Errors[0])
	}
	c := &Content{}
	for _, typ := range []string{TerrainDefType, ThingDefType, PawnKindDefType} {
		if set.Database(typ).Count() == 0 {
			return nil, fmt.Errorf("colony: the defs have no %s", typ)
		}
	}
	for _, d := range set.Database(TerrainDefType).Defs {
		r := &defReader{d: d}
		t := TerrainType{
			Name:         d.Name,
			PathCost:     r.int("pathCost", 0, false),
			Fertility:    r.int("fertility", 0, false),
			Passable:     r.passable(),
			GenElevation: r.int("genElevation", 0, false),
			GenMoisture:  r.int("genMoisture", 0, false),
		}
		if r.err != nil {
			return nil, r.err
		}
		c.Terrains = append(c.Terrains, t)
	}
	for _, d := range set.Database(ThingDefType).Defs {
		r := &defReader{d: d}
		t := ThingType{
			Name:            d.Name,
			Category:        r.str("category"),
			StackLimit:      r.int("stackLimit", 1, false),
			HitPoints:       r.int("hitPoints", 100, false),
			WorkTicks:       r.int("workTicks", 0, false),
			Decay:           r.int("decay", 0, false),
			MinFertility:    r.int("minFertility", 0, false),
			Product:         r.str("harvestedThingDef"),
			Sowable:         r.bool("sowable", false),
			WildCommonality: r.int("wildCommonality", 0, false),
			Impassable:      !r.passable(),
			Storage:         r.int("storageCapacity", 0, false),
			Commonality:     r.int("commonality", 0, false),
		}
		switch t.Category {
		case "":
			r.failf("<category> is required")
		case CategoryFood:
			t.Nutrition = r.int("nutrition", 0, true)
		case CategoryPlant:
			t.GrowTicks = r.int("growTicks", 0, true)
			t.Nutrition = r.int("nutrition", 0, false)
		default:
			t.Nutrition = r.int("nutrition", 0, false)
		}
		t.ProductCount = r.int("harvestYield", 0, t.Product != "")
		if r.err != nil {
			return nil, r.err
		}
		c.Things = append(c.Things, t)
	}
	for _, d := range set.Database(PawnKindDefType).Defs {
		r := &defReader{d: d}
		k := PawnKind{
			Name:        d.Name,
			MoveTicks:   r.int("moveTicks", 0, true),
			HungerRate:  r.int("hungerRate", 0, true),
			HungryAt:    r.int("hungryAt", 0, true),
			StarveAt:    r.int("starveAt", 0, true),
			MaxHealth:   r.int("maxHealth", 0, true),
			Commonality: r.int("commonality", 0, false),
			Works:       r.bool("works", false),
			Grazes:      r.bool("grazes", false),
		}
		if r.err != nil {
			return nil, r.err
		}
		c.PawnKinds = append(c.PawnKinds, k)
	}
	if _, err := compile(c); err != nil {
		return nil, err
	}
	return c, nil
}
