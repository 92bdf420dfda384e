package colony

import (
	"fmt"

	"github.com/lockhost/lockhost/lockstep"
)

var _ lockstep.MapReplacer = (*World)(nil)

// ReplaceMap swaps map m.ID's state for m.Data, an encoding of that map
// (MarshalMap's output, typically another machine's). It implements
// lockstep.MapReplacer: a machine whose map diverged repairs that map
// alone. The world-level state and every other map stay as they are.
//
// The input is untrusted and decoded exactly as Load decodes a map, with
// the same checks; the new map's derived data (cell counts, storage,
// regions) is built as after a load, so a world with a replaced map
// evolves exactly like a world loaded from the same encodings. The map
// gets a new version (MapVersion) even when the encoding is the one it
// had. ReplaceMap fails, leaving the world untouched, for a map ID the
// world does not have, for data that holds another map's ID and for
// anything the decoder refuses.
func (w *World) ReplaceMap(m lockstep.MapBlob) error {
	if w.mapByID(m.ID) == nil {
		return fmt.Errorf("colony: replace map %d: world has maps 0..%d", m.ID, len(w.maps)-1)
	}
	nm, err := decodeMap(w.r, m.ID, m.Data, m.Owned)
	if err != nil {
		return err
	}
	// The old map may share its terrain with a clone; the clone keeps it.
	w.maps[m.ID] = nm
	return nil
}
