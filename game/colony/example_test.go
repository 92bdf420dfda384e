package colony_test

import (
	"fmt"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
)

// A game plugs into lockstep by implementing lockstep.Sim and providing a
// lockstep.Loader. Here the host builds a colony world, a command is
// stamped and applied, and a joiner rebuilds the world from its snapshot
// and reaches the same state hash.
func Example() {
	content, _, err := colony.DefaultContent()
	if err != nil {
		panic(err)
	}
	host, err := colony.New(content, colony.Config{Maps: 2, Width: 64, Height: 64, Seed: 1})
	if err != nil {
		panic(err)
	}
	var sim lockstep.Sim = host

	// A player's command: the host stamps it with the current tick.
	cmd := colony.SpawnThing(0, "MealSimple", 32, 32, 5)
	cmd.Tick = sim.Tick()
	if err := sim.Apply(cmd); err != nil {
		fmt.Println("refused:", err)
	}
	for range 120 {
		sim.Step()
	}

	// Snapshot: world-level state plus one blob per map.
	world, _ := sim.MarshalWorld()
	var maps []lockstep.MapBlob
	for _, id := range sim.MapIDs() {
		data, _ := sim.MarshalMap(id)
		maps = append(maps, lockstep.MapBlob{ID: id, Data: data})
	}

	// The joiner loads it with the same content.
	joined, err := colony.Loader(content)(world, maps)
	if err != nil {
		panic(err)
	}
	fmt.Println("tick:", joined.Tick())
	fmt.Println("same state:", joined.WorldHash() == sim.WorldHash())
	// Output:
	// tick: 120
	// same state: true
}
