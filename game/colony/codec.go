package colony

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

// Encoding. Both blobs start with a 4-byte magic, a version byte and the
// content fingerprint (8 bytes, little endian). Integers are unsigned
// varints unless noted; PRNG states and the seed are 8 bytes little endian.
//
// World: tick, seed, rng, temperature (zig-zag varint), map count.
//
// Map: id, width, height, rng, next ID, wild target, terrain (one byte per
// cell, row-major), things (count, then per thing: ID delta, def, x, y,
// count, hit points, growth, flags, reserving pawn ID), pawns (count, then
// per pawn: ID delta, kind, x, y, hunger, health, cool, move cool, job kind,
// job target, job x, job y, job progress, ignored thing, carried def+1
// [count, hit points], path length, path cells).
//
// MapHash is xxhash64 of exactly the bytes MarshalMap returns, computed
// without building them in one buffer.
const (
	codecVersion = 1
	worldMagic   = "LHCW"
	mapMagic     = "LHCM"

	maxCool = 1 << 20 // bound on encoded cool-downs and progress
	maxTemp = 100

	minThingBytes = 9  // fewest bytes one encoded thing takes
	minPawnBytes  = 16 // fewest bytes one encoded pawn takes
)

// encoder appends to buf; with a digest it flushes buf into the digest
// every few KB so hashing needs no full-size buffer. With part digests
// too (MapDigest, digest.go) every byte flushed into d also goes into the
// digest of the current part, and each thing and pawn record into the
// digest of its quarter.
type encoder struct {
	buf []byte
	d   *xxhash.Digest
	p   *partDigests // only with d
	// noHunger writes every pawn's hunger as 0: a planted faultEncodeDrop.
	noHunger bool
}

func (e *encoder) uv(v uint64)  { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) i32(v int32)  { e.buf = binary.AppendUvarint(e.buf, uint64(uint32(v))) }
func (e *encoder) sv(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) u64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }

func (e *encoder) flush() {
	if e.d != nil && len(e.buf) > 0 {
		_, _ = e.d.Write(e.buf)
		if e.p != nil {
			_, _ = e.p.cur.Write(e.buf)
			e.p.start = 0
		}
		e.buf = e.buf[:0]
	}
}

// record ends one record: flush when the buffer has grown.
func (e *encoder) record() {
	if e.d != nil && len(e.buf) >= 4096 {
		e.flush()
	}
}

func (e *encoder) raw(b []byte) {
	if e.d != nil {
		e.flush()
		_, _ = e.d.Write(b)
		if e.p != nil && (e.p.terrain == nil || e.p.cur != &e.p.d[partTerrain]) {
			_, _ = e.p.cur.Write(b)
		}
		return
	}
	e.buf = append(e.buf, b...)
}

func (w *World) encodeWorld(e *encoder) {
	e.buf = append(e.buf, worldMagic...)
	e.buf = append(e.buf, codecVersion)
	e.u64(w.r.fingerprint)
	e.uv(w.tick)
	e.u64(w.seed)
	e.u64(w.rng.s)
	e.sv(int64(w.temp))
	e.uv(uint64(len(w.maps)))
}

func (w *World) encodeMap(m *gameMap, e *encoder) {
	e.noHunger = w.faultAt(faultEncodeDrop) != nil
	w.encodeMapPrefix(m, e)
	e.part(partTerrain)
	m.Terrain.chunks(e.raw)
	e.part(partThings)
	e.things(m)
	e.part(partPawns)
	e.pawns(m)
	e.flush()
}

// encodeMapPrefix encodes what comes before the terrain in a map's
// encoding.
func (w *World) encodeMapPrefix(m *gameMap, e *encoder) {
	e.buf = append(e.buf, mapMagic...)
	e.buf = append(e.buf, codecVersion)
	e.u64(w.r.fingerprint)
	e.i32(m.ID)
	e.i32(m.W)
	e.i32(m.H)
	e.u64(m.RNG.s)
	e.i32(m.NextID)
	e.i32(m.WildTarget)
}

// things encodes the map's live things: their count, then one record
// each, IDs as deltas from the one before.
func (e *encoder) things(m *gameMap) {
	live := 0
	for i := range m.Things {
		if !m.Things[i].dead {
			live++
		}
	}
	e.uv(uint64(live))
	e.recordsStart()
	prev := int32(0)
	for i := range m.Things {
		t := &m.Things[i]
		if t.dead {
			continue
		}
		e.i32(t.ID - prev)
		prev = t.ID
		e.i32(t.Def)
		e.i32(t.X)
		e.i32(t.Y)
		e.i32(t.Count)
		e.i32(t.HP)
		e.i32(t.Growth)
		e.uv(uint64(t.Flags))
		e.i32(t.Reserved)
		if e.p != nil {
			e.p.record(e, partThingsQ1, t.ID, t.Y, m.H)
		}
		e.record()
	}
}

// pawns encodes the map's live pawns: their count, then one record each,
// IDs as deltas from the one before.
func (e *encoder) pawns(m *gameMap) {
	live := 0
	for i := range m.Pawns {
		if !m.Pawns[i].dead {
			live++
		}
	}
	e.uv(uint64(live))
	e.recordsStart()
	prev := int32(0)
	for i := range m.Pawns {
		p := &m.Pawns[i]
		if p.dead {
			continue
		}
		e.i32(p.ID - prev)
		prev = p.ID
		e.i32(p.Kind)
		e.i32(p.X)
		e.i32(p.Y)
		if e.noHunger {
			e.i32(0)
		} else {
			e.i32(p.Hunger)
		}
		e.i32(p.Health)
		e.i32(p.Cool)
		e.i32(p.MoveCool)
		e.uv(uint64(p.Job.Kind))
		e.i32(p.Job.Target)
		e.i32(p.Job.X)
		e.i32(p.Job.Y)
		e.i32(p.Job.Progress)
		e.i32(p.Ignore)
		e.i32(p.Carry.Def + 1)
		if p.Carry.Def >= 0 {
			e.i32(p.Carry.Count)
			e.i32(p.Carry.HP)
		}
		e.uv(uint64(len(p.Path)))
		for _, c := range p.Path {
			e.i32(c)
		}
		if e.p != nil {
			e.p.record(e, partPawnsQ1, p.ID, p.Y, m.H)
		}
		e.record()
	}
}

// MarshalWorld encodes the world-level state: tick, seed, PRNG,
// temperature and the number of maps.
func (w *World) MarshalWorld() ([]byte, error) {
	e := encoder{buf: make([]byte, 0, 64)}
	w.encodeWorld(&e)
	return e.buf, nil
}

// MarshalMap encodes one map.
func (w *World) MarshalMap(id int32) ([]byte, error) {
	m := w.mapByID(id)
	if m == nil {
		return nil, fmt.Errorf("colony: unknown map %d", id)
	}
	return w.AppendMap(make([]byte, 0, m.encodedSizeHint()), id)
}

// AppendMap appends the encoding of map id (the bytes MarshalMap returns)
// to dst and returns the extended buffer. Reusing one buffer for many
// maps spares an allocation of the map's size per call, which for big
// maps is most of MarshalMap's cost.
func (w *World) AppendMap(dst []byte, id int32) ([]byte, error) {
	m := w.mapByID(id)
	if m == nil {
		return dst, fmt.Errorf("colony: unknown map %d", id)
	}
	dst = slices.Grow(dst, m.encodedSizeHint())
	e := encoder{buf: dst}
	w.encodeMap(m, &e)
	return e.buf, nil
}

// encodedSizeHint is a generous estimate of the map's encoded size.
func (m *gameMap) encodedSizeHint() int {
	n := m.Terrain.len() + 24*len(m.Things) + 64*len(m.Pawns) + 64
	for i := range m.Pawns {
		n += 4 * len(m.Pawns[i].Path)
	}
	return n
}

// MapHash is xxhash64 of the map's encoding; ok is false for an unknown map.
func (w *World) MapHash(id int32) (uint64, bool) {
	m := w.mapByID(id)
	if m == nil {
		return 0, false
	}
	return w.mapHash(m), true
}

func (w *World) mapHash(m *gameMap) uint64 {
	if m.loadedHash.version == m.version && m.version != 0 {
		return m.loadedHash.hash
	}
	return w.encodeHash(m)
}

// encodeHash hashes m's encoding.
func (w *World) encodeHash(m *gameMap) uint64 {
	e := encoder{buf: make([]byte, 0, 8192), d: xxhash.New()}
	w.encodeMap(m, &e)
	return e.d.Sum64()
}

// mapMemo is a map's hash at one version. The load sets it once, on the
// goroutine decoding the map, before the world is handed out, so a
// joiner's check of every loaded map against the host's hashes costs
// nothing more and the hashing runs on the cores that decode; nothing
// writes it later, so reading the world stays safe from any number of
// goroutines. It is stale from the map's first change.
type mapMemo struct{ version, hash uint64 }

// forMaps runs f(worker, i) for i in [0, n) on up to GOMAXPROCS workers,
// worker 0 the calling goroutine, and returns when every call has:
// stepping or hashing a big world's maps one after the other would use
// one core of several. Each f must touch only what belongs to its own i
// and its own worker.
func forMaps(n int, f func(worker, i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	run := func(k int) {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			f(k, i)
		}
	}
	var wg sync.WaitGroup
	for k := 1; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(k)
		}()
	}
	run(0)
	wg.Wait()
}

// MapHashOf is MapHash of the map whose encoding (MarshalMap) is enc: a
// builder that has just encoded a map hashes those bytes instead of
// encoding the map again. It implements snapshot.EncodingHasher.
func (w *World) MapHashOf(enc []byte) uint64 { return xxhash.Sum64(enc) }

// WorldHash is xxhash64 over the world-level encoding followed by every
// map's hash (8 bytes little endian) in ID order.
func (w *World) WorldHash() uint64 {
	hs := make([]uint64, len(w.maps))
	forMaps(len(w.maps), func(_, i int) { hs[i] = w.mapHash(w.maps[i]) })
	return w.WorldHashOf(hs)
}

// WorldHashOf is WorldHash given every map's MapHash in ID order (it
// implements lockstep.WorldHasher); a wrong count gives a hash that
// matches nothing.
func (w *World) WorldHashOf(mapHashes []uint64) uint64 {
	e := encoder{buf: make([]byte, 0, 64+8*len(mapHashes))}
	w.encodeWorld(&e)
	for _, h := range mapHashes {
		e.u64(h)
	}
	return xxhash.Sum64(e.buf)
}

// decoder reads untrusted bytes; the first error sticks and later reads
// return zero values.
type decoder struct {
	b    []byte
	off  int
	err  error
	what string // "world" or "map N", for messages
}

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("colony: load %s: %s (at byte %d)", d.what, fmt.Sprintf(format, args...), d.off)
	}
}

func (d *decoder) left() int { return len(d.b) - d.off }

func (d *decoder) uv(field string, hi uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.failf("%s: truncated or malformed varint", field)
		return 0
	}
	if v > hi {
		d.failf("%s = %d, want at most %d", field, v, hi)
		return 0
	}
	d.off += n
	return v
}

// rng32 reads an unsigned varint in lo..hi (hi <= MaxInt32).
func (d *decoder) rng32(field string, lo, hi int32) int32 {
	v := d.uv(field, uint64(hi))
	if d.err == nil && v < uint64(lo) {
		d.failf("%s = %d, want at least %d", field, v, lo)
		return 0
	}
	return int32(v)
}

func (d *decoder) sv(field string, lo, hi int64) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.failf("%s: truncated or malformed varint", field)
		return 0
	}
	if v < lo || v > hi {
		d.failf("%s = %d, want %d..%d", field, v, lo, hi)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) u64(field string) uint64 {
	if d.err != nil {
		return 0
	}
	if d.left() < 8 {
		d.failf("%s: truncated", field)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

func (d *decoder) bytes(field string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || d.left() < n {
		d.failf("%s: %d bytes needed, %d left", field, n, d.left())
		return nil
	}
	b := d.b[d.off : d.off+n]
	d.off += n
	return b
}

// count reads how many items follow, at most limit, each at least minBytes
// long once encoded, and fails when that many cannot fit in what is left:
// every count is checked before anything is allocated for it.
func (d *decoder) count(field string, limit uint64, minBytes int) int {
	n := int(d.uv(field, limit))
	if d.err == nil && n*minBytes > d.left() {
		d.failf("%s %d does not fit in %d bytes", field, n, d.left())
	}
	if d.err != nil {
		return 0
	}
	return n
}

func (d *decoder) header(magic string, fp uint64) {
	h := d.bytes("header", len(magic)+1)
	if d.err != nil {
		return
	}
	if string(h[:len(magic)]) != magic {
		d.failf("not a colony %s blob", d.what)
		return
	}
	if h[len(magic)] != codecVersion {
		d.failf("encoding version %d, want %d", h[len(magic)], codecVersion)
		return
	}
	if got := d.u64("content fingerprint"); d.err == nil && got != fp {
		d.failf("built for other content (fingerprint %016x, this content is %016x)", got, fp)
	}
}

func (d *decoder) end() {
	if d.err == nil && d.left() != 0 {
		d.failf("%d trailing bytes", d.left())
	}
}

// Loader returns a lockstep.Loader that rebuilds worlds for content. A
// world encoded for different content is refused.
func Loader(content *Content) lockstep.Loader {
	r, err := compile(content)
	return func(world []byte, maps []lockstep.MapBlob) (lockstep.Sim, error) {
		if err != nil {
			return nil, err
		}
		w, err := load(r, world, maps)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}

// MapLoader returns a lockstep.MapLoader that rebuilds worlds for content
// one map at a time: Begin decodes the world-level state, AddMap decodes
// one map (in any order) and keeps nothing of its bytes, Finish checks
// that every map arrived. A joiner that drops each map's bytes after
// AddMap needs memory for the loaded world plus one encoded map, not for
// the whole encoding on top. The decoding, its checks and the result are
// exactly those of Load, which runs the same steps.
//
// An assembly that returned an error is spent: every later call returns
// that error, and it drops the maps decoded so far. So is one that
// finished.
func MapLoader(content *Content) lockstep.MapLoader {
	r, err := compile(content)
	return mapLoader{r: r, err: err}
}

type mapLoader struct {
	r   *rules
	err error // from compiling the content
}

var _ lockstep.MapLoader = mapLoader{}

// Begin decodes the world-level state of a world announced to have maps
// maps; the count must match the one encoded.
func (l mapLoader) Begin(world []byte, maps int) (lockstep.MapAssembly, error) {
	if l.err != nil {
		return nil, l.err
	}
	a, err := begin(l.r, world, maps)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Load rebuilds a World from the output of MarshalWorld and MarshalMap.
// The input is untrusted: anything malformed gives an error, never a panic.
func Load(content *Content, world []byte, maps []lockstep.MapBlob) (*World, error) {
	r, err := compile(content)
	if err != nil {
		return nil, err
	}
	return load(r, world, maps)
}

// load is begin, addMap for each map in ID order and finish: the one
// decoding path of Load, Loader and MapLoader.
func load(r *rules, world []byte, maps []lockstep.MapBlob) (*World, error) {
	a, err := begin(r, world, len(maps))
	if err != nil {
		return nil, err
	}
	blobs := slices.Clone(maps)
	slices.SortStableFunc(blobs, func(a, b lockstep.MapBlob) int { return cmp.Compare(a.ID, b.ID) })
	for _, b := range blobs {
		if err := a.addMap(b); err != nil {
			return nil, err
		}
	}
	return a.finish()
}

// assembly is a World being rebuilt map by map (lockstep.MapAssembly).
// AddMap may run on several goroutines at once: each decodes its map
// alone and only takes the lock to check and record it
// (lockstep.ConcurrentMapAssembly).
type assembly struct {
	mu      sync.Mutex
	w       *World // nil once finished or failed
	added   int    // maps decoded so far
	pending []bool // maps being decoded now, by ID
	err     error  // first error; sticks
}

var _ lockstep.ConcurrentMapAssembly = (*assembly)(nil)

var errFinished = errors.New("colony: load: world already finished")

// begin decodes the world-level state of a world said to have maps maps.
func begin(r *rules, world []byte, maps int) (*assembly, error) {
	d := &decoder{b: world, what: "world"}
	d.header(worldMagic, r.fingerprint)
	w := &World{r: r}
	w.tick = d.uv("tick", 1<<63)
	w.seed = d.u64("seed")
	w.rng.s = d.u64("rng")
	w.temp = int32(d.sv("temperature", -maxTemp, maxTemp))
	n := int(d.uv("map count", MaxMaps))
	if d.err == nil && n < 1 {
		d.failf("no maps")
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	if maps != n {
		return nil, fmt.Errorf("colony: load: world has %d maps, %d given", n, maps)
	}
	w.maps = make([]*gameMap, n)
	return &assembly{w: w, pending: make([]bool, n)}, nil
}

// AddMap decodes one map. It keeps no reference to m.Data unless m.Owned.
func (a *assembly) AddMap(m lockstep.MapBlob) error { return a.addMap(m) }

// ConcurrentAddMap marks AddMap as safe to call from several goroutines
// at once.
func (*assembly) ConcurrentAddMap() {}

func (a *assembly) addMap(b lockstep.MapBlob) error {
	w, err := a.claim(b.ID)
	if err != nil {
		return err
	}
	m, err := decodeMap(w.r, b.ID, b.Data, b.Owned)
	if err == nil {
		m.loadedHash = mapMemo{m.version, w.encodeHash(m)}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pending[b.ID] = false
	if a.err != nil {
		return a.err // another map failed meanwhile
	}
	if err != nil {
		a.err, a.w = err, nil
		return err
	}
	w.maps[b.ID] = m
	a.added++
	return nil
}

// claim checks that map id may be added now and marks it pending.
func (a *assembly) claim(id int32) (*World, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return nil, a.err
	}
	w := a.w
	if w == nil {
		return nil, errFinished
	}
	n := len(w.maps)
	var err error
	switch {
	case a.added == n:
		err = fmt.Errorf("colony: load: map %d given after all %d maps", id, n)
	case id < 0 || int(id) >= n:
		err = fmt.Errorf("colony: load: map ID %d, world has maps 0..%d", id, n-1)
	case w.maps[id] != nil || a.pending[id]:
		err = fmt.Errorf("colony: load: map %d given twice", id)
	}
	if err != nil {
		a.err, a.w = err, nil
		return nil, err
	}
	a.pending[id] = true
	return w, nil
}

// Finish checks that every map arrived and returns the world.
func (a *assembly) Finish() (lockstep.Sim, error) {
	w, err := a.finish()
	if err != nil {
		return nil, err
	}
	return w, nil
}

// finish checks that every map arrived. Each map is complete once
// decoded (its derived data and regions built in addMap) and maps share
// nothing, so nothing is left to do across maps.
func (a *assembly) finish() (*World, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return nil, a.err
	}
	w := a.w
	if w == nil {
		return nil, errFinished
	}
	if a.added < len(w.maps) {
		first := slices.Index(w.maps, nil)
		a.err = fmt.Errorf("colony: load: %d of %d maps missing (map %d the first)", len(w.maps)-a.added, len(w.maps), first)
		a.w = nil
		return nil, a.err
	}
	a.w = nil
	return w, nil
}

// badTerrain returns the index of the first byte of b that is n or more,
// or -1. It tests eight bytes at once: for a byte x below 128, x+128-n
// has its top bit set exactly when x >= n, and a byte of 128 or more has
// it set already; carries between bytes only come from such bytes, so
// they can raise false alarms, which the byte loop then sorts out, but
// never hide a bad byte.
func badTerrain(b []byte, n int) int {
	i := 0
	if n <= 128 {
		add := 0x0101010101010101 * uint64(128-n)
		for ; i+8 <= len(b); i += 8 {
			x := binary.LittleEndian.Uint64(b[i:])
			if (x+add|x)&0x8080808080808080 != 0 {
				break
			}
		}
	}
	for ; i < len(b); i++ {
		if int(b[i]) >= n {
			return i
		}
	}
	return -1
}

// decodeMap decodes map id from data. With owned (the caller handed data
// over, lockstep.MapBlob.Owned) and content of more than nibbleTerrains
// terrain types, the terrain stays where it is in data, most of a map's
// bytes, rather than being copied out; with fewer types it is packed to
// half its size and data is not kept.
func decodeMap(r *rules, id int32, data []byte, owned bool) (*gameMap, error) {
	d := &decoder{b: data, what: fmt.Sprintf("map %d", id)}
	d.header(mapMagic, r.fingerprint)
	m := &gameMap{}
	m.ID = d.rng32("map ID", 0, MaxMaps-1)
	if d.err == nil && m.ID != id {
		d.failf("blob holds map %d", m.ID)
	}
	m.W = d.rng32("width", MinSide, MaxSide)
	m.H = d.rng32("height", MinSide, MaxSide)
	m.RNG.s = d.u64("rng")
	m.NextID = d.rng32("next ID", 1, maxID)
	m.WildTarget = d.rng32("wild target", 0, MaxThingsPerMap)
	terrain := d.bytes("terrain", int(m.W)*int(m.H))
	if d.err != nil {
		return nil, d.err
	}
	if i := badTerrain(terrain, len(r.terrains)); i >= 0 {
		d.off -= len(terrain) - i
		d.failf("cell %d: terrain %d, content has %d", i, terrain[i], len(r.terrains))
		return nil, d.err
	}
	// With owned and the one-byte layout, data holds the terrain; else it
	// is copied (packed), as data is the caller's: a MapLoader's caller
	// reuses it.
	m.Terrain = packTerrain(terrain, len(r.terrains), owned)
	m.terrainSum = new(terrainSum)
	if err := d.mapThings(r, m); err != nil {
		return nil, err
	}
	if err := d.mapPawns(r, m); err != nil {
		return nil, err
	}
	d.end()
	if d.err != nil {
		return nil, d.err
	}
	for i := range m.Things {
		if res := m.Things[i].Reserved; res != 0 && m.findPawn(res) < 0 {
			return nil, fmt.Errorf("colony: load map %d: thing %d reserved by unknown pawn %d", id, m.Things[i].ID, res)
		}
	}
	m.rebuildDerived(r)
	if len(m.Pawns) > 0 {
		m.regions(r) // now rather than on the first ticks: big maps take milliseconds
	}
	m.version = newVersion()
	return m, nil
}

// mapThings decodes the things of map m, checked against r's rules.
func (d *decoder) mapThings(r *rules, m *gameMap) error {
	n := d.count("thing count", MaxThingsPerMap, minThingBytes)
	if d.err != nil {
		return d.err
	}
	// Room for things to come: a map gains a few every hundred ticks,
	// and a slice that is exactly full is copied whole (and the old one
	// left as garbage) at the first, on every map, while a joiner catches
	// up. A thirty-second more covers a thousand ticks or so of a busy
	// map.
	m.Things = make([]thing, 0, n+n/32+64)
	prev := int32(0)
	for range n {
		var t thing
		t.ID = prev + d.rng32("thing ID delta", 1, maxID-prev)
		prev = t.ID
		t.Def = d.rng32("thing def", 0, int32(len(r.things)-1))
		t.X = d.rng32("thing x", 0, m.W-1)
		t.Y = d.rng32("thing y", 0, m.H-1)
		if d.err != nil {
			return d.err
		}
		tr := &r.things[t.Def]
		t.Count = d.rng32("thing count", 1, tr.stackLimit)
		t.HP = d.rng32("thing hit points", 1, tr.hitPoints)
		t.Growth = d.rng32("thing growth", 0, tr.growTicks)
		t.Flags = uint8(d.uv("thing flags", uint64(flagMask)))
		t.Reserved = d.rng32("thing reserved by", 0, maxID)
		if d.err == nil && t.Flags&flagUnsown != 0 && (tr.cat != catPlant || !tr.sowable) {
			d.failf("thing %d: unsown flag on a thing that is not a crop", t.ID)
		}
		if d.err == nil && t.ID >= m.NextID {
			d.failf("thing ID %d not below next ID %d", t.ID, m.NextID)
		}
		if d.err != nil {
			return d.err
		}
		m.Things = append(m.Things, t)
	}
	return nil
}

// mapPawns decodes the pawns of map m, checked against r's rules.
func (d *decoder) mapPawns(r *rules, m *gameMap) error {
	cells := m.W * m.H
	n := d.count("pawn count", MaxPawnsPerMap, minPawnBytes)
	if d.err != nil {
		return d.err
	}
	m.Pawns = make([]pawn, 0, n)
	prev := int32(0)
	for range n {
		var p pawn
		p.ID = prev + d.rng32("pawn ID delta", 1, maxID-prev)
		prev = p.ID
		p.Kind = d.rng32("pawn kind", 0, int32(len(r.kinds)-1))
		if d.err != nil {
			return d.err
		}
		k := &r.kinds[p.Kind]
		p.X = d.rng32("pawn x", 0, m.W-1)
		p.Y = d.rng32("pawn y", 0, m.H-1)
		p.Hunger = d.rng32("pawn hunger", 0, k.starveAt)
		p.Health = d.rng32("pawn health", 1, k.maxHealth)
		p.Cool = d.rng32("pawn cool", 0, maxCool)
		p.MoveCool = d.rng32("pawn move cool", 0, maxCool)
		p.Job.Kind = uint8(d.uv("job kind", uint64(jobCount-1)))
		p.Job.Target = d.rng32("job target", 0, maxID)
		p.Job.X = d.rng32("job x", 0, m.W-1)
		p.Job.Y = d.rng32("job y", 0, m.H-1)
		p.Job.Progress = d.rng32("job progress", 0, maxCool)
		p.Ignore = d.rng32("ignored thing", 0, maxID)
		p.Carry.Def = d.rng32("carried def", 0, int32(len(r.things))) - 1
		if d.err == nil && p.Carry.Def >= 0 {
			tr := &r.things[p.Carry.Def]
			if tr.cat != catItem && tr.cat != catFood {
				d.failf("pawn %d carries a thing that is not an item or food", p.ID)
			}
			p.Carry.Count = d.rng32("carried count", 1, tr.stackLimit)
			p.Carry.HP = d.rng32("carried hit points", 1, tr.hitPoints)
		}
		pl := d.count("path length", maxPathLen, 1)
		if d.err != nil {
			return d.err
		}
		if pl > 0 {
			p.Path = make([]int32, pl)
			for j := range p.Path {
				p.Path[j] = d.rng32("path cell", 0, cells-1)
			}
		}
		if d.err == nil && p.ID >= m.NextID {
			d.failf("pawn ID %d not below next ID %d", p.ID, m.NextID)
		}
		if d.err != nil {
			return d.err
		}
		m.Pawns = append(m.Pawns, p)
	}
	return nil
}
