package colony

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

var (
	defaultOnce    sync.Once
	defaultCached  *Content
	defaultLoadErr error
)

// testContent returns the embedded default content, scanned once.
func testContent(tb testing.TB) *Content {
	tb.Helper()
	defaultOnce.Do(func() { defaultCached, _, defaultLoadErr = DefaultContent() })
	if defaultLoadErr != nil {
		tb.Fatalf("DefaultContent: %v", defaultLoadErr)
	}
	return defaultCached
}

// handContent is a minimal content built without defs.
func handContent() *Content {
	return &Content{
		Terrains: []TerrainType{
			{Name: "Rock", Passable: false, GenElevation: 1000},
			{Name: "Soil", Passable: true, Fertility: 100, GenElevation: 700},
			{Name: "Water", Passable: true, PathCost: 20, GenElevation: 250},
		},
		Things: []ThingType{
			{Name: "Berries", Category: CategoryFood, StackLimit: 50, HitPoints: 40, Nutrition: 5, WorkTicks: 5, Decay: 1, Commonality: 10},
			{Name: "Bush", Category: CategoryPlant, StackLimit: 1, HitPoints: 50, GrowTicks: 2000, MinFertility: 50,
				Product: "Berries", ProductCount: 5, Sowable: true, WildCommonality: 5, Commonality: 20, WorkTicks: 30},
			{Name: "Crate", Category: CategoryBuilding, StackLimit: 1, HitPoints: 100, Storage: 2},
			{Name: "Stone", Category: CategoryItem, StackLimit: 20, HitPoints: 100, WorkTicks: 10, Commonality: 10},
			{Name: "Wall", Category: CategoryBuilding, StackLimit: 1, HitPoints: 300, Impassable: true},
		},
		PawnKinds: []PawnKind{
			{Name: "Goat", MoveTicks: 8, HungerRate: 20, HungryAt: 10, StarveAt: 40, MaxHealth: 20, Commonality: 1, Grazes: true},
			{Name: "Settler", MoveTicks: 6, HungerRate: 10, HungryAt: 10, StarveAt: 60, MaxHealth: 50, Commonality: 3, Works: true},
		},
	}
}

// smallConfig is a world small enough for many quick runs.
func smallConfig(seed uint64) Config {
	return Config{Maps: 2, Width: 64, Height: 48, Seed: seed, PawnsPerMap: 12, ThingsPerMap: 200}
}

func mustNew(tb testing.TB, c *Content, cfg Config) *World {
	tb.Helper()
	w, err := New(c, cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return w
}

// snapshot encodes a world as a joiner receives it.
func snapshot(tb testing.TB, w *World) ([]byte, []lockstep.MapBlob) {
	tb.Helper()
	world, err := w.MarshalWorld()
	if err != nil {
		tb.Fatal(err)
	}
	var maps []lockstep.MapBlob
	for _, id := range w.MapIDs() {
		b, err := w.MarshalMap(id)
		if err != nil {
			tb.Fatal(err)
		}
		maps = append(maps, lockstep.MapBlob{ID: id, Data: b})
	}
	return world, maps
}

// script is a deterministic stream of commands, valid and invalid mixed,
// driven by its own generator so two runs issue the same commands.
type script struct {
	g     rng
	names []string
}

func newScript(seed uint64, c *Content) *script {
	s := &script{g: rng{s: seed}}
	for _, t := range c.Things {
		s.names = append(s.names, t.Name)
	}
	return s
}

// next returns the commands for one tick (often none).
func (s *script) next(w *World) []lockstep.Command {
	if !s.g.chance(1, 7) {
		return nil
	}
	m := w.maps[s.g.intn(int32(len(w.maps)))]
	x, y := int(s.g.intn(m.W)), int(s.g.intn(m.H))
	if s.g.chance(1, 2) {
		name := s.names[s.g.intn(int32(len(s.names)))]
		return []lockstep.Command{SpawnThing(m.ID, name, x, y, int(s.g.between(1, 12)))}
	}
	return []lockstep.Command{MovePawn(m.ID, s.g.between(1, m.NextID), x, y)}
}

// run steps w n ticks, applying the script's commands; it returns how
// many commands were accepted.
func run(tb testing.TB, w *World, s *script, n int) (accepted int) {
	tb.Helper()
	for range n {
		for _, cmd := range s.next(w) {
			cmd.Tick = w.Tick()
			if w.Apply(cmd) == nil {
				accepted++
			}
		}
		w.Step()
	}
	return accepted
}

// manyTerrains is the default content with 17 more terrain types, never
// generated, so that its maps keep terrain at one byte a cell.
func manyTerrains(tb testing.TB) *Content {
	tb.Helper()
	c := *testContent(tb)
	c.Terrains = slices.Clone(c.Terrains)
	for i := range nibbleTerrains + 1 {
		c.Terrains = append(c.Terrains, TerrainType{Name: fmt.Sprintf("Zz%02d", i), Passable: true, PathCost: i})
	}
	return &c
}
