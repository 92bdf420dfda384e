package colony

import (
	"slices"

	"github.com/lockhost/lockhost/lockstep"
)

// Thing flags.
const (
	flagUnsown uint8 = 1 << iota // a crop waiting to be sown
	flagMask         = flagUnsown
)

// thing is one item stack, food stack, plant or building on a map.
type thing struct {
	ID       int32
	Def      int32
	X, Y     int32
	Count    int32
	HP       int32
	Growth   int32 // plants: growth ticks, 0..growTicks
	Reserved int32 // ID of the pawn whose job targets it, 0 for none
	Flags    uint8
	dead     bool // removed this tick; compacted at the end of the step
}

// Job kinds.
const (
	jobNone    uint8 = iota
	jobGoto          // ordered by a player: walk to X,Y
	jobWander        // idle stroll to X,Y
	jobEat           // walk to food (or a plant, for grazers) and eat it
	jobHarvest       // walk to a mature plant and harvest it
	jobSow           // walk to an unsown crop and sow it
	jobHaul          // walk to an item and pick it up
	jobDeliver       // carry the held stack to storage at X,Y
	jobCount
)

// job is what a pawn is doing. Target is a thing ID (0 for none); X, Y is
// where the pawn must stand to do the work.
type job struct {
	Kind     uint8
	Target   int32
	X, Y     int32
	Progress int32
}

// carried is the stack a pawn holds; Def < 0 means empty hands.
type carried struct {
	Def   int32
	Count int32
	HP    int32
}

// pawn is one creature on a map.
type pawn struct {
	ID       int32
	Kind     int32
	X, Y     int32
	Hunger   int32 // thousandths of a nutrition point
	Health   int32
	Cool     int32 // idle ticks left before looking for a job
	MoveCool int32 // ticks left before the next step
	Job      job
	Ignore   int32 // a thing the last path search failed to reach
	Carry    carried
	Path     []int32 // remaining cells to walk, as y*W+x, ending at the job cell
	dead     bool
	jobAt    int32 // where the job's target was last found in Things: a hint, not state
}

// cellInfo is per-cell data derived from the things on a map. It is never
// encoded; it is kept in step with every change and rebuilt after a load.
type cellInfo struct {
	plants    uint16
	items     uint16 // item and food stacks
	buildings uint16
	blockers  uint16 // impassable buildings
	storage   uint16 // storage capacity of the buildings here
}

// gameMap is one map. Exported-looking field names mark encoded state;
// lower-case fields are not encoded.
//
// Terrain never changes once the map exists (generated or loaded): clones
// share it. Code that ever needs to change terrain must give the map its
// own copy first (ownTerrain).
//
// The derived fields take memory in proportion to the things on the map,
// not to its area (apart from a pointer per 4096 cells in blocked), so a map of
// 4096x4096 cells costs little more than its terrain: 8 MiB packed (at most
// 16 terrain types), 16 MiB otherwise.
type gameMap struct {
	ID         int32
	W, H       int32
	RNG        rng
	NextID     int32
	WildTarget int32   // wild spawning stops at this many plants
	Terrain    terrain // see terrain: four or eight bits a cell
	Things     []thing // sorted by ID
	Pawns      []pawn  // sorted by ID

	version      uint64             // MapVersion: changes whenever the encoding does
	loadedHash   mapMemo            // MapHash as loaded, set before anyone else sees the map
	changed      bool               // the encoded state changed since the last version
	sharedTerr   bool               // Terrain is shared with a clone or an original
	terrainSum   *terrainSum        // Terrain's hash, shared with it; nil after ownTerrain
	ready        bool               // the derived fields below are built
	where        []cellXY           // where[i] is the cell of Things[i]
	cells        map[int32]cellInfo // cells holding things; absent means all zero
	blocked      blockSet           // cells an impassable building stands on
	reg          *regionMap         // connected areas, nil until first asked for
	noPath       map[pathKey]bool   // searches known to fail; see findPath
	plantCount   int32
	storageCells []int32 // cells of storage buildings, in thing ID order
	storageDirty bool
	reversePawns bool // step the pawns in reverse order this tick (faultPawnOrder)
	deadThings   bool
	firstDead    int // lowest index of a dead thing when deadThings
	deadPawns    bool
}

// cellXY is a cell's coordinates; MaxSide fits in 16 bits.
type cellXY struct{ x, y int16 }

// World is a running colony: world-level state and its maps. It implements
// lockstep.Sim, lockstep.Cloner and lockstep.MapVersioner. Its methods
// must be called from one goroutine at a time, except the read-only ones
// named at Clone.
type World struct {
	r     *rules
	tick  uint64
	seed  uint64
	rng   rng
	temp  int32 // outdoor temperature in degrees, shared by all maps
	maps  []*gameMap
	paths pathScratch // scratch memory of the path finder, not state
	views []*World    // Step's other workers (step.go); not state
	// splitFrom replaces parallelThings (step.go) when not 0: tests make
	// small worlds step their maps at once, or never.
	splitFrom int
	// fault is a fault a test planted (fault.go); nil in a session.
	fault *fault
}

var _ lockstep.Sim = (*World)(nil)

// Tick is the number of the next tick to be simulated.
func (w *World) Tick() uint64 { return w.tick }

// Seed is the seed the world was generated from.
func (w *World) Seed() uint64 { return w.seed }

// Temperature is the current outdoor temperature in degrees Celsius.
func (w *World) Temperature() int { return int(w.temp) }

// Content returns a copy of the content the world runs on.
func (w *World) Content() *Content {
	c := w.r.content
	return &Content{
		Terrains:  slices.Clone(c.Terrains),
		Things:    slices.Clone(c.Things),
		PawnKinds: slices.Clone(c.PawnKinds),
	}
}

// MapIDs lists the maps in ascending order (0..n-1).
func (w *World) MapIDs() []int32 {
	ids := make([]int32, len(w.maps))
	for i, m := range w.maps {
		ids[i] = m.ID
	}
	return ids
}

func (w *World) mapByID(id int32) *gameMap {
	if id < 0 || int(id) >= len(w.maps) {
		return nil
	}
	return w.maps[id]
}

// MapStats summarises one map, for logs and status displays.
type MapStats struct {
	ID            int32
	Width, Height int
	Things        int // every thing, plants and buildings included
	Plants        int
	Pawns         int
	Carrying      int // pawns holding a stack
	Hungry        int // pawns at or above their HungryAt
}

// Stats summarises every map in ID order.
func (w *World) Stats() []MapStats {
	out := make([]MapStats, 0, len(w.maps))
	for _, m := range w.maps {
		s := MapStats{ID: m.ID, Width: int(m.W), Height: int(m.H), Things: len(m.Things), Pawns: len(m.Pawns)}
		if m.ready {
			s.Plants = int(m.plantCount) // kept in step by track
		} else {
			// A fresh clone: count rather than build the derived data.
			for i := range m.Things {
				if t := &m.Things[i]; !t.dead && w.r.things[t.Def].cat == catPlant {
					s.Plants++
				}
			}
		}
		for i := range m.Pawns {
			p := &m.Pawns[i]
			if p.Carry.Def >= 0 {
				s.Carrying++
			}
			if p.Hunger >= w.r.kinds[p.Kind].hungryAt {
				s.Hungry++
			}
		}
		out = append(out, s)
	}
	return out
}

// PawnInfo describes one pawn, for displays and for building commands.
type PawnInfo struct {
	ID       int32
	Kind     string // pawn kind defName
	X, Y     int
	Job      string // none, goto, wander, eat, harvest, sow, haul or deliver
	Hunger   int    // in nutrition points
	Health   int
	Carrying string // defName of the carried thing, empty if none
}

var jobNames = [jobCount]string{"none", "goto", "wander", "eat", "harvest", "sow", "haul", "deliver"}

// Pawns lists the pawns of a map in ID order; nil for an unknown map.
func (w *World) Pawns(mapID int32) []PawnInfo {
	m := w.mapByID(mapID)
	if m == nil {
		return nil
	}
	out := make([]PawnInfo, 0, len(m.Pawns))
	for i := range m.Pawns {
		p := &m.Pawns[i]
		pi := PawnInfo{
			ID:     p.ID,
			Kind:   w.r.content.PawnKinds[p.Kind].Name,
			X:      int(p.X),
			Y:      int(p.Y),
			Job:    jobNames[p.Job.Kind],
			Hunger: int(p.Hunger / 1000),
			Health: int(p.Health),
		}
		if p.Carry.Def >= 0 {
			pi.Carrying = w.r.content.Things[p.Carry.Def].Name
		}
		out = append(out, pi)
	}
	return out
}

// Passable tells whether a pawn may stand on cell x, y of a map (false
// outside it or for an unknown map). A MovePawn command needs a passable
// target, and so does a SpawnThing command.
func (w *World) Passable(mapID int32, x, y int) bool {
	m := w.mapByID(mapID)
	if m == nil || x < 0 || y < 0 || x >= int(m.W) || y >= int(m.H) {
		return false
	}
	m.derive(w.r)
	return m.passable(w.r, m.idx(int32(x), int32(y)))
}

// cell helpers

func (m *gameMap) in(x, y int32) bool { return x >= 0 && y >= 0 && x < m.W && y < m.H }

func (m *gameMap) idx(x, y int32) int32 { return y*m.W + x }

// passable tells whether a pawn may stand on cell c. The derived data must
// be built (derive).
func (m *gameMap) passable(r *rules, c int32) bool {
	return r.terrains[m.Terrain.at(c)].passable && !m.blocked.has(c)
}

func (m *gameMap) fertility(r *rules, c int32) int32 {
	return r.terrains[m.Terrain.at(c)].fertility
}

// ownTerrain gives the map a private copy of its terrain if it shares it
// with a clone, and returns it for writing. Nothing in the simulation
// writes terrain today; anything that ever does must go through here.
func (m *gameMap) ownTerrain() *terrain {
	if m.sharedTerr {
		m.Terrain = m.Terrain.clone()
		m.sharedTerr = false
	}
	m.terrainSum = nil // written from here on: hashed afresh each time
	return &m.Terrain
}

// findThing returns the index of the live thing with the given ID, or -1.
func (m *gameMap) findThing(id int32) int {
	lo, hi := 0, len(m.Things)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.Things[mid].ID < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(m.Things) && m.Things[lo].ID == id && !m.Things[lo].dead {
		return lo
	}
	return -1
}

// findTarget is findThing(p.Job.Target), trying first where the target
// was found last time: things only move down in Things when dead ones
// before them are dropped, which is rare next to the lookups.
func (m *gameMap) findTarget(p *pawn) int {
	id := p.Job.Target
	if h := int(p.jobAt); h < len(m.Things) && m.Things[h].ID == id {
		if m.Things[h].dead {
			return -1
		}
		return h
	}
	i := m.findThing(id)
	if i >= 0 {
		p.jobAt = int32(i)
	}
	return i
}

// findPawn returns the index of the live pawn with the given ID, or -1.
func (m *gameMap) findPawn(id int32) int {
	lo, hi := 0, len(m.Pawns)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.Pawns[mid].ID < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(m.Pawns) && m.Pawns[lo].ID == id && !m.Pawns[lo].dead {
		return lo
	}
	return -1
}

// track adds (sign 1) or removes (sign -1) a thing from the derived data.
func (m *gameMap) track(r *rules, t *thing, sign int) {
	c := m.idx(t.X, t.Y)
	ci := m.cells[c]
	d := uint16(sign) // wraps to 0xFFFF for -1: adding it subtracts one
	tr := &r.things[t.Def]
	switch tr.cat {
	case catPlant:
		ci.plants += d
		m.plantCount += int32(sign)
	case catBuilding:
		ci.buildings += d
		if tr.impassable {
			ci.blockers += d
			m.blocked.set(c, ci.blockers > 0)
			if m.reg != nil {
				m.reg.touch(t.Y)
			}
			clear(m.noPath) // passability changed: a failed search may succeed now
		}
		if tr.storage > 0 {
			ci.storage += uint16(int32(sign) * tr.storage)
			m.storageDirty = true
		}
	default:
		ci.items += d
	}
	if ci == (cellInfo{}) {
		delete(m.cells, c)
	} else {
		m.cells[c] = ci
	}
}

// derive builds the derived data if it is missing (a fresh clone).
func (m *gameMap) derive(r *rules) {
	if !m.ready {
		m.rebuildDerived(r)
	}
}

// rebuildDerived recomputes every derived field from the encoded state.
func (m *gameMap) rebuildDerived(r *rules) {
	m.cells = make(map[int32]cellInfo, cap(m.Things))
	m.where = make([]cellXY, len(m.Things), cap(m.Things))
	for i := range m.Things {
		m.where[i] = cellXY{int16(m.Things[i].X), int16(m.Things[i].Y)}
	}
	m.blocked = newBlockSet(int(m.W) * int(m.H))
	m.reg = nil
	m.noPath = nil
	m.plantCount = 0
	m.storageCells = nil
	for i := range m.Things {
		if !m.Things[i].dead {
			m.track(r, &m.Things[i], 1)
		}
	}
	m.storageDirty = true
	m.ready = true
}

// regionAt is the region a pawn at x, y moves in: its cell's, or the
// first passable neighbour's when it stands on an impassable cell.
func (m *gameMap) regionAt(r *rules, x, y int32) int32 {
	if v := m.regionOf(r, m.idx(x, y)); v != 0 {
		return v
	}
	for d := range 8 {
		if nx, ny := x+dirX[d], y+dirY[d]; m.in(nx, ny) {
			if v := m.regionOf(r, m.idx(nx, ny)); v != 0 {
				return v
			}
		}
	}
	return 0
}

// storage returns the storage cells in thing ID order.
func (m *gameMap) storage(r *rules) []int32 {
	if m.storageDirty {
		m.storageCells = m.storageCells[:0]
		for i := range m.Things {
			t := &m.Things[i]
			if !t.dead && r.things[t.Def].storage > 0 {
				m.storageCells = append(m.storageCells, m.idx(t.X, t.Y))
			}
		}
		m.storageDirty = false
	}
	return m.storageCells
}

// canAddThing tells whether another thing fits under the per-map caps.
func (m *gameMap) canAddThing() bool {
	return len(m.Things) < MaxThingsPerMap && m.NextID < maxID
}

// maxID is the largest thing or pawn ID.
const maxID = 1<<31 - 1

// addThing appends a new thing and returns its ID. The caller checked
// canAddThing. Pointers into m.Things are invalid afterwards.
func (m *gameMap) addThing(r *rules, t thing) int32 {
	t.ID = m.NextID
	m.NextID++
	m.Things = append(m.Things, t)
	m.where = append(m.where, cellXY{int16(t.X), int16(t.Y)})
	m.track(r, &m.Things[len(m.Things)-1], 1)
	m.changed = true
	return t.ID
}

// removeThing marks the thing at index i dead.
func (m *gameMap) removeThing(r *rules, i int) {
	t := &m.Things[i]
	if t.dead {
		return
	}
	m.track(r, t, -1)
	t.dead = true
	if !m.deadThings || i < m.firstDead {
		m.firstDead = i
	}
	m.deadThings = true
	m.changed = true
}

// compact drops dead things and pawns, keeping ID order.
func (m *gameMap) compact() {
	if m.deadThings {
		n := m.firstDead
		for i := n; i < len(m.Things); i++ {
			if !m.Things[i].dead {
				if n != i {
					m.Things[n] = m.Things[i]
					m.where[n] = m.where[i]
				}
				n++
			}
		}
		clear(m.Things[n:])
		m.Things, m.where = m.Things[:n], m.where[:n]
		m.deadThings = false
	}
	if m.deadPawns {
		m.Pawns = compactSlice(m.Pawns, func(p *pawn) bool { return p.dead })
		m.deadPawns = false
	}
}

// settle ends a step or a command on the map: dead things and pawns go,
// and the map gets a new version if its state changed.
func (m *gameMap) settle() {
	m.compact()
	if m.changed {
		m.version = newVersion()
		m.changed = false
	}
}

func compactSlice[T any](s []T, dead func(*T) bool) []T {
	n := 0
	for i := range s {
		if !dead(&s[i]) {
			if n != i {
				s[n] = s[i]
			}
			n++
		}
	}
	var zero T
	for i := n; i < len(s); i++ {
		s[i] = zero
	}
	return s[:n]
}

// newThing builds a fresh thing of type def at x, y.
func (r *rules) newThing(def, x, y, count int32) thing {
	return thing{Def: def, X: x, Y: y, Count: count, HP: r.things[def].hitPoints}
}

// spawnStack puts count units of an item or food at x, y: it tops up
// stacks of the same type already there, then adds new stacks. Units that
// do not fit under the per-map cap are lost.
func (m *gameMap) spawnStack(r *rules, def, count, hp, x, y int32) {
	tr := &r.things[def]
	if count <= 0 {
		return
	}
	if m.cells[m.idx(x, y)].items > 0 { // else no stack to top up
		at := cellXY{int16(x), int16(y)}
		for i, q := range m.where {
			if q != at {
				continue
			}
			t := &m.Things[i]
			if t.dead || t.Def != def || t.Count >= tr.stackLimit {
				continue
			}
			n := min(count, tr.stackLimit-t.Count)
			t.Count += n
			t.HP = min(t.HP, hp)
			m.changed = true
			count -= n
			if count == 0 {
				return
			}
		}
	}
	for count > 0 && m.canAddThing() {
		n := min(count, tr.stackLimit)
		t := r.newThing(def, x, y, n)
		t.HP = min(hp, tr.hitPoints)
		m.addThing(r, t)
		count -= n
	}
}
