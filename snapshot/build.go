package snapshot

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/lockhost/lockhost/lockstep"
)

// State is the read-only view of a simulation a join point is built from:
// a clone of it (lockstep.Cloner), a Raw cut, or the simulation itself on
// the goroutine that owns it. Every lockstep.Sim is one.
type State interface {
	Tick() uint64
	MapIDs() []int32
	MapHash(id int32) (uint64, bool)
	WorldHash() uint64
	MarshalWorld() ([]byte, error)
	MarshalMap(id int32) ([]byte, error)
}

// BuildOptions tune Build. Every payload is built through them: a join
// point, a repair, a save and a new world written by the tools.
type BuildOptions struct {
	// Compression is the codec and level of every blob; the zero value is
	// gzip at DefaultLevel.
	Compression Compression
	// Maps, when not nil, are the maps to build, in this order: a
	// repair's. nil means every map, in MapIDs order.
	Maps []int32
	// Prev is the previous join point, whose blobs may be reused when
	// they are of the same codec.
	Prev *Point
	// Versions are the maps' versions (lockstep.MapVersioner) in MapIDs
	// order, read when the state was frozen; nil when unknown. A map whose
	// version equals its version in Prev reuses Prev's blob.
	Versions []uint64
	// Workers bounds the maps encoded and compressed at once (0 means
	// GOMAXPROCS). Each holds one map's raw bytes at a time.
	Workers int
}

// Build encodes and compresses src into a join point, maps in parallel.
// Only the maps being worked on are held raw, so building never needs the
// whole raw world in memory at once.
//
// When src is a lockstep.WorldHasher, every map is hashed once, by the
// worker that handles it, and the world hash is combined from those
// hashes; otherwise the world hash is src.WorldHash().
func Build(src State, opts BuildOptions) (*Point, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ids := opts.Maps
	if ids == nil {
		ids = src.MapIDs()
	}
	if opts.Versions != nil && len(opts.Versions) != len(ids) {
		return nil, fmt.Errorf("%d map versions for %d maps", len(opts.Versions), len(ids))
	}
	p := &Point{Tick: src.Tick(), Maps: make([]MapPoint, len(ids))}
	b := mapBuilder{src: src, ids: ids, opts: opts, prev: map[int32]MapPoint{}, out: p.Maps}
	if _, combine := src.(lockstep.WorldHasher); combine && opts.Maps == nil {
		b.hashes = make([]uint64, len(ids))
	}
	if opts.Prev != nil && opts.Prev.World.Codec == opts.Compression.Codec {
		for _, m := range opts.Prev.Maps {
			b.prev[m.ID] = m
		}
	}

	world, err := src.MarshalWorld()
	if err != nil {
		return nil, fmt.Errorf("marshal world: %w", err)
	}
	if p.World, err = Compress(world, opts.Compression); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	p.Compressed++

	errs := make([]error, len(ids))
	reused := make([]bool, len(ids))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, len(ids)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // this worker's encoding buffer, reused map to map
			for i := range work {
				reused[i], errs[i] = b.build(i, &buf)
			}
		}()
	}
	for i := range ids {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("map %d: %w", ids[i], err)
		}
		if reused[i] {
			p.Reused++
		} else {
			p.Compressed++
		}
	}
	if opts.Maps != nil {
		p.WorldHash = worldHash(src, ids, nil)
	} else {
		p.WorldHash = lockstep.WorldHashFrom(src, b.hashes)
	}
	return p, nil
}

// MapAppender is implemented by states that can encode a map into a
// buffer the caller reuses; Build then allocates no encoding per map.
type MapAppender interface {
	AppendMap(dst []byte, id int32) ([]byte, error)
}

// EncodingHasher is implemented by states whose MapHash is a hash of the
// map's encoding (the bytes MarshalMap returns) and of nothing else.
// Build then hashes the encoding it has just made, where MapHash would
// encode the map a second time.
type EncodingHasher interface {
	// MapHashOf returns what MapHash returns for the map whose encoding
	// is enc.
	MapHashOf(enc []byte) uint64
}

// mapBuilder builds the maps of one join point. Workers share it; each
// writes only the entries of the maps it builds.
type mapBuilder struct {
	src    State
	ids    []int32
	opts   BuildOptions
	prev   map[int32]MapPoint // the previous point's maps by ID
	out    []MapPoint         // in ids order
	hashes []uint64           // each map's current MapHash, when non-nil
}

// build fills out[i]: the previous point's blob when the map's version is
// unchanged, else a new one. With hashes, it also records the map's
// current hash there, for the world hash.
func (b *mapBuilder) build(i int, buf *[]byte) (reused bool, err error) {
	id := b.ids[i]
	if b.opts.Versions != nil {
		if pm, ok := b.prev[id]; ok && pm.Versioned && pm.Version == b.opts.Versions[i] {
			b.out[i] = pm
			if b.hashes != nil {
				// The world hash is of the current state: hash it rather
				// than trust the reused blob's hash.
				h, ok := b.src.MapHash(id)
				if !ok {
					return false, fmt.Errorf("no hash")
				}
				b.hashes[i] = h
			}
			return true, nil
		}
	}
	var data []byte
	if ma, ok := b.src.(MapAppender); ok {
		data, err = ma.AppendMap((*buf)[:0], id)
		*buf = data
	} else {
		data, err = b.src.MarshalMap(id)
	}
	if err != nil {
		return false, fmt.Errorf("marshal: %w", err)
	}
	var h uint64
	if eh, ok := b.src.(EncodingHasher); ok {
		h = eh.MapHashOf(data)
	} else if h, ok = b.src.MapHash(id); !ok {
		return false, fmt.Errorf("no hash")
	}
	blob, err := Compress(data, b.opts.Compression)
	if err != nil {
		return false, err
	}
	b.out[i] = MapPoint{ID: id, Blob: blob, StateHash: h}
	if sc, ok := b.src.(lockstep.Sectioner); ok {
		if sec, ok := sc.MapSection(id); ok && sec.Offset+sec.Len <= uint64(len(data)) && sec.Len > 0 {
			b.out[i].Section = &sec
		}
	}
	if b.opts.Versions != nil {
		b.out[i].Version, b.out[i].Versioned = b.opts.Versions[i], true
	}
	if b.hashes != nil {
		b.hashes[i] = h
	}
	return false, nil
}

// Versions reads the map versions of sim in MapIDs order, or nil if it
// does not keep them.
func Versions(sim lockstep.Sim) []uint64 {
	mv, ok := sim.(lockstep.MapVersioner)
	if !ok {
		return nil
	}
	ids := sim.MapIDs()
	vs := make([]uint64, len(ids))
	for i, id := range ids {
		vs[i] = mv.MapVersion(id)
	}
	return vs
}
