package colony

// Path finding: A* over the 8-neighbour grid with integer costs and a
// total order on open nodes, so every machine finds the same path.

const (
	// maxExpand bounds the nodes one search may close; beyond it the
	// target counts as unreachable.
	maxExpand = 6000
	// maxPathLen bounds an encoded path.
	maxPathLen = 8192
)

// The eight directions, in the fixed order the search visits them.
var dirX = [8]int32{0, 1, 0, -1, 1, 1, -1, -1}
var dirY = [8]int32{-1, 0, 1, 0, -1, 1, 1, -1}

// pathNode is an open entry: the search closes the one with the lowest
// f, then the lowest h, then the lowest cell. key packs f and h (both
// below 1<<31: g stays below maxExpand+1 steps of at most 14*1000+10*200
// and h below 2*1000*14*MaxSide) so one comparison orders them.
type pathNode struct {
	key uint64 // f<<32 | h
	c   int32
}

func (a pathNode) less(b pathNode) bool {
	return a.key < b.key || a.key == b.key && a.c < b.c
}

func nodeKey(f, h int32) uint64 { return uint64(uint32(f))<<32 | uint64(uint32(h)) }

// pathScratch is reusable search memory. A slot belongs to the current
// search when mark >= gen: the cell is open when mark == gen and closed
// when mark == gen+1.
//
// On maps of up to denseCells cells the slots are a plain array indexed by
// cell. On bigger maps they are an open-addressing table of the cells the
// search has seen: a search sees at most (maxExpand+1)*8+1 cells, so the
// table never fills, and its size does not depend on the map's.
type pathScratch struct {
	dense []pathSlot // by cell, for maps of up to denseCells cells
	table []pathSlot // hashed, for bigger maps
	slots []pathSlot // the one the current search uses
	hash  bool
	gen   uint32
	heap  []pathNode
	// tie is XORed into the cells of open nodes: 0, or -1 for a search
	// at the tick of a planted faultPathTie, which then breaks ties toward
	// the higher cell.
	tie int32
}

type pathSlot struct {
	cell   int32 // hashed slots only
	mark   uint32
	g      int32
	parent int32
}

const (
	// denseCells is the largest map searched with a dense array (16 MiB).
	denseCells = 1 << 20
	// pathSlotBits sizes the hashed table: 1<<17 slots for at most 48009
	// cells.
	pathSlotBits = 17
)

// pathDenseCells is denseCells; tests lower it to search small maps with
// the hashed table.
var pathDenseCells = denseCells

// begin starts a search on a map of n cells.
func (ps *pathScratch) begin(n int) {
	ps.hash = n > pathDenseCells
	if ps.hash {
		if ps.table == nil {
			ps.table = make([]pathSlot, 1<<pathSlotBits)
		}
		ps.slots = ps.table
	} else {
		if len(ps.dense) < n {
			ps.dense = make([]pathSlot, n)
			if ps.table != nil {
				clear(ps.table) // its marks could be ahead of a fresh array's
			}
			ps.gen = 0
		}
		ps.slots = ps.dense
	}
	ps.gen += 2
	if ps.gen >= 1<<31 {
		clear(ps.dense)
		clear(ps.table)
		ps.gen = 2
	}
	ps.heap = ps.heap[:0]
}

// slot returns cell c's slot; in the hashed table it claims a free one
// (mark < gen) when the search has not seen c yet.
func (ps *pathScratch) slot(c int32) *pathSlot {
	if !ps.hash {
		return &ps.slots[c]
	}
	const mask = 1<<pathSlotBits - 1
	i := (uint32(c) * 0x9E3779B1) >> (32 - pathSlotBits)
	for {
		s := &ps.slots[i]
		if s.mark < ps.gen {
			s.cell, s.mark = c, 0
			return s
		}
		if s.cell == c {
			return s
		}
		i = (i + 1) & mask
	}
}

// push and pop keep a 4-ary min-heap. Entries are totally ordered (a cell
// is pushed again only with a lower g, so a lower f), so the order of
// pops does not depend on how the heap is laid out.
func (ps *pathScratch) push(n pathNode) {
	h := append(ps.heap, n)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) >> 2
		if !n.less(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = n
	ps.heap = h
}

func (ps *pathScratch) pop() pathNode {
	h := ps.heap
	top := h[0]
	last := len(h) - 1
	n := h[last]
	h = h[:last]
	i := 0
	for {
		l := 4*i + 1
		if l >= len(h) {
			break
		}
		s := l
		for k, e := l+1, min(l+4, len(h)); k < e; k++ {
			if h[k].less(h[s]) {
				s = k
			}
		}
		if !h[s].less(n) {
			break
		}
		h[i] = h[s]
		i = s
	}
	if last > 0 {
		h[i] = n
	}
	ps.heap = h
	return top
}

func absI32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// octile is the grid distance with diagonal steps, in tenths of a cell.
func octile(ax, ay, bx, by int32) int32 {
	dx, dy := absI32(ax-bx), absI32(ay-by)
	return 10*max(dx, dy) + 4*min(dx, dy)
}

// pathKey identifies a search: its result depends only on these, the
// map's terrain (which never changes) and which cells are blocked.
type pathKey struct{ start, goal, moveTicks int32 }

// maxNoPath bounds the failed searches a map remembers.
const maxNoPath = 4096

// findPath returns the cells from (sx, sy), exclusive, to (tx, ty),
// inclusive, for a pawn with the given move ticks. The target cell counts
// as passable. ok is false when the search gives up.
//
// A failed search costs its whole budget, and a pawn stuck behind an
// obstacle retries the same ones after every cool-down, so the map
// remembers the searches that failed (gameMap.noPath) until passability
// changes. That memory is derived data, not state: a search it skips
// would fail again exactly the same way, so a world that lacks it (a clone,
// a loaded world) evolves identically.
func (w *World) findPath(m *gameMap, moveTicks, sx, sy, tx, ty int32) (path []int32, ok bool) {
	if sx == tx && sy == ty {
		return nil, true
	}
	if !m.in(sx, sy) || !m.in(tx, ty) {
		return nil, false
	}
	key := pathKey{m.idx(sx, sy), m.idx(tx, ty), moveTicks}
	if m.noPath[key] {
		return nil, false
	}
	if path, ok = w.search(m, moveTicks, sx, sy, tx, ty); !ok {
		if m.noPath == nil || len(m.noPath) >= maxNoPath {
			m.noPath = make(map[pathKey]bool)
		}
		m.noPath[key] = true
	}
	return path, ok
}

// search is findPath without the memory of failures.
func (w *World) search(m *gameMap, moveTicks, sx, sy, tx, ty int32) (path []int32, ok bool) {
	r := w.r
	ps := &w.paths
	ps.begin(m.Terrain.len())
	ps.tie = 0
	if w.faultAt(faultPathTie) != nil {
		ps.tie = -1
	}
	start, goal := m.idx(sx, sy), m.idx(tx, ty)
	walk := func(x, y int32) bool {
		if !m.in(x, y) {
			return false
		}
		c := m.idx(x, y)
		return c == goal || m.passable(r, c)
	}
	*ps.slot(start) = pathSlot{cell: start, mark: ps.gen, parent: -1}
	// Callers only ask for targets in the pawn's region, so a failure
	// means the budget ran out; it grows with the distance. The heuristic
	// is weighted by 2: paths may be a little longer than the cheapest,
	// but searches close far fewer nodes.
	budget := min(maxExpand, 400+50*max(absI32(sx-tx), absI32(sy-ty)))
	h0 := 2 * moveTicks * octile(sx, sy, tx, ty)
	ps.push(pathNode{key: nodeKey(h0, h0), c: start ^ ps.tie})
	enter := &r.enterCost
	for expanded := int32(0); len(ps.heap) > 0; {
		n := ps.pop()
		n.c ^= ps.tie
		ns := ps.slot(n.c)
		if ns.mark != ps.gen {
			continue // already closed through a cheaper entry
		}
		if n.c == goal {
			return ps.trace(goal, start), true
		}
		ns.mark = ps.gen + 1
		if expanded++; expanded > budget {
			return nil, false
		}
		x, y := n.c%m.W, n.c/m.W
		g := ns.g
		var ok [4]bool // the orthogonal neighbours a pawn may enter
		for d := range 4 {
			ok[d] = walk(x+dirX[d], y+dirY[d])
		}
		for d := range 8 {
			nx, ny := x+dirX[d], y+dirY[d]
			step := 10 * moveTicks
			if d < 4 {
				if !ok[d] {
					continue
				}
			} else {
				// no cutting corners past obstacles: the cells beside
				// the diagonal step are the orthogonal neighbours at
				// (x+dx, y), direction 2-dx, and (x, y+dy), 1+dy
				if !ok[2-dirX[d]] || !ok[1+dirY[d]] || !walk(nx, ny) {
					continue
				}
				step = 14 * moveTicks
			}
			c := m.idx(nx, ny)
			cs := ps.slot(c)
			if cs.mark == ps.gen+1 {
				continue
			}
			ng := g + step + enter[m.Terrain.at(c)]
			if cs.mark == ps.gen && cs.g <= ng {
				continue
			}
			cs.mark, cs.g, cs.parent = ps.gen, ng, n.c
			h := 2 * moveTicks * octile(nx, ny, tx, ty)
			ps.push(pathNode{key: nodeKey(ng+h, h), c: c ^ ps.tie})
		}
	}
	return nil, false
}

func (ps *pathScratch) trace(goal, start int32) []int32 {
	n := 0
	for c := goal; c != start; c = ps.slot(c).parent {
		n++
	}
	path := make([]int32, n)
	for c := goal; c != start; c = ps.slot(c).parent {
		n--
		path[n] = c
	}
	return path
}
