package colony

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lockhost/lockhost/lockstep"
)

// Command kinds understood by World.Apply. Every command is map-scoped;
// the engine's own kinds (lockstep.KindReserved and above) never reach a Sim.
const (
	// CmdSpawnThing puts a thing on a map. Payload: see SpawnThing.
	CmdSpawnThing uint16 = 1
	// CmdMovePawn orders a pawn to walk to a cell. Payload: see MovePawn.
	CmdMovePawn uint16 = 2
)

// maxPayload bounds a command payload.
const maxPayload = 128

// SpawnThingArgs is the decoded payload of a CmdSpawnThing command.
type SpawnThingArgs struct {
	Thing string // defName of the thing type
	X, Y  int
	Count int // stack size; 1 for plants and buildings
}

// MovePawnArgs is the decoded payload of a CmdMovePawn command.
type MovePawnArgs struct {
	PawnID int32
	X, Y   int
}

// SpawnThing builds a CmdSpawnThing command for map mapID. The payload is
// the defName (uvarint length, bytes) then x, y and count as zig-zag
// varints. Spawning a sowable plant designates a crop to sow.
func SpawnThing(mapID int32, thing string, x, y, count int) lockstep.Command {
	b := make([]byte, 0, 16+len(thing))
	b = binary.AppendUvarint(b, uint64(len(thing)))
	b = append(b, thing...)
	b = binary.AppendVarint(b, int64(x))
	b = binary.AppendVarint(b, int64(y))
	b = binary.AppendVarint(b, int64(count))
	return lockstep.Command{MapID: mapID, Kind: CmdSpawnThing, Payload: b}
}

// MovePawn builds a CmdMovePawn command for map mapID: pawn ID, x and y as
// zig-zag varints. The pawn drops its current job and walks to the cell.
func MovePawn(mapID int32, pawnID int32, x, y int) lockstep.Command {
	b := make([]byte, 0, 16)
	b = binary.AppendVarint(b, int64(pawnID))
	b = binary.AppendVarint(b, int64(x))
	b = binary.AppendVarint(b, int64(y))
	return lockstep.Command{MapID: mapID, Kind: CmdMovePawn, Payload: b}
}

// payloadReader reads a command payload; the first error sticks.
type payloadReader struct {
	b   []byte
	err error
}

func (p *payloadReader) varint(what string, lo, hi int64) int64 {
	if p.err != nil {
		return 0
	}
	v, n := binary.Varint(p.b)
	if n <= 0 {
		p.err = fmt.Errorf("colony: payload: bad or missing %s", what)
		return 0
	}
	if v < lo || v > hi {
		p.err = fmt.Errorf("colony: payload: %s = %d, want %d..%d", what, v, lo, hi)
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *payloadReader) end() error {
	if p.err == nil && len(p.b) != 0 {
		p.err = fmt.Errorf("colony: payload: %d trailing bytes", len(p.b))
	}
	return p.err
}

// DecodeSpawnThing parses a CmdSpawnThing payload. It checks the
// encoding and basic ranges; World.Apply checks the rest against the map.
func DecodeSpawnThing(payload []byte) (SpawnThingArgs, error) {
	var a SpawnThingArgs
	if len(payload) > maxPayload {
		return a, fmt.Errorf("colony: payload: %d bytes, want at most %d", len(payload), maxPayload)
	}
	n, k := binary.Uvarint(payload)
	if k <= 0 || n == 0 || n > maxNameLen || uint64(len(payload)-k) < n {
		return a, errors.New("colony: payload: bad thing name")
	}
	a.Thing = string(payload[k : k+int(n)])
	p := payloadReader{b: payload[k+int(n):]}
	a.X = int(p.varint("x", 0, MaxSide-1))
	a.Y = int(p.varint("y", 0, MaxSide-1))
	a.Count = int(p.varint("count", 1, 10000))
	return a, p.end()
}

// DecodeMovePawn parses a CmdMovePawn payload.
func DecodeMovePawn(payload []byte) (MovePawnArgs, error) {
	var a MovePawnArgs
	if len(payload) > maxPayload {
		return a, fmt.Errorf("colony: payload: %d bytes, want at most %d", len(payload), maxPayload)
	}
	p := payloadReader{b: payload}
	a.PawnID = int32(p.varint("pawn ID", 1, maxID))
	a.X = int(p.varint("x", 0, MaxSide-1))
	a.Y = int(p.varint("y", 0, MaxSide-1))
	return a, p.end()
}

// Apply applies one command at the current tick. It validates the command
// fully and leaves the world untouched when it returns an error.
func (w *World) Apply(cmd lockstep.Command) error {
	if cmd.Kind >= lockstep.KindReserved {
		return fmt.Errorf("colony: command kind %#x belongs to the engine", cmd.Kind)
	}
	if cmd.MapID == lockstep.WorldScope {
		return fmt.Errorf("colony: command kind %d: no world-scoped commands", cmd.Kind)
	}
	m := w.mapByID(cmd.MapID)
	if m == nil {
		return fmt.Errorf("colony: command kind %d: unknown map %d", cmd.Kind, cmd.MapID)
	}
	m.derive(w.r)
	var err error
	switch cmd.Kind {
	case CmdSpawnThing:
		err = w.applySpawn(m, cmd.Payload)
	case CmdMovePawn:
		err = w.applyMove(m, cmd.Payload)
	default:
		return fmt.Errorf("colony: unknown command kind %d", cmd.Kind)
	}
	if err == nil {
		m.changed = true
	}
	m.settle()
	return err
}

func (w *World) applySpawn(m *gameMap, payload []byte) error {
	r := w.r
	a, err := DecodeSpawnThing(payload)
	if err != nil {
		return err
	}
	def, ok := r.thingByName[a.Thing]
	if !ok {
		return fmt.Errorf("colony: spawn: unknown thing %q", a.Thing)
	}
	x, y := int32(a.X), int32(a.Y)
	if !m.in(x, y) {
		return fmt.Errorf("colony: spawn %s: cell %d,%d is outside the %dx%d map", a.Thing, a.X, a.Y, m.W, m.H)
	}
	tr := &r.things[def]
	c := m.idx(x, y)
	ci := m.cells[c]
	if w.faultAt(faultSkipID) != nil && m.canAddThing() {
		m.NextID++ // a planted fault: the thing gets the next ID but one
	}
	switch {
	case !m.canAddThing():
		return fmt.Errorf("colony: spawn %s: map %d is full", a.Thing, m.ID)
	case !m.passable(r, c):
		return fmt.Errorf("colony: spawn %s: cell %d,%d is impassable", a.Thing, a.X, a.Y)
	case a.Count > int(tr.stackLimit):
		return fmt.Errorf("colony: spawn %s: count %d exceeds the stack limit %d", a.Thing, a.Count, tr.stackLimit)
	}
	switch tr.cat {
	case catPlant:
		if f := m.fertility(r, c); f == 0 || f < tr.minFertility {
			return fmt.Errorf("colony: spawn %s: cell %d,%d is not fertile enough (%d%%)", a.Thing, a.X, a.Y, f)
		}
		if ci.plants > 0 || ci.buildings > 0 {
			return fmt.Errorf("colony: spawn %s: cell %d,%d is occupied", a.Thing, a.X, a.Y)
		}
		t := r.newThing(def, x, y, 1)
		if tr.sowable {
			t.Flags = flagUnsown
		}
		m.addThing(r, t)
	case catBuilding:
		if ci.buildings > 0 || (tr.impassable && (ci.plants > 0 || ci.items > 0)) {
			return fmt.Errorf("colony: spawn %s: cell %d,%d is occupied", a.Thing, a.X, a.Y)
		}
		m.addThing(r, r.newThing(def, x, y, 1))
	default:
		m.spawnStack(r, def, int32(a.Count), tr.hitPoints, x, y)
	}
	return nil
}

func (w *World) applyMove(m *gameMap, payload []byte) error {
	r := w.r
	a, err := DecodeMovePawn(payload)
	if err != nil {
		return err
	}
	pi := m.findPawn(a.PawnID)
	if pi < 0 {
		return fmt.Errorf("colony: move: no pawn %d on map %d", a.PawnID, m.ID)
	}
	x, y := int32(a.X), int32(a.Y)
	if !m.in(x, y) {
		return fmt.Errorf("colony: move pawn %d: cell %d,%d is outside the %dx%d map", a.PawnID, a.X, a.Y, m.W, m.H)
	}
	if !m.passable(r, m.idx(x, y)) {
		return fmt.Errorf("colony: move pawn %d: cell %d,%d is impassable", a.PawnID, a.X, a.Y)
	}
	p := &m.Pawns[pi]
	m.endJob(r, p, 0)
	p.Job = job{Kind: jobGoto, X: x, Y: y}
	return nil
}
