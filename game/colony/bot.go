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
//
// It reads the maps directly rather than through Stats, Pawns and Content,
// which cost time in proportion to the whole world; the random draws are
// the same ones, in the same order, so a seed gives the same commands.
func RandomCommand(w *World, rng *rand.Rand) (lockstep.Command, bool) {
	if len(w.maps) == 0 {
		return lockstep.Command{}, false
	}
	m := w.maps[rng.IntN(len(w.maps))]
	for try := 0; try < 20; try++ {
		x, y := rng.IntN(int(m.W)), rng.IntN(int(m.H))
		if !w.Passable(m.ID, x, y) {
			continue
		}
		if n := len(m.Pawns); n > 0 && rng.IntN(4) != 0 {
			return MovePawn(m.ID, m.Pawns[rng.IntN(n)].ID, x, y), true
		}
		n := w.itemCount()
		if n == 0 {
			return lockstep.Command{}, false
		}
		return SpawnThing(m.ID, w.itemName(rng.IntN(n)), x, y, 1+rng.IntN(10)), true
	}
	return lockstep.Command{}, false
}

// spawnable tells whether a thing type is one the bot spawns: an item or
// food.
func spawnable(t *ThingType) bool {
	return t.Category == CategoryItem || t.Category == CategoryFood
}

// itemCount is the number of spawnable thing types in the content.
func (w *World) itemCount() int {
	n := 0
	for i := range w.r.content.Things {
		if spawnable(&w.r.content.Things[i]) {
			n++
		}
	}
	return n
}

// itemName is the name of the i-th spawnable thing type, in content
// order; i must be below itemCount.
func (w *World) itemName(i int) string {
	for j := range w.r.content.Things {
		if t := &w.r.content.Things[j]; spawnable(t) {
			if i == 0 {
				return t.Name
			}
			i--
		}
	}
	panic("colony: itemName: index out of range") // callers stay below itemCount
}
