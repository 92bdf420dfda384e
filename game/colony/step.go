package colony

import "runtime"

// Simulation rhythm.
const (
	// RareTicks is the period of plant growth and decay. Each map has its
	// own phase (its ID), so the maps' rare work is spread over the period
	// and a map without pawns changes on one tick in RareTicks at most
	// (apart from wild plants taking root).
	RareTicks = 250
	// TicksPerDay is the length of a day.
	TicksPerDay = 60000
	// DaysPerYear is the length of the seasonal cycle.
	DaysPerYear = 60
	// tempTicks is the period of temperature changes (an hour).
	tempTicks = 2500

	workRadius   = 40 // how far (Chebyshev) a pawn looks for work
	eatRadius    = 80 // how far a hungry pawn looks for food
	wanderRadius = 8
	wildChecks   = 2 // random cells checked for wild plants per map per tick
	starveEvery  = 60
	healEvery    = 600
	failCool     = 60 // idle ticks after a failed path search
	deliverWork  = 15 // ticks to put a carried stack down
)

// Step simulates one tick: the world's weather, then every map in ID order.
func (w *World) Step() {
	if w.tick%tempTicks == 0 {
		w.temp = seasonalTemp(w.tick) + w.rng.between(-4, 4)
		if f := w.faultAt(faultClock); f != nil {
			w.temp += f.clock()
		}
	}
	if f := w.faultAt(faultPawnOrder); f != nil && f.order() {
		for _, m := range w.maps {
			m.reversePawns = true
		}
	}
	w.stepMaps()
	w.tick++
}

// stepMaps steps every map, on up to GOMAXPROCS goroutines when there
// are several maps. A map's step reads only the world's rules, tick and
// temperature, writes only its own map, and needs path-finder scratch
// memory of its own: each worker gets a view of the world holding those
// (the first worker is w itself), kept from tick to tick with its
// scratch. Maps share nothing else, so the world ends the tick exactly
// as if they had stepped one after the other in ID order
// (TestParallelStepMatchesSequential), and Step still returns only when
// every map has stepped: the goroutine that calls it owns the world as
// before. A joiner catching up and a host ticking a big world use every
// core; a small world steps on the caller's goroutine alone.
func (w *World) stepMaps() {
	workers := min(len(w.maps), runtime.GOMAXPROCS(0))
	if workers <= 1 || !w.bigEnoughToSplit() {
		for _, m := range w.maps {
			m.step(w)
		}
		return
	}
	for len(w.views) < workers-1 {
		w.views = append(w.views, &World{r: w.r})
	}
	for _, v := range w.views[:workers-1] {
		v.r, v.tick, v.seed, v.temp, v.fault = w.r, w.tick, w.seed, w.temp, w.fault
	}
	forMaps(len(w.maps), func(k, i int) {
		v := w // worker 0, the calling goroutine
		if k > 0 {
			v = w.views[k-1]
		}
		w.maps[i].step(v)
	})
}

// seasonalTemp is the base temperature of the day tick falls in: a
// triangle wave between -5 (mid-winter) and 25 (mid-summer).
func seasonalTemp(tick uint64) int32 {
	day := int32((tick / TicksPerDay) % DaysPerYear)
	t := (day + DaysPerYear/4) % DaysPerYear
	return 25 - absI32(t-DaysPerYear/2)
}

// growthPercent is the plant growth rate at a temperature.
func growthPercent(temp int32) int32 {
	switch {
	case temp < 0 || temp > 42:
		return 0
	case temp < 10:
		return 50
	}
	return 100
}

func (m *gameMap) step(w *World) {
	r := w.r
	tick := w.tick
	grow := growthPercent(w.temp)
	m.derive(r)

	// Rare work: growth and decay, once every RareTicks ticks, each map
	// on its own phase. Between its rare ticks a map without pawns does
	// not change (unless a wild plant takes root), so it keeps its version.
	if (tick+uint64(m.ID))%RareTicks == 0 {
		m.rareWork(r, grow, w.faultAt(faultOverflow) != nil)
	}

	// Wild plants take root on random fertile cells until the map holds
	// WildTarget plants.
	if len(r.wild) > 0 && m.plantCount < m.WildTarget && m.canAddThing() {
		m.growWild(r, tick)
	}

	// Pawns. A map with pawns is taken to change on every tick: pawns
	// nearly always do (hunger, cool-downs, walking), and telling the rare
	// exceptions apart would cost more than it saves.
	if len(m.Pawns) > 0 {
		m.changed = true
	}
	for k := range m.Pawns {
		i := k
		if m.reversePawns {
			i = len(m.Pawns) - 1 - k
		}
		if !m.Pawns[i].dead {
			m.stepPawn(w, i)
		}
	}
	m.reversePawns = false
	m.settle()
}

// rareWork grows the map's sown plants at grow percent and decays what
// decays, removing what decays to nothing. Things added meanwhile wait
// for the next rare tick. With overflow (a planted fault) the growth is
// computed in 16 bits.
func (m *gameMap) rareWork(r *rules, grow int32, overflow bool) {
	n := len(m.Things)
	for i := 0; i < n; i++ {
		t := &m.Things[i]
		if t.dead {
			continue
		}
		tr := &r.things[t.Def]
		if tr.cat == catPlant && t.Flags&flagUnsown == 0 && t.Growth < tr.growTicks {
			fert := m.fertility(r, m.idx(t.X, t.Y))
			gain := RareTicks * fert * grow / 10000
			if overflow {
				gain = int32(int16(RareTicks*fert*grow)) / 10000
			}
			if g := min(tr.growTicks, max(0, t.Growth+gain)); g != t.Growth {
				t.Growth = g
				m.changed = true
			}
		}
		if tr.decay > 0 {
			t.HP -= tr.decay
			m.changed = true
			if t.HP <= 0 {
				m.removeThing(r, i)
			}
		}
	}
}

// growWild checks wildChecks random cells for a wild plant to take root,
// while the map holds fewer than WildTarget plants. The rolls come from
// the map's generator state mixed with the tick, without advancing the
// generator, so a tick where nothing takes root leaves the map
// unchanged; the generator advances when a plant does take root.
func (m *gameMap) growWild(r *rules, tick uint64) {
	g := rng{s: m.RNG.s ^ mix64(tick^0x3C6EF372FE94F82B)}
	for range wildChecks {
		if m.plantCount >= m.WildTarget || !m.canAddThing() {
			break
		}
		x, y := g.intn(m.W), g.intn(m.H)
		c := m.idx(x, y)
		ci := m.cells[c]
		if ci.plants > 0 || ci.buildings > 0 || !m.passable(r, c) {
			continue
		}
		fert := m.fertility(r, c)
		if fert == 0 || !g.chance(1, 8) {
			continue
		}
		m.rootWild(r, &g, fert, x, y)
	}
}

// rootWild roots one wild plant at x, y: a kind that grows at fert,
// drawn from g weighted by the kinds' wild shares.
func (m *gameMap) rootWild(r *rules, g *rng, fert, x, y int32) {
	total := int32(0)
	for _, p := range r.wild {
		if fert >= r.things[p].minFertility {
			total += r.things[p].wild
		}
	}
	pick := g.intn(total)
	for _, p := range r.wild {
		tr := &r.things[p]
		if fert < tr.minFertility {
			continue
		}
		if pick < tr.wild {
			m.addThing(r, r.newThing(p, x, y, 1))
			m.RNG.next()
			return
		}
		pick -= tr.wild
	}
}

func (m *gameMap) stepPawn(w *World, i int) {
	r := w.r
	p := &m.Pawns[i]
	k := &r.kinds[p.Kind]
	if m.stepNeeds(w, i) {
		return // starved
	}
	if p.MoveCool > 0 {
		p.MoveCool--
	}

	if p.Job.Kind == jobNone {
		if p.Cool > 0 {
			p.Cool--
			return
		}
		m.pickJob(w, p)
		return
	}
	if !m.jobValid(r, p) {
		m.endJob(r, p, 0)
		return
	}

	if p.X != p.Job.X || p.Y != p.Job.Y {
		m.walk(w, p, k)
		return
	}
	p.Path = nil
	m.work(r, p)
}

// stepNeeds steps pawn i's hunger and health and reports whether it
// starved (and is gone).
func (m *gameMap) stepNeeds(w *World, i int) (died bool) {
	r := w.r
	p := &m.Pawns[i]
	k := &r.kinds[p.Kind]
	p.Hunger = min(k.starveAt, p.Hunger+k.hungerRate)
	phase := (w.tick + uint64(p.ID))
	if p.Hunger >= k.starveAt {
		if phase%starveEvery == 0 {
			p.Health--
			if p.Health <= 0 {
				m.killPawn(r, i)
				return true
			}
		}
	} else if p.Health < k.maxHealth && phase%healEvery == 0 {
		p.Health++
	}
	return false
}

// walk moves pawn p one step along its path to its job's cell, finding
// the path first, or ends the job when the cell cannot be reached.
func (m *gameMap) walk(w *World, p *pawn, k *kindRule) {
	r := w.r
	if len(p.Path) == 0 {
		if reg := m.regionOf(r, m.idx(p.Job.X, p.Job.Y)); reg != 0 && reg != m.regionAt(r, p.X, p.Y) {
			p.Ignore = p.Job.Target
			m.endJob(r, p, failCool) // cut off: no search can succeed
			return
		}
		path, ok := w.findPath(m, k.moveTicks, p.X, p.Y, p.Job.X, p.Job.Y)
		if !ok || len(path) == 0 {
			p.Ignore = p.Job.Target
			m.endJob(r, p, failCool)
			return
		}
		p.Path = path
	}
	if p.MoveCool > 0 {
		return
	}
	next := p.Path[0]
	nx, ny := next%m.W, next/m.W
	if next != m.idx(p.Job.X, p.Job.Y) && !m.passable(r, next) {
		p.Path = nil // blocked since the search: search again next tick
		return
	}
	diag := nx != p.X && ny != p.Y
	p.X, p.Y = nx, ny
	p.Path = p.Path[1:]
	if len(p.Path) == 0 {
		p.Path = nil
	}
	cost := k.moveTicks
	if diag {
		cost = k.moveTicks * 14 / 10
	}
	p.MoveCool = cost + r.terrains[m.Terrain.at(next)].pathCost
}

// work does a tick of pawn p's job at the job's cell.
func (m *gameMap) work(r *rules, p *pawn) {
	// Work at the job cell.
	switch p.Job.Kind {
	case jobGoto:
		m.endJob(r, p, 120)
		return
	case jobWander:
		m.endJob(r, p, m.RNG.between(60, 180))
		return
	}
	ti := -1
	need := int32(deliverWork)
	if p.Job.Kind != jobDeliver {
		ti = m.findTarget(p)
		need = r.things[m.Things[ti].Def].workTicks
	}
	p.Job.Progress++
	if p.Job.Progress < need {
		return
	}
	p.Job.Progress = 0
	switch p.Job.Kind {
	case jobEat:
		m.eat(r, p, ti)
	case jobHarvest:
		t := &m.Things[ti]
		tr := &r.things[t.Def]
		x, y := t.X, t.Y
		if tr.sowable {
			t.Growth, t.Flags = 0, t.Flags|flagUnsown
		} else {
			m.removeThing(r, ti)
		}
		m.spawnStack(r, tr.product, tr.productCount, r.things[tr.product].hitPoints, x, y)
		m.endJob(r, p, 0)
	case jobSow:
		t := &m.Things[ti]
		t.Growth, t.Flags = 0, t.Flags&^flagUnsown
		m.endJob(r, p, 0)
	case jobHaul:
		t := &m.Things[ti]
		p.Carry = carried{Def: t.Def, Count: t.Count, HP: t.HP}
		m.removeThing(r, ti)
		m.endJob(r, p, 0)
	case jobDeliver:
		c := p.Carry
		p.Carry = carried{Def: -1}
		m.spawnStack(r, c.Def, c.Count, c.HP, p.X, p.Y)
		m.endJob(r, p, 0)
	}
}

// eat consumes from the target: one unit of food, or a whole plant.
func (m *gameMap) eat(r *rules, p *pawn, ti int) {
	t := &m.Things[ti]
	tr := &r.things[t.Def]
	if tr.cat == catPlant {
		gain := int32(int64(tr.nutrition) * 1000 * int64(t.Growth) / int64(tr.growTicks))
		p.Hunger = max(0, p.Hunger-gain)
		if tr.sowable {
			t.Growth, t.Flags = 0, t.Flags|flagUnsown
			t.Reserved = 0
		} else {
			m.removeThing(r, ti)
		}
		m.endJob(r, p, 0)
		return
	}
	gain := tr.nutrition * 1000
	p.Hunger = max(0, p.Hunger-gain)
	t.Count--
	if t.Count <= 0 {
		m.removeThing(r, ti)
		m.endJob(r, p, 0)
		return
	}
	if p.Hunger < gain {
		m.endJob(r, p, 0)
	}
	// else keep eating from the same stack
}

// jobValid tells whether the job can go on.
func (m *gameMap) jobValid(r *rules, p *pawn) bool {
	j := &p.Job
	if !m.in(j.X, j.Y) {
		return false
	}
	switch j.Kind {
	case jobGoto, jobWander:
		return true
	case jobDeliver:
		return p.Carry.Def >= 0
	}
	ti := m.findTarget(p)
	if ti < 0 {
		return false
	}
	t := &m.Things[ti]
	if t.Reserved != p.ID || t.X != j.X || t.Y != j.Y {
		return false
	}
	tr := &r.things[t.Def]
	switch j.Kind {
	case jobEat:
		if tr.cat == catPlant {
			return r.kinds[p.Kind].grazes && tr.nutrition > 0 && t.Flags&flagUnsown == 0
		}
		return tr.cat == catFood && t.Count > 0
	case jobHarvest:
		return tr.cat == catPlant && tr.product >= 0 && t.Flags&flagUnsown == 0 && t.Growth >= tr.growTicks
	case jobSow:
		return tr.cat == catPlant && t.Flags&flagUnsown != 0
	case jobHaul:
		return (tr.cat == catItem || tr.cat == catFood) && p.Carry.Def < 0
	}
	return false
}

// endJob releases the job's reservation and leaves the pawn idle for cool
// ticks.
func (m *gameMap) endJob(r *rules, p *pawn, cool int32) {
	if p.Job.Target != 0 {
		if ti := m.findTarget(p); ti >= 0 && m.Things[ti].Reserved == p.ID {
			m.Things[ti].Reserved = 0
		}
	}
	p.Job = job{}
	p.Path = nil
	p.Cool = cool
}

// killPawn removes a pawn, dropping what it carries.
func (m *gameMap) killPawn(r *rules, i int) {
	p := &m.Pawns[i]
	m.endJob(r, p, 0)
	if p.Carry.Def >= 0 {
		m.spawnStack(r, p.Carry.Def, p.Carry.Count, p.Carry.HP, p.X, p.Y)
		p.Carry = carried{Def: -1}
	}
	// clear any reservation left behind
	for j := range m.Things {
		if m.Things[j].Reserved == p.ID {
			m.Things[j].Reserved = 0
		}
	}
	p.dead = true
	m.deadPawns = true
}

// nearestStorage returns the nearest storage cell with room, or -1.
func (m *gameMap) nearestStorage(r *rules, x, y int32) int32 {
	best, bestD := int32(-1), int32(0)
	home := m.regionAt(r, x, y)
	for _, c := range m.storage(r) {
		ci := m.cells[c]
		if int32(ci.items) >= int32(ci.storage) || ci.blockers > 0 || m.regionOf(r, c) != home {
			continue
		}
		d := octile(x, y, c%m.W, c/m.W)
		if best < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// pickJob chooses the idle pawn's next job.
func (m *gameMap) pickJob(w *World, p *pawn) {
	r := w.r
	k := &r.kinds[p.Kind]

	if p.Hunger >= k.hungryAt {
		if ti := m.nearest(r, p, eatRadius, func(t *thing, tr *thingRule) bool {
			if k.grazes {
				return tr.cat == catPlant && tr.nutrition > 0 && t.Flags&flagUnsown == 0 && 2*t.Growth >= tr.growTicks
			}
			return tr.cat == catFood
		}); ti >= 0 {
			m.start(w, p, k, jobEat, ti)
			return
		}
	}

	if p.Carry.Def >= 0 {
		if c := m.nearestStorage(r, p.X, p.Y); c >= 0 {
			p.Job = job{Kind: jobDeliver, X: c % m.W, Y: c / m.W}
			if _, ok := m.pathFor(w, p, k); !ok {
				p.Job = job{}
				m.dropCarry(r, p)
			}
			return
		}
		m.dropCarry(r, p)
		return
	}

	if k.works {
		haul := m.nearestStorage(r, p.X, p.Y) >= 0
		if ti := m.nearest(r, p, workRadius, func(t *thing, tr *thingRule) bool {
			switch tr.cat {
			case catPlant:
				if t.Flags&flagUnsown != 0 {
					return true
				}
				return tr.product >= 0 && t.Growth >= tr.growTicks
			case catItem, catFood:
				return haul && m.cells[m.idx(t.X, t.Y)].storage == 0
			}
			return false
		}); ti >= 0 {
			m.start(w, p, k, m.workKind(r, ti), ti)
			return
		}
	}

	// Wander.
	x := max(0, min(m.W-1, p.X+m.RNG.between(-wanderRadius, wanderRadius)))
	y := max(0, min(m.H-1, p.Y+m.RNG.between(-wanderRadius, wanderRadius)))
	if (x == p.X && y == p.Y) || m.regionOf(r, m.idx(x, y)) != m.regionAt(r, p.X, p.Y) {
		p.Cool = m.RNG.between(30, 90)
		return
	}
	p.Job = job{Kind: jobWander, X: x, Y: y}
	if _, ok := m.pathFor(w, p, k); !ok {
		p.Job = job{}
		p.Cool = failCool
	}
}

// workKind names the work a pawn does on thing ti.
func (m *gameMap) workKind(r *rules, ti int) uint8 {
	t := &m.Things[ti]
	switch r.things[t.Def].cat {
	case catPlant:
		if t.Flags&flagUnsown != 0 {
			return jobSow
		}
		return jobHarvest
	}
	return jobHaul
}

// dropCarry puts the carried stack down where the pawn stands.
func (m *gameMap) dropCarry(r *rules, p *pawn) {
	c := p.Carry
	p.Carry = carried{Def: -1}
	m.spawnStack(r, c.Def, c.Count, c.HP, p.X, p.Y)
	p.Cool = failCool
}

// start reserves thing ti and sets the pawn walking to it.
func (m *gameMap) start(w *World, p *pawn, k *kindRule, kind uint8, ti int) {
	t := &m.Things[ti]
	p.Job = job{Kind: kind, Target: t.ID, X: t.X, Y: t.Y}
	p.jobAt = int32(ti)
	if _, ok := m.pathFor(w, p, k); !ok {
		p.Ignore = t.ID
		p.Job = job{}
		p.Cool = failCool
		return
	}
	t.Reserved = p.ID
}

// pathFor searches a path to the job cell and stores it.
func (m *gameMap) pathFor(w *World, p *pawn, k *kindRule) ([]int32, bool) {
	path, ok := w.findPath(m, k.moveTicks, p.X, p.Y, p.Job.X, p.Job.Y)
	if ok {
		p.Path = path
	}
	return path, ok
}

// nearest returns the index of the nearest live, unreserved thing within
// radius that accepts, ties to the lowest ID; -1 if none.
func (m *gameMap) nearest(r *rules, p *pawn, radius int32, accept func(*thing, *thingRule) bool) int {
	best, bestD := -1, int32(0)
	home := m.regionAt(r, p.X, p.Y)
	for i, q := range m.where { // where, not Things: a tenth of the memory to scan
		dx, dy := absI32(int32(q.x)-p.X), absI32(int32(q.y)-p.Y)
		if dx > radius || dy > radius {
			continue
		}
		t := &m.Things[i]
		if t.dead || t.Reserved != 0 || t.ID == p.Ignore {
			continue
		}
		d := 10*max(dx, dy) + 4*min(dx, dy)
		if best >= 0 && d >= bestD {
			continue
		}
		if m.regionOf(r, m.idx(t.X, t.Y)) == home && accept(t, &r.things[t.Def]) {
			best, bestD = i, d
		}
	}
	return best
}

// parallelThings is the fewest things, on all maps together, for which
// Step steps maps at once. Below it, waking other goroutines costs more
// than they save: the default world (2,400 things) stepped in 54 µs on
// one core and 69 µs on two, a 64 MiB world (about 400,000 things) in 272
// µs on one and 147 µs on two.
const parallelThings = 8192

// bigEnoughToSplit reports whether the world has enough things to step
// its maps at once (parallelThings, or the test's splitFrom).
func (w *World) bigEnoughToSplit() bool {
	from := w.splitFrom
	if from == 0 {
		from = parallelThings
	}
	n := 0
	for _, m := range w.maps {
		if n += len(m.Things); n >= from {
			return true
		}
	}
	return false
}
