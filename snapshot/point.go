package snapshot

import (
	"fmt"
	"sync"

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
	world, err := sim.MarshalWorld()
	if err != nil {
		return nil, fmt.Errorf("marshal world: %w", err)
	}
	ids := sim.MapIDs()
	r := &Raw{
		Tick:      sim.Tick(),
		World:     world,
		Maps:      make([]lockstep.MapBlob, 0, len(ids)),
		MapHashes: make([]uint64, 0, len(ids)),
		WorldHash: sim.WorldHash(),
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
	return r, nil
}

// MapPoint is one compressed map of a join point.
type MapPoint struct {
	ID        int32
	Blob      Blob
	StateHash uint64
}

// Point is a compressed join point. It is immutable once built and shared
// by every joiner that downloads it.
type Point struct {
	Tick      uint64
	World     Blob
	Maps      []MapPoint
	WorldHash uint64
}

// RawSize is the total uncompressed size of the state.
func (p *Point) RawSize() uint64 {
	n := p.World.RawSize
	for _, m := range p.Maps {
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

// Compress compresses the world and every map, the maps concurrently.
func (r *Raw) Compress(level int) (*Point, error) {
	p := &Point{Tick: r.Tick, WorldHash: r.WorldHash, Maps: make([]MapPoint, len(r.Maps))}
	errs := make([]error, len(r.Maps)+1)
	var wg sync.WaitGroup
	for i, m := range r.Maps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := Compress(m.Data, level)
			p.Maps[i] = MapPoint{ID: m.ID, Blob: b, StateHash: r.MapHashes[i]}
			errs[i+1] = err
		}()
	}
	p.World, errs[0] = Compress(r.World, level)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			if i == 0 {
				return nil, fmt.Errorf("world: %w", err)
			}
			return nil, fmt.Errorf("map %d: %w", r.Maps[i-1].ID, err)
		}
	}
	return p, nil
}
