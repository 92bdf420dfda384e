package colony

import (
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
	Flags    uint8
	Reserved int32 // ID of the pawn whose job targets it, 0 for none
	dead     bool  // removed this tick; compacted at the end of the step
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
// lower-case fields are derived.
type gameMap struct {
	ID         int32
	W, H       int32
	RNG        rng
	NextID     int32
	WildTarget int32 // wild spawning stops at this many plants
	Terrain    []uint8
	Things     []thing // sorted by ID
	Pawns      []pawn  // sorted by ID

	cells        []cellInfo
	region       []int32 // connected passable area of each cell, 0 if impassable
	regionDirty  bool
	plantCount   int32
	storageCells []int32 // cells of storage buildings, in thing ID order
	storageDirty bool
	deadThings   bool
	deadPawns    bool
}

// World is a running colony: world-level state and its maps. It implements
// lockstep.Sim. Its methods must be called from one goroutine at a time.
type World struct {
	r     *rules
	tick  uint64
	seed  uint64
	rng   rng
	temp  int32 // outdoor temperature in degrees, shared by all maps
	maps  []*gameMap
	paths pathScratch // scratch memory of the path finder, not state
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
	return &c
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
		s := MapStats{ID: m.ID, Width: int(m.W), Height: int(m.H), Things: len(m.Things), Plants: int(m.plantCount), Pawns: len(m.Pawns)}
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
	return m.passable(w.r, m.idx(int32(x), int32(y)))
}

// cell helpers

func (m *gameMap) in(x, y int32) bool { return x >= 0 && y >= 0 && x < m.W && y < m.H }

func (m *gameMap) idx(x, y int32) int32 { return y*m.W + x }

// passable tells whether a pawn may stand on cell c.
func (m *gameMap) passable(r *rules, c int32) bool {
	return r.terrains[m.Terrain[c]].passable && m.cells[c].blockers == 0
}

func (m *gameMap) fertility(r *rules, c int32) int32 {
	return r.terrains[m.Terrain[c]].fertility
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
	c := &m.cells[m.idx(t.X, t.Y)]
	d := uint16(sign) // wraps to 0xFFFF for -1: adding it subtracts one
	tr := &r.things[t.Def]
	switch tr.cat {
	case catPlant:
		c.plants += d
		m.plantCount += int32(sign)
	case catBuilding:
		c.buildings += d
		if tr.impassable {
			c.blockers += d
			m.regionDirty = true
		}
		if tr.storage > 0 {
			c.storage += uint16(int32(sign) * tr.storage)
			m.storageDirty = true
		}
	default:
		c.items += d
	}
}

// rebuildDerived recomputes every derived field from the encoded state.
func (m *gameMap) rebuildDerived(r *rules) {
	m.cells = make([]cellInfo, int(m.W)*int(m.H))
	m.plantCount = 0
	for i := range m.Things {
		m.track(r, &m.Things[i], 1)
	}
	m.storageDirty = true
	m.regionDirty = true
}

// regions returns the region of every cell, recomputing it when
// passability changed: a flood fill in cell order, so the labels are a
// function of the state alone.
func (m *gameMap) regions(r *rules) []int32 {
	if !m.regionDirty && m.region != nil {
		return m.region
	}
	n := int32(len(m.Terrain))
	if int32(len(m.region)) != n {
		m.region = make([]int32, n)
	} else {
		clear(m.region)
	}
	var queue []int32
	label := int32(0)
	for c := range n {
		if m.region[c] != 0 || !m.passable(r, c) {
			continue
		}
		label++
		m.region[c] = label
		queue = append(queue[:0], c)
		for len(queue) > 0 {
			cur := queue[len(queue)-1]
			queue = queue[:len(queue)-1]
			x, y := cur%m.W, cur/m.W
			for d := range 8 {
				nx, ny := x+dirX[d], y+dirY[d]
				if !m.in(nx, ny) {
					continue
				}
				nc := m.idx(nx, ny)
				if m.region[nc] != 0 || !m.passable(r, nc) {
					continue
				}
				if d >= 4 && (!m.passable(r, m.idx(nx, y)) || !m.passable(r, m.idx(x, ny))) {
					continue // the path finder does not cut corners either
				}
				m.region[nc] = label
				queue = append(queue, nc)
			}
		}
	}
	m.regionDirty = false
	return m.region
}

// regionAt is the region a pawn at x, y moves in: its cell's, or the
// first passable neighbour's when it stands on an impassable cell.
func (m *gameMap) regionAt(r *rules, x, y int32) int32 {
	reg := m.regions(r)
	if v := reg[m.idx(x, y)]; v != 0 {
		return v
	}
	for d := range 8 {
		if nx, ny := x+dirX[d], y+dirY[d]; m.in(nx, ny) && reg[m.idx(nx, ny)] != 0 {
			return reg[m.idx(nx, ny)]
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
	m.track(r, &m.Things[len(m.Things)-1], 1)
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
	m.deadThings = true
}

// compact drops dead things and pawns, keeping ID order.
func (m *gameMap) compact() {
	if m.deadThings {
		m.Things = compactSlice(m.Things, func(t *thing) bool { return t.dead })
		m.deadThings = false
	}
	if m.deadPawns {
		m.Pawns = compactSlice(m.Pawns, func(p *pawn) bool { return p.dead })
		m.deadPawns = false
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
	for i := range m.Things {
		t := &m.Things[i]
		if t.dead || t.Def != def || t.X != x || t.Y != y || t.Count >= tr.stackLimit {
			continue
		}
		n := min(count, tr.stackLimit-t.Count)
		t.Count += n
		t.HP = min(t.HP, hp)
		count -= n
		if count == 0 {
			return
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
