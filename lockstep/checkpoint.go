package lockstep

import "slices"

// DefaultHashEvery is the default interval, in ticks, of state-hash
// checkpoints: once a second at 60 ticks per second.
const DefaultHashEvery = 60

// MapCheckpoint is one map's hashes at a checkpoint.
type MapCheckpoint struct {
	ID    int32
	Hash  uint64
	Parts []uint64 // part hashes when the Sim is a MapDigester
}

// Checkpoint is a simulation's state hashes at one tick, taken right after
// the Step that reached Tick and before any command stamped Tick: every
// machine in the session takes it at the same point.
type Checkpoint struct {
	Tick  uint64
	World uint64
	Maps  []MapCheckpoint // in MapIDs order
}

// Map returns the hashes of map id, or nil.
func (c *Checkpoint) Map(id int32) *MapCheckpoint {
	i, ok := slices.BinarySearchFunc(c.Maps, id, func(m MapCheckpoint, id int32) int {
		switch {
		case m.ID < id:
			return -1
		case m.ID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &c.Maps[i]
}

// Hasher takes checkpoints of a simulation. With UseVersions it reuses a
// map's hashes while its MapVersion is unchanged and not 0 (the host does,
// to keep idle maps from costing anything); without, every map is hashed
// every time, so a state change the versions missed still shows. A Hasher
// with UseVersions must stay with one simulation: versions need only be
// unique within one.
type Hasher struct {
	UseVersions bool
	cache       map[int32]cachedMap
}

type cachedMap struct {
	version uint64
	hashes  MapCheckpoint
}

// Take hashes sim's current state. It must run on the goroutine that owns
// sim (or on a clone nobody else touches).
func (h *Hasher) Take(sim Sim) Checkpoint {
	ids := sim.MapIDs()
	c := Checkpoint{Tick: sim.Tick(), World: sim.WorldHash(), Maps: make([]MapCheckpoint, 0, len(ids))}
	dg, _ := sim.(MapDigester)
	mv, _ := sim.(MapVersioner)
	if !h.UseVersions {
		mv = nil
	}
	if mv != nil && h.cache == nil {
		h.cache = make(map[int32]cachedMap)
	}
	for _, id := range ids {
		var v uint64
		if mv != nil {
			v = mv.MapVersion(id)
			if cm, ok := h.cache[id]; ok && cm.version == v && v != 0 {
				c.Maps = append(c.Maps, cm.hashes)
				continue
			}
		}
		m := MapCheckpoint{ID: id}
		if dg != nil {
			m.Hash, m.Parts, _ = dg.MapDigest(id, nil)
		} else {
			m.Hash, _ = sim.MapHash(id)
		}
		if mv != nil {
			h.cache[id] = cachedMap{version: v, hashes: m}
		}
		c.Maps = append(c.Maps, m)
	}
	if mv != nil && len(h.cache) > len(ids) {
		for id := range h.cache {
			if !slices.Contains(ids, id) {
				delete(h.cache, id)
			}
		}
	}
	return c
}

// HashRing keeps the host's checkpoints of the last window of ticks, so
// client reports that arrive late can still be compared.
type HashRing struct {
	window uint64
	cps    []Checkpoint // ascending Tick
}

// NewHashRing keeps checkpoints whose tick is within window ticks of the
// newest.
func NewHashRing(window uint64) *HashRing { return &HashRing{window: window} }

// Add records a checkpoint newer than any held and drops those that fell
// out of the window.
func (r *HashRing) Add(c Checkpoint) {
	if n := len(r.cps); n > 0 && c.Tick <= r.cps[n-1].Tick {
		// A checkpoint for a tick already held (the session was paused
		// and stepped again): keep the first.
		return
	}
	r.cps = append(r.cps, c)
	i := 0
	for i < len(r.cps) && c.Tick-r.cps[i].Tick > r.window {
		i++
	}
	if i > 0 {
		r.cps = slices.Delete(r.cps, 0, i)
	}
}

// Get returns the checkpoint at tick, or nil.
func (r *HashRing) Get(tick uint64) *Checkpoint {
	i, ok := slices.BinarySearchFunc(r.cps, tick, func(c Checkpoint, t uint64) int {
		switch {
		case c.Tick < t:
			return -1
		case c.Tick > t:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &r.cps[i]
}

// Oldest is the tick of the oldest checkpoint held (0 when empty).
func (r *HashRing) Oldest() uint64 {
	if len(r.cps) == 0 {
		return 0
	}
	return r.cps[0].Tick
}

// Newest is the tick of the newest checkpoint held (0 when empty).
func (r *HashRing) Newest() uint64 {
	if len(r.cps) == 0 {
		return 0
	}
	return r.cps[len(r.cps)-1].Tick
}
