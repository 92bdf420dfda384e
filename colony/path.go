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

type pathNode struct {
	f, h, c int32
}

func (a pathNode) less(b pathNode) bool {
	if a.f != b.f {
		return a.f < b.f
	}
	if a.h != b.h {
		return a.h < b.h
	}
	return a.c < b.c
}

// pathScratch is reusable search memory. A cell is open in the current
// search when mark == gen and closed when mark == gen+1.
type pathScratch struct {
	mark   []uint32
	g      []int32
	parent []int32
	gen    uint32
	heap   []pathNode
}

func (ps *pathScratch) begin(n int) {
	if len(ps.mark) < n {
		ps.mark = make([]uint32, n)
		ps.g = make([]int32, n)
		ps.parent = make([]int32, n)
		ps.gen = 0
	}
	ps.gen += 2
	if ps.gen >= 1<<31 {
		clear(ps.mark)
		ps.gen = 2
	}
	ps.heap = ps.heap[:0]
}

func (ps *pathScratch) push(n pathNode) {
	h := append(ps.heap, n)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].less(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	ps.heap = h
}

func (ps *pathScratch) pop() pathNode {
	h := ps.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		s := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			s = r
		}
		if !h[s].less(h[i]) {
			break
		}
		h[i], h[s] = h[s], h[i]
		i = s
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

// findPath returns the cells from (sx, sy), exclusive, to (tx, ty),
// inclusive, for a pawn with the given move ticks. The target cell counts
// as passable. ok is false when the search gives up.
func (w *World) findPath(m *gameMap, moveTicks, sx, sy, tx, ty int32) (path []int32, ok bool) {
	if sx == tx && sy == ty {
		return nil, true
	}
	if !m.in(sx, sy) || !m.in(tx, ty) {
		return nil, false
	}
	r := w.r
	ps := &w.paths
	ps.begin(len(m.Terrain))
	start, goal := m.idx(sx, sy), m.idx(tx, ty)
	walk := func(x, y int32) bool {
		if !m.in(x, y) {
			return false
		}
		c := m.idx(x, y)
		return c == goal || m.passable(r, c)
	}
	ps.mark[start] = ps.gen
	ps.g[start] = 0
	ps.parent[start] = -1
	// Callers only ask for targets in the pawn's region, so a failure
	// means the budget ran out; it grows with the distance. The heuristic
	// is weighted by 2: paths may be a little longer than the cheapest,
	// but searches close far fewer nodes.
	budget := min(maxExpand, 400+50*max(absI32(sx-tx), absI32(sy-ty)))
	h0 := 2 * moveTicks * octile(sx, sy, tx, ty)
	ps.push(pathNode{f: h0, h: h0, c: start})
	for expanded := int32(0); len(ps.heap) > 0; {
		n := ps.pop()
		if ps.mark[n.c] != ps.gen {
			continue // already closed through a cheaper entry
		}
		if n.c == goal {
			return ps.trace(goal, start), true
		}
		ps.mark[n.c] = ps.gen + 1
		if expanded++; expanded > budget {
			return nil, false
		}
		x, y := n.c%m.W, n.c/m.W
		g := ps.g[n.c]
		for d := range 8 {
			nx, ny := x+dirX[d], y+dirY[d]
			if !walk(nx, ny) {
				continue
			}
			step := 10 * moveTicks
			if d >= 4 {
				// no cutting corners past obstacles
				if !walk(x+dirX[d], y) || !walk(x, y+dirY[d]) {
					continue
				}
				step = 14 * moveTicks
			}
			c := m.idx(nx, ny)
			if ps.mark[c] == ps.gen+1 {
				continue
			}
			ng := g + step + 10*r.terrains[m.Terrain[c]].pathCost
			if ps.mark[c] == ps.gen && ps.g[c] <= ng {
				continue
			}
			ps.mark[c] = ps.gen
			ps.g[c] = ng
			ps.parent[c] = n.c
			h := 2 * moveTicks * octile(nx, ny, tx, ty)
			ps.push(pathNode{f: ng + h, h: h, c: c})
		}
	}
	return nil, false
}

func (ps *pathScratch) trace(goal, start int32) []int32 {
	n := 0
	for c := goal; c != start; c = ps.parent[c] {
		n++
	}
	path := make([]int32, n)
	for c := goal; c != start; c = ps.parent[c] {
		n--
		path[n] = c
	}
	return path
}
