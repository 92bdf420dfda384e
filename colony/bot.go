package colony

import (
	"math/rand/v2"

	"github.com/lockhost/lockhost/lockstep"
)

// RandomCommand picks a command valid in w, for bots, load tests and
// recordings: mostly one of a map's pawns sent to a random passable cell,
// sometimes a stack of items spawned there. It reports false when w offers
// nothing to do (no maps, no passable cell found in a few tries, or no
// item defs).
func RandomCommand(w *World, rng *rand.Rand) (lockstep.Command, bool) {
	stats := w.Stats()
	if len(stats) == 0 {
		return lockstep.Command{}, false
	}
	m := stats[rng.IntN(len(stats))]
	for try := 0; try < 20; try++ {
		x, y := rng.IntN(m.Width), rng.IntN(m.Height)
		if !w.Passable(m.ID, x, y) {
			continue
		}
		if pawns := w.Pawns(m.ID); len(pawns) > 0 && rng.IntN(4) != 0 {
			return MovePawn(m.ID, pawns[rng.IntN(len(pawns))].ID, x, y), true
		}
		items := w.itemNames()
		if len(items) == 0 {
			return lockstep.Command{}, false
		}
		return SpawnThing(m.ID, items[rng.IntN(len(items))], x, y, 1+rng.IntN(10)), true
	}
	return lockstep.Command{}, false
}

// itemNames lists the content's spawnable things: items and food.
func (w *World) itemNames() []string {
	var items []string
	for _, t := range w.Content().Things {
		if t.Category == CategoryItem || t.Category == CategoryFood {
			items = append(items, t.Name)
		}
	}
	return items
}
