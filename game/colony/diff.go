package colony

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/lockhost/lockhost/lockstep"
)

var _ lockstep.StateDiffer = (*World)(nil)

// DiffMap compares two encodings of map id (MarshalMap's output), or of
// the world-level state (MarshalWorld's) for lockstep.WorldScope, the
// host's first, and names what differs, field by field: the map's PRNG
// state and next ID, its terrain, its things by ID ("map 2 / thing 10644
// (Steel) / count", with the value "absent" for a thing one side lacks)
// and its pawns by ID ("map 0 / pawn 615 / x"). It implements
// lockstep.StateDiffer. Both encodings are decoded as a load would,
// against this world's content, so it fails on an encoding a load would
// refuse. It only reads the world.
func (w *World) DiffMap(id int32, host, player []byte) ([]lockstep.Difference, error) {
	if id == lockstep.WorldScope {
		return w.diffWorld(host, player)
	}
	a, err := decodeMap(w.r, id, host, false)
	if err != nil {
		return nil, fmt.Errorf("colony: diff: host's %w", err)
	}
	b, err := decodeMap(w.r, id, player, false)
	if err != nil {
		return nil, fmt.Errorf("colony: diff: player's %w", err)
	}
	d := differ{r: w.r, prefix: "map " + strconv.Itoa(int(id)) + " / ", width: a.W}
	d.num("width", a.W, b.W)
	d.num("height", a.H, b.H)
	d.field("rng state", hex64(a.RNG.s), hex64(b.RNG.s))
	d.num("next ID", a.NextID, b.NextID)
	d.num("wild target", a.WildTarget, b.WildTarget)
	if a.W == b.W && a.H == b.H {
		d.terrain(a, b)
	}
	d.things(a.Things, b.Things)
	d.pawns(a.Pawns, b.Pawns, false)
	return d.out, nil
}

// DiffTrace compares two traces of map id (AppendTrace's output), or of
// the world-level state for lockstep.WorldScope, the host's first: the
// map's PRNG state, next ID and counts, and its pawns field by field. It
// implements lockstep.StateDiffer.
func (w *World) DiffTrace(id int32, host, player []byte) ([]lockstep.Difference, error) {
	if id == lockstep.WorldScope {
		if len(host) != traceWorldLen || len(player) != traceWorldLen {
			return nil, fmt.Errorf("colony: diff: a world trace has %d bytes, want %d", max(len(host), len(player)), traceWorldLen)
		}
		le := binary.LittleEndian
		d := differ{r: w.r, prefix: "world / "}
		d.field("tick", strconv.FormatUint(le.Uint64(host), 10), strconv.FormatUint(le.Uint64(player), 10))
		d.field("rng state", hex64(le.Uint64(host[8:])), hex64(le.Uint64(player[8:])))
		d.num("temperature", int32(le.Uint32(host[16:])), int32(le.Uint32(player[16:])))
		return d.out, nil
	}
	a, err := parseTrace(host)
	if err != nil {
		return nil, fmt.Errorf("colony: diff: host's trace of map %d: %w", id, err)
	}
	b, err := parseTrace(player)
	if err != nil {
		return nil, fmt.Errorf("colony: diff: player's trace of map %d: %w", id, err)
	}
	d := differ{r: w.r, prefix: "map " + strconv.Itoa(int(id)) + " / "}
	d.field("rng state", hex64(a.rng), hex64(b.rng))
	d.num("next ID", a.nextID, b.nextID)
	d.num("things", a.things, b.things)
	d.pawns(a.pawns, b.pawns, true)
	return d.out, nil
}

// diffWorld compares two world-level encodings.
func (w *World) diffWorld(host, player []byte) ([]lockstep.Difference, error) {
	type world struct {
		tick, seed, rng uint64
		temp            int32
		maps            uint64
	}
	dec := func(b []byte) (world, error) {
		d := &decoder{b: b, what: "world"}
		d.header(worldMagic, w.r.fingerprint)
		v := world{tick: d.uv("tick", 1<<63), seed: d.u64("seed"), rng: d.u64("rng")}
		v.temp = int32(d.sv("temperature", -maxTemp, maxTemp))
		v.maps = d.uv("map count", MaxMaps)
		d.end()
		return v, d.err
	}
	a, err := dec(host)
	if err != nil {
		return nil, fmt.Errorf("colony: diff: host's %w", err)
	}
	b, err := dec(player)
	if err != nil {
		return nil, fmt.Errorf("colony: diff: player's %w", err)
	}
	d := differ{r: w.r, prefix: "world / "}
	d.field("tick", strconv.FormatUint(a.tick, 10), strconv.FormatUint(b.tick, 10))
	d.field("seed", hex64(a.seed), hex64(b.seed))
	d.field("rng state", hex64(a.rng), hex64(b.rng))
	d.num("temperature", a.temp, b.temp)
	d.field("maps", strconv.FormatUint(a.maps, 10), strconv.FormatUint(b.maps, 10))
	return d.out, nil
}

// tracedMap is a map's trace, parsed. Its pawns hold what the trace
// holds, the rest zero.
type tracedMap struct {
	rng                    uint64
	nextID, things, npawns int32
	pawns                  []pawn
}

// parseTrace parses one map's trace.
func parseTrace(b []byte) (tracedMap, error) {
	le := binary.LittleEndian
	var t tracedMap
	if len(b) < traceMapHead {
		return t, fmt.Errorf("%d bytes, want at least %d", len(b), traceMapHead)
	}
	t.rng = le.Uint64(b)
	t.nextID = int32(le.Uint32(b[8:]))
	t.things = int32(le.Uint32(b[12:]))
	t.npawns = int32(le.Uint32(b[16:]))
	b = b[traceMapHead:]
	if t.npawns < 0 || len(b) != int(t.npawns)*tracePawnLen {
		return t, fmt.Errorf("%d pawns in %d bytes", t.npawns, len(b))
	}
	t.pawns = make([]pawn, t.npawns)
	for i := range t.pawns {
		s := b[i*tracePawnLen:]
		w0, w1 := le.Uint64(s), le.Uint64(s[8:])
		t.pawns[i] = pawn{
			ID: int32(uint32(w0)), Hunger: int32(uint32(w0 >> 32)),
			X: int32(uint16(w1)), Y: int32(uint16(w1 >> 16)),
			Cool: int32(uint16(w1 >> 32)), MoveCool: int32(uint16(w1 >> 48)),
			Carry: carried{Def: -1},
			Kind:  -1, // not traced: it never changes
		}
	}
	return t, nil
}

// differ gathers differences under a path prefix.
type differ struct {
	r      *rules
	prefix string
	width  int32 // the map's, to name path cells; 0 when unknown
	out    []lockstep.Difference
}

func (d *differ) field(name, host, player string) {
	if host != player {
		d.out = append(d.out, lockstep.Difference{Path: d.prefix + name, Host: host, Player: player})
	}
}

func (d *differ) num(name string, host, player int32) {
	if host != player {
		d.field(name, strconv.Itoa(int(host)), strconv.Itoa(int(player)))
	}
}

func hex64(v uint64) string { return fmt.Sprintf("%#016x", v) }

// maxTerrainDiffs bounds the differing cells DiffMap names one by one.
const maxTerrainDiffs = 8

// terrain names the cells whose terrain differs, the first few by
// coordinates, then how many there are in all.
func (d *differ) terrain(a, b *gameMap) {
	n := 0
	for c := int32(0); c < a.W*a.H; c++ {
		ta, tb := a.Terrain.at(c), b.Terrain.at(c)
		if ta == tb {
			continue
		}
		if n++; n <= maxTerrainDiffs {
			d.field(fmt.Sprintf("terrain %d,%d", c%a.W, c/a.W), d.r.content.Terrains[ta].Name, d.r.content.Terrains[tb].Name)
		}
	}
	if n > maxTerrainDiffs {
		d.field("terrain cells differing", strconv.Itoa(0), strconv.Itoa(n))
	}
}

// thingName is "thing 10644 (Steel)".
func (d *differ) thingName(t *thing) string {
	return "thing " + strconv.Itoa(int(t.ID)) + " (" + d.defName(t.Def) + ")"
}

func (d *differ) defName(def int32) string {
	if def < 0 || int(def) >= len(d.r.content.Things) {
		return "none"
	}
	return d.r.content.Things[def].Name
}

// things compares two thing lists sorted by ID.
func (d *differ) things(a, b []thing) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].ID < b[j].ID:
			d.field(d.thingName(&a[i]), "present", "absent")
			i++
		case i == len(a) || b[j].ID < a[i].ID:
			d.field(d.thingName(&b[j]), "absent", "present")
			j++
		default:
			d.thing(&a[i], &b[j])
			i++
			j++
		}
	}
}

func (d *differ) thing(a, b *thing) {
	sub := differ{r: d.r, prefix: d.prefix + d.thingName(a) + " / "}
	sub.field("def", d.defName(a.Def), d.defName(b.Def))
	sub.num("x", a.X, b.X)
	sub.num("y", a.Y, b.Y)
	sub.num("count", a.Count, b.Count)
	sub.num("hp", a.HP, b.HP)
	sub.num("growth", a.Growth, b.Growth)
	sub.field("unsown", strconv.FormatBool(a.Flags&flagUnsown != 0), strconv.FormatBool(b.Flags&flagUnsown != 0))
	sub.num("reserved by", a.Reserved, b.Reserved)
	d.out = append(d.out, sub.out...)
}

// pawns compares two pawn lists sorted by ID, all their fields or, for
// a trace's pawns (traced), the traced ones.
func (d *differ) pawns(a, b []pawn, traced bool) {
	i, j := 0, 0
	name := func(p *pawn) string { return "pawn " + strconv.Itoa(int(p.ID)) }
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].ID < b[j].ID:
			d.field(name(&a[i]), "present", "absent")
			i++
		case i == len(a) || b[j].ID < a[i].ID:
			d.field(name(&b[j]), "absent", "present")
			j++
		default:
			sub := differ{r: d.r, prefix: d.prefix + name(&a[i]) + " / ", width: d.width}
			sub.pawn(&a[i], &b[j])
			if !traced {
				sub.path(a[i].Path, b[j].Path)
			}
			d.out = append(d.out, sub.out...)
			i++
			j++
		}
	}
}

func (d *differ) pawn(a, b *pawn) {
	if a.Kind >= 0 && b.Kind >= 0 && a.Kind != b.Kind {
		d.field("kind", d.r.content.PawnKinds[a.Kind].Name, d.r.content.PawnKinds[b.Kind].Name)
	}
	d.num("x", a.X, b.X)
	d.num("y", a.Y, b.Y)
	d.num("hunger", a.Hunger, b.Hunger)
	d.num("health", a.Health, b.Health)
	d.num("cool", a.Cool, b.Cool)
	d.num("move cool", a.MoveCool, b.MoveCool)
	d.field("job", jobName(a.Job.Kind), jobName(b.Job.Kind))
	d.num("job target", a.Job.Target, b.Job.Target)
	d.num("job x", a.Job.X, b.Job.X)
	d.num("job y", a.Job.Y, b.Job.Y)
	d.num("job progress", a.Job.Progress, b.Job.Progress)
	d.num("ignored thing", a.Ignore, b.Ignore)
	d.field("carrying", d.defName(a.Carry.Def), d.defName(b.Carry.Def))
	d.num("carried count", a.Carry.Count, b.Carry.Count)
	d.num("carried hp", a.Carry.HP, b.Carry.HP)
}

// path compares two paths: their lengths and their first differing cell.
func (d *differ) path(a, b []int32) {
	d.num("path length", int32(len(a)), int32(len(b)))
	for k := range min(len(a), len(b)) {
		if a[k] != b[k] {
			d.field("path step "+strconv.Itoa(k+1), d.cell(a[k]), d.cell(b[k]))
			return
		}
	}
}

func jobName(k uint8) string {
	if int(k) < len(jobNames) {
		return jobNames[k]
	}
	return "job " + strconv.Itoa(int(k))
}

// cell names a cell "x,y" (by index when the width is unknown).
func (d *differ) cell(c int32) string {
	if d.width <= 0 {
		return "cell " + strconv.Itoa(int(c))
	}
	return strconv.Itoa(int(c%d.width)) + "," + strconv.Itoa(int(c/d.width))
}
