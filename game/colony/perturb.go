package colony

import "fmt"

// Perturb changes map id's state a little, deterministically and within
// the rules: it adds one unit to the first item or food stack (in thing
// ID order) that has room for it, or, when the map has no such stack,
// advances the map's PRNG. Either way the map's encoding and MapHash
// change and the map gets a new version, as after an accepted command;
// the world-level state and every other map stay as they are. It fails
// for an unknown map.
//
// Perturb is a debugging aid: it makes one machine's map diverge on
// purpose, so that desync detection (MapHash, MapDigest) and repair
// (ReplaceMap) can be exercised from outside the simulation. It is not a
// command and nothing in a session calls it; a world perturbed on one
// machine only no longer matches the others.
func (w *World) Perturb(id int32) error {
	m := w.mapByID(id)
	if m == nil {
		return fmt.Errorf("colony: perturb: unknown map %d", id)
	}
	if i := m.perturbTarget(w.r); i >= 0 {
		m.Things[i].Count++ // cell counts and storage count stacks, not units
	} else {
		m.RNG.next()
	}
	m.changed = true
	m.settle()
	return nil
}

// perturbTarget is the index of the stack Perturb tops up, or -1.
func (m *gameMap) perturbTarget(r *rules) int {
	for i := range m.Things {
		t := &m.Things[i]
		tr := &r.things[t.Def]
		if !t.dead && (tr.cat == catItem || tr.cat == catFood) && t.Count < tr.stackLimit {
			return i
		}
	}
	return -1
}
