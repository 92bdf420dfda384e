package lockstep

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

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
	i, ok := slices.BinarySearchFunc(c.Maps, id, func(m MapCheckpoint, id int32) int { return cmp.Compare(m.ID, id) })
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
	// Workers hashes up to this many maps at once (0 or 1: one at a
	// time). Only for a simulation whose read methods may run
	// concurrently while nobody changes it, as a Cloner's clone is.
	Workers int
	cache   map[int32]cachedMap
}

type cachedMap struct {
	version uint64
	hashes  MapCheckpoint
}

// Take hashes sim's current state. It must run on the goroutine that owns
// sim (or on a clone nobody else touches).
func (h *Hasher) Take(sim Sim) Checkpoint {
	ids := sim.MapIDs()
	c := Checkpoint{Tick: sim.Tick(), Maps: make([]MapCheckpoint, 0, len(ids))}
	dg, _ := sim.(MapDigester)
	mv, _ := sim.(MapVersioner)
	if !h.UseVersions {
		mv = nil
	}
	if mv != nil && h.cache == nil {
		h.cache = make(map[int32]cachedMap)
	}
	c.Maps = c.Maps[:len(ids)]
	var versions []uint64 // MapVersion of each map, when mv is used
	if mv != nil {
		versions = make([]uint64, len(ids))
	}
	var todo []int // indexes of maps to hash
	for i, id := range ids {
		if mv != nil {
			versions[i] = mv.MapVersion(id)
			if cm, ok := h.cache[id]; ok && cm.version == versions[i] && versions[i] != 0 {
				c.Maps[i] = cm.hashes
				continue
			}
		}
		todo = append(todo, i)
	}
	hash := func(i int) {
		m := MapCheckpoint{ID: ids[i]}
		if dg != nil {
			m.Hash, m.Parts, _ = dg.MapDigest(ids[i], nil)
		} else {
			m.Hash, _ = sim.MapHash(ids[i])
		}
		c.Maps[i] = m
	}
	if h.Workers > 1 && len(todo) > 1 {
		var wg sync.WaitGroup
		var next atomic.Int64
		for w := 0; w < min(h.Workers, len(todo)); w++ {
			wg.Go(func() {
				for j := next.Add(1) - 1; j < int64(len(todo)); j = next.Add(1) - 1 {
					hash(todo[j])
				}
			})
		}
		wg.Wait()
	} else {
		for _, i := range todo {
			hash(i)
		}
	}
	if mv != nil {
		for _, i := range todo {
			h.cache[ids[i]] = cachedMap{version: versions[i], hashes: c.Maps[i]}
		}
	}
	if mv != nil && len(h.cache) > len(ids) {
		for id := range h.cache {
			if !slices.Contains(ids, id) {
				delete(h.cache, id)
			}
		}
	}
	var hs []uint64
	if _, ok := sim.(WorldHasher); ok {
		hs = make([]uint64, len(c.Maps))
		for i, m := range c.Maps {
			hs[i] = m.Hash
		}
	}
	c.World = WorldHashFrom(sim, hs)
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
	i, ok := slices.BinarySearchFunc(r.cps, tick, func(c Checkpoint, t uint64) int { return cmp.Compare(c.Tick, t) })
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

// Checkpointer takes checkpoints without stalling the goroutine that owns
// the simulation, when it can: for a Cloner it only clones there, and a
// goroutine of its own hashes the clone, maps in parallel, and hands the
// result to the function given to NewCheckpointer. For other simulations
// Take hashes at once. Clones wait in a short queue; when hashing falls
// that far behind, a checkpoint is skipped (and counted) rather than
// letting clones pile up.
type Checkpointer struct {
	hasher  Hasher
	out     func(Checkpoint)
	queue   chan Sim
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	skipped atomic.Int64
}

// NewCheckpointer starts a checkpointer that hashes clones with up to
// workers goroutines and passes each checkpoint to out, on its own
// goroutine, in tick order.
func NewCheckpointer(useVersions bool, workers int, out func(Checkpoint)) *Checkpointer {
	c := &Checkpointer{
		hasher: Hasher{UseVersions: useVersions, Workers: workers},
		out:    out,
		queue:  make(chan Sim, 2),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go c.run()
	return c
}

func (c *Checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case sim := <-c.queue:
			c.out(c.hasher.Take(sim))
		case <-c.stop:
			return
		}
	}
}

// Take checkpoints sim's current state. For a Cloner it queues a clone
// and returns ok false (the checkpoint comes through out); otherwise it
// returns the checkpoint. It must run on the goroutine that owns sim.
func (c *Checkpointer) Take(sim Sim) (cp Checkpoint, ok bool) {
	cl, isCloner := sim.(Cloner)
	if !isCloner {
		return c.hasher.takeAlone(sim), true
	}
	select {
	case <-c.stop:
		return Checkpoint{}, false // closed
	default:
	}
	// Take is the queue's only sender and runs on one goroutine, so a
	// queue with room keeps it until the send: a checkpoint that would be
	// skipped is counted without cloning the world for nothing.
	if len(c.queue) == cap(c.queue) {
		c.skipped.Add(1)
		return Checkpoint{}, false
	}
	select {
	case c.queue <- cl.Clone():
	default:
		c.skipped.Add(1) // cannot happen with one sender; never block the owner
	}
	return Checkpoint{}, false
}

// Skipped is how many checkpoints were skipped because hashing fell
// behind.
func (c *Checkpointer) Skipped() int64 { return c.skipped.Load() }

// Close stops the checkpointer and waits for a checkpoint being hashed.
func (c *Checkpointer) Close() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}

// takeAlone is Take on one goroutine, whatever Workers says: for a
// simulation that promises nothing about concurrent reads.
func (h *Hasher) takeAlone(sim Sim) Checkpoint {
	w := h.Workers
	h.Workers = 0
	defer func() { h.Workers = w }()
	return h.Take(sim)
}
