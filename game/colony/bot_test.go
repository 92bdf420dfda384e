package colony_test

import (
	"math/rand/v2"
	"testing"

	"github.com/lockhost/lockhost/game/colony"
)

// TestRandomCommandsAreValid: RandomCommand's commands are accepted by the world
// they were built from.
func TestRandomCommandsAreValid(t *testing.T) {
	content, _, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	w, err := colony.New(content, colony.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := map[uint16]int{}
	for i := 0; i < 300; i++ {
		c, ok := colony.RandomCommand(w, rng)
		if !ok {
			t.Fatal("the bot found no command")
		}
		c.Tick = w.Tick()
		if err := w.Apply(c); err != nil {
			t.Fatalf("bot command %d (kind %d, map %d) refused: %v", i, c.Kind, c.MapID, err)
		}
		kinds[c.Kind]++
		w.Step()
	}
	if kinds[colony.CmdMovePawn] == 0 || kinds[colony.CmdSpawnThing] == 0 {
		t.Fatalf("the bot sends one kind only: %v", kinds)
	}
}
