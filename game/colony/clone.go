package colony

import (
	"slices"
	"sync/atomic"

	"github.com/lockhost/lockhost/lockstep"
)

var (
	_ lockstep.Cloner       = (*World)(nil)
	_ lockstep.MapVersioner = (*World)(nil)
)

// versionSeq hands out map versions. Versions are not state: they differ
// between processes and runs, and never enter an encoding or a hash.
var versionSeq atomic.Uint64

// newVersion returns a version no map of any world in this process has had.
func newVersion() uint64 { return versionSeq.Add(1) }

// MapVersion returns a number that changes whenever map id's encoding
// (MarshalMap) changes; 0 for an unknown map. It implements
// lockstep.MapVersioner.
//
// Every change of a map takes a number from one counter shared by all
// worlds of the process, so a version is never reused: two worlds (a
// world and its clone that was stepped on its own, or a world loaded
// again) never report the same version for different states. The number
// is not part of the state and differs between machines.
//
// A map with pawns gets a new version on every tick. A map without pawns
// changes only when a wild plant takes root (until it holds WildTarget
// plants) and on its rare ticks (one tick in RareTicks) while some plant
// grows or some stack decays; on all other ticks it keeps its version, and
// once its plants are grown and its food has rotted it keeps it for good.
// A command changes its map's version when accepted, not when refused. A
// clone starts with the versions of its original.
func (w *World) MapVersion(id int32) uint64 {
	m := w.mapByID(id)
	if m == nil {
		return 0
	}
	return m.version
}

// Clone returns a copy of the world that shares no mutable memory with it.
// It implements lockstep.Cloner: the host clones on the tick goroutine
// and encodes the clone elsewhere while the original steps on.
//
// The copy costs time in proportion to the things and pawns, not to the
// area: terrain never changes once a map exists, so the clone shares it.
// Derived data (cell counts, regions, path-search memory) is not copied;
// a clone rebuilds it the first time it is stepped or given a command,
// so a clone is a full World that evolves exactly like the original.
//
// Tick, MapIDs, MapVersion, MapHash, MapDigest, MapPartNames, WorldHash,
// MarshalWorld, MarshalMap and AppendMap only read the world, so any number of goroutines may call
// them at once on a world (a clone, typically) that nobody steps or
// commands meanwhile.
func (w *World) Clone() lockstep.Sim { return w.clone() }

func (w *World) clone() *World {
	c := &World{r: w.r, tick: w.tick, seed: w.seed, rng: w.rng, temp: w.temp, maps: make([]*gameMap, len(w.maps))}
	for i, m := range w.maps {
		c.maps[i] = m.clone()
	}
	c.fault = w.fault
	if w.faultAt(faultCloneDrop) != nil {
		for _, m := range c.maps {
			for i := range m.Pawns {
				m.Pawns[i].MoveCool = 0
			}
		}
	}
	return c
}

func (m *gameMap) clone() *gameMap {
	// Written only the first time: a clone is itself cloned (the host's
	// copies at checkpoints, by explanations running at once) without a
	// write to it.
	if !m.sharedTerr {
		m.sharedTerr = true
	}
	if m.terrainSum == nil {
		m.terrainSum = new(terrainSum)
	}
	c := &gameMap{
		ID:         m.ID,
		W:          m.W,
		H:          m.H,
		RNG:        m.RNG,
		NextID:     m.NextID,
		WildTarget: m.WildTarget,
		Terrain:    m.Terrain,
		sharedTerr: true,
		terrainSum: m.terrainSum,
		version:    m.version,
		changed:    m.changed,
	}
	if m.deadThings { // never between ticks: Step and Apply compact
		c.Things = compactSlice(slices.Clone(m.Things), func(t *thing) bool { return t.dead })
	} else {
		c.Things = slices.Clone(m.Things)
	}
	// Pawns, their paths in one block.
	cells := 0
	for i := range m.Pawns {
		cells += len(m.Pawns[i].Path)
	}
	paths := make([]int32, cells)
	c.Pawns = make([]pawn, 0, len(m.Pawns))
	for i := range m.Pawns {
		p := m.Pawns[i]
		if p.dead {
			continue
		}
		if p.Path != nil {
			n := copy(paths, p.Path)
			p.Path, paths = paths[:n:n], paths[n:]
		}
		c.Pawns = append(c.Pawns, p)
	}
	return c
}
