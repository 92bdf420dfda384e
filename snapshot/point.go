package snapshot

import (
	"fmt"
	"math"
	"slices"

	"github.com/lockhost/lockhost/lockstep"
)

// Raw is an uncompressed join point: the simulation's state at Tick, before
// any command stamped Tick was applied. It is cut on the simulation's
// goroutine and owns its bytes, so compressing it can run anywhere.
type Raw struct {
	Tick      uint64
	World     []byte
	Maps      []lockstep.MapBlob
	MapHashes []uint64
	WorldHash uint64
}

// Cut copies sim's state. It must run on the goroutine that owns sim.
func Cut(sim lockstep.Sim) (*Raw, error) {
	return CutMaps(sim, sim.MapIDs())
}

// CutMaps copies sim's world-level state and the maps ids (in the order
// given), with the hashes of the whole state: what a repair of those maps
// sends. It must run on the goroutine that owns sim.
func CutMaps(sim lockstep.Sim, ids []int32) (*Raw, error) {
	world, err := sim.MarshalWorld()
	if err != nil {
		return nil, fmt.Errorf("marshal world: %w", err)
	}
	r := &Raw{
		Tick:      sim.Tick(),
		World:     world,
		Maps:      make([]lockstep.MapBlob, 0, len(ids)),
		MapHashes: make([]uint64, 0, len(ids)),
	}
	for _, id := range ids {
		data, err := sim.MarshalMap(id)
		if err != nil {
			return nil, fmt.Errorf("marshal map %d: %w", id, err)
		}
		h, _ := sim.MapHash(id)
		r.Maps = append(r.Maps, lockstep.MapBlob{ID: id, Data: data})
		r.MapHashes = append(r.MapHashes, h)
	}
	r.WorldHash = worldHash(sim, ids, r.MapHashes)
	return r, nil
}

// worldHash is st's WorldHash given the MapHash of the maps ids, in that
// order. When st is a lockstep.WorldHasher and ids are exactly its
// MapIDs, it combines those hashes (WorldHashOf) instead of hashing every
// map again; otherwise it calls WorldHash.
func worldHash(st State, ids []int32, mapHashes []uint64) uint64 {
	if len(mapHashes) != len(ids) || !slices.Equal(ids, st.MapIDs()) {
		mapHashes = nil
	}
	return lockstep.WorldHashFrom(st, mapHashes)
}

// MapPoint is one compressed map of a join point.
type MapPoint struct {
	ID        int32
	Blob      Blob
	StateHash uint64
	// Version is the simulation's MapVersion when the blob was made, valid
	// when Versioned.
	Version   uint64
	Versioned bool
	// Section, when not nil, is the regenerable part of the map's
	// encoding (lockstep.Sectioner) the blob holds: a joiner that makes
	// it itself may be sent the map without it (ThinMaps).
	Section *lockstep.Section
}

// Point is a compressed join point. It is immutable once built and shared
// by every joiner that downloads it.
type Point struct {
	Tick      uint64
	World     Blob
	Maps      []MapPoint
	WorldHash uint64
	// Compressed counts the blobs compressed to build this point, Reused
	// the map blobs taken unchanged from the previous one.
	Compressed, Reused int
}

// RawSize is the total uncompressed size of the state.
func (p *Point) RawSize() uint64 {
	n := p.World.RawSize
	for _, m := range p.Maps {
		if n > math.MaxUint64-m.Blob.RawSize {
			return math.MaxUint64 // declared by a peer: it may claim anything
		}
		n += m.Blob.RawSize
	}
	return n
}

// CompressedSize is the total size of the blobs.
func (p *Point) CompressedSize() uint64 {
	n := uint64(len(p.World.Data))
	for _, m := range p.Maps {
		n += uint64(len(m.Blob.Data))
	}
	return n
}

// Compress compresses the world and every map with c, the maps
// concurrently.
func (r *Raw) Compress(c Compression) (*Point, error) {
	return Build(rawState{r}, BuildOptions{Compression: c})
}

// rawState lets a Raw serve as the State a Point is built from.
type rawState struct{ r *Raw }

func (s rawState) Tick() uint64      { return s.r.Tick }
func (s rawState) WorldHash() uint64 { return s.r.WorldHash }

func (s rawState) MapIDs() []int32 {
	ids := make([]int32, len(s.r.Maps))
	for i, m := range s.r.Maps {
		ids[i] = m.ID
	}
	return ids
}

func (s rawState) find(id int32) int {
	for i, m := range s.r.Maps {
		if m.ID == id {
			return i
		}
	}
	return -1
}

func (s rawState) MapHash(id int32) (uint64, bool) {
	if i := s.find(id); i >= 0 {
		return s.r.MapHashes[i], true
	}
	return 0, false
}

func (s rawState) MarshalWorld() ([]byte, error) { return s.r.World, nil }

func (s rawState) MarshalMap(id int32) ([]byte, error) {
	if i := s.find(id); i >= 0 {
		return s.r.Maps[i].Data, nil
	}
	return nil, fmt.Errorf("no map %d", id)
}

// State returns r as the State a Point is built from.
func (r *Raw) State() State { return rawState{r} }
