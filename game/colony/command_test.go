package colony

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

func TestCommandCodec(t *testing.T) {
	cmd := SpawnThing(3, "MealSimple", 10, 20, 4)
	if cmd.MapID != 3 || cmd.Kind != CmdSpawnThing || cmd.Tick != 0 || cmd.Player != 0 {
		t.Fatalf("command %+v", cmd)
	}
	a, err := DecodeSpawnThing(cmd.Payload)
	if err != nil || a != (SpawnThingArgs{Thing: "MealSimple", X: 10, Y: 20, Count: 4}) {
		t.Fatalf("decoded %+v, %v", a, err)
	}
	mv := MovePawn(1, 77, 5, 6)
	if mv.MapID != 1 || mv.Kind != CmdMovePawn {
		t.Fatalf("command %+v", mv)
	}
	b, err := DecodeMovePawn(mv.Payload)
	if err != nil || b != (MovePawnArgs{PawnID: 77, X: 5, Y: 6}) {
		t.Fatalf("decoded %+v, %v", b, err)
	}

	badSpawn := [][]byte{
		nil,
		{0},
		{5, 'a', 'b'},
		SpawnThing(0, "X", -1, 0, 1).Payload,
		SpawnThing(0, "X", 0, MaxSide, 1).Payload,
		SpawnThing(0, "X", 0, 0, 0).Payload,
		SpawnThing(0, strings.Repeat("n", maxNameLen+1), 0, 0, 1).Payload,
		append(SpawnThing(0, "X", 1, 1, 1).Payload, 0),
		SpawnThing(0, "X", 1, 1, 1).Payload[:4],
		bytes.Repeat([]byte{1}, maxPayload+1),
	}
	for i, p := range badSpawn {
		if _, err := DecodeSpawnThing(p); err == nil {
			t.Errorf("spawn payload %d (%x) accepted", i, p)
		}
	}
	badMove := [][]byte{
		nil,
		MovePawn(0, 0, 1, 1).Payload,
		MovePawn(0, -5, 1, 1).Payload,
		MovePawn(0, 1, -1, 1).Payload,
		MovePawn(0, 1, 1, 1).Payload[:2],
		append(MovePawn(0, 1, 1, 1).Payload, 9),
		binary.AppendUvarint(nil, 1<<40),
	}
	for i, p := range badMove {
		if _, err := DecodeMovePawn(p); err == nil {
			t.Errorf("move payload %d (%x) accepted", i, p)
		}
	}
}

func TestApplyRefusals(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(21))
	run(t, w, newScript(1, c), 200)
	m := w.maps[0]
	r := w.r

	water := func(ci int32) bool { return !r.terrains[m.Terrain.at(ci)].passable }
	wx, wy := findCell(t, w, m, water)
	barren := func(ci int32) bool {
		return m.passable(r, ci) && m.fertility(r, ci) == 0 && m.cells[ci].buildings == 0
	}
	bx, by := findCell(t, w, m, barren)
	var plant, shelf *thing
	for i := range m.Things {
		th := &m.Things[i]
		switch {
		case plant == nil && r.things[th.Def].cat == catPlant:
			plant = th
		case shelf == nil && r.things[th.Def].storage > 0:
			shelf = th
		}
	}
	if plant == nil || shelf == nil {
		t.Fatal("test world lacks a plant or a shelf")
	}
	pawnID := m.Pawns[0].ID

	tests := []struct {
		name string
		cmd  lockstep.Command
		want string
	}{
		{"engine kind", lockstep.Command{MapID: 0, Kind: lockstep.KindSetSpeed, Payload: []byte{2}}, "engine"},
		{"world scope", lockstep.Command{MapID: lockstep.WorldScope, Kind: CmdSpawnThing}, "world-scoped"},
		{"unknown map", SpawnThing(2, "Steel", 1, 1, 1), "unknown map 2"},
		{"negative map", SpawnThing(-7, "Steel", 1, 1, 1), "unknown map"},
		{"unknown kind", lockstep.Command{MapID: 0, Kind: 99}, "unknown command kind 99"},
		{"empty payload", lockstep.Command{MapID: 0, Kind: CmdSpawnThing}, "payload"},
		{"unknown def", SpawnThing(0, "Unobtainium", 1, 1, 1), "unknown thing"},
		{"out of bounds x", SpawnThing(0, "Steel", 64, 1, 1), "outside"},
		{"out of bounds y", SpawnThing(0, "Steel", 1, 48, 1), "outside"},
		{"impassable", SpawnThing(0, "Steel", int(wx), int(wy), 1), "impassable"},
		{"over stack limit", SpawnThing(0, "MealSimple", int(bx), int(by), 11), "stack limit"},
		{"plant on barren", SpawnThing(0, "PlantPotato", int(bx), int(by), 1), "fertile"},
		{"plant on plant", SpawnThing(0, "PlantGrass", int(plant.X), int(plant.Y), 1), "occupied"},
		{"two plants of count 2", SpawnThing(0, "PlantGrass", int(plant.X), int(plant.Y), 2), "stack limit"},
		{"building on building", SpawnThing(0, "Bed", int(shelf.X), int(shelf.Y), 1), "occupied"},
		{"wall on plant", SpawnThing(0, "Wall", int(plant.X), int(plant.Y), 1), "occupied"},
		{"move unknown pawn", MovePawn(0, 99999, 1, 1), "no pawn 99999"},
		{"move out of bounds", MovePawn(0, pawnID, 100, 1), "outside"},
		{"move into water", MovePawn(0, pawnID, int(wx), int(wy)), "impassable"},
		{"move bad payload", lockstep.Command{MapID: 0, Kind: CmdMovePawn, Payload: []byte{0x80}}, "payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.WorldHash()
			world0, maps0 := snapshot(t, w)
			err := w.Apply(tt.cmd)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to mention %q", err, tt.want)
			}
			if w.WorldHash() != before {
				t.Fatal("refused command changed the world")
			}
			world1, maps1 := snapshot(t, w)
			if !bytes.Equal(world0, world1) {
				t.Fatal("refused command changed the world blob")
			}
			for i := range maps0 {
				if !bytes.Equal(maps0[i].Data, maps1[i].Data) {
					t.Fatalf("refused command changed map %d", i)
				}
			}
		})
	}
}

func TestApplyEffects(t *testing.T) {
	c := testContent(t)
	w := mustNew(t, c, smallConfig(8))
	m := w.maps[0]
	r := w.r
	free := func(ci int32) bool {
		return m.passable(r, ci) && m.cells[ci].buildings == 0 && m.cells[ci].items == 0 &&
			m.cells[ci].plants == 0 && m.fertility(r, ci) >= 80
	}
	x, y := findCell(t, w, m, free)
	n := len(m.Things)
	if err := w.Apply(SpawnThing(0, "MealSimple", int(x), int(y), 6)); err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(SpawnThing(0, "MealSimple", int(x), int(y), 6)); err != nil {
		t.Fatal(err)
	}
	// 12 meals with a stack limit of 10: one full stack and one of 2
	var counts []int32
	for _, th := range m.Things {
		if th.X == x && th.Y == y {
			counts = append(counts, th.Count)
		}
	}
	if len(counts) != 2 || counts[0] != 10 || counts[1] != 2 || len(m.Things) != n+2 {
		t.Fatalf("stacks at the cell: %v", counts)
	}
	// a sowable plant arrives unsown: a designation to sow
	x2, y2 := findCell(t, w, m, func(ci int32) bool { return free(ci) && ci != m.idx(x, y) })
	if err := w.Apply(SpawnThing(0, "PlantRice", int(x2), int(y2), 1)); err != nil {
		t.Fatal(err)
	}
	last := m.Things[len(m.Things)-1]
	if last.Flags&flagUnsown == 0 || last.Growth != 0 {
		t.Fatalf("spawned crop %+v", last)
	}
	// a wall blocks the cell
	x3, y3 := findCell(t, w, m, func(ci int32) bool { return free(ci) && ci != m.idx(x, y) && ci != m.idx(x2, y2) })
	if err := w.Apply(SpawnThing(0, "Wall", int(x3), int(y3), 1)); err != nil {
		t.Fatal(err)
	}
	if m.passable(r, m.idx(x3, y3)) {
		t.Fatal("wall cell still passable")
	}
	// move a pawn: it walks there and stops
	p := &m.Pawns[0]
	id := p.ID
	home := m.regionAt(r, p.X, p.Y)
	tx, ty := findCell(t, w, m, func(ci int32) bool {
		return m.regionOf(r, ci) == home && octile(p.X, p.Y, ci%m.W, ci/m.W) > 50
	})
	if err := w.Apply(MovePawn(0, id, int(tx), int(ty))); err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		w.Step()
		p = &m.Pawns[m.findPawn(id)]
		if p.X == tx && p.Y == ty {
			return
		}
	}
	t.Fatalf("pawn %d at %d,%d never reached %d,%d", id, p.X, p.Y, tx, ty)
}

// FuzzApply feeds arbitrary commands to a world: a refused command must
// leave the state untouched, and whatever is accepted must keep stepping.
func FuzzApply(f *testing.F) {
	c := testContent(f)
	base := mustNew(f, c, Config{Maps: 2, Width: 24, Height: 20, Seed: 2, PawnsPerMap: 5, ThingsPerMap: 60})
	run(f, base, newScript(2, c), 200)
	world, maps := snapshot(f, base)
	f.Add(CmdSpawnThing, int32(0), SpawnThing(0, "MealSimple", 3, 4, 5).Payload)
	f.Add(CmdSpawnThing, int32(1), SpawnThing(0, "Wall", 10, 10, 1).Payload)
	f.Add(CmdSpawnThing, int32(0), SpawnThing(0, "PlantPotato", 5, 5, 1).Payload)
	f.Add(CmdMovePawn, int32(1), MovePawn(1, base.maps[1].Pawns[0].ID, 7, 7).Payload)
	f.Add(uint16(7), int32(-1), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, kind uint16, mapID int32, payload []byte) {
		w, err := Load(c, world, maps)
		if err != nil {
			t.Fatal(err)
		}
		before := w.WorldHash()
		if err := w.Apply(lockstep.Command{MapID: mapID, Kind: kind, Payload: payload}); err != nil {
			if w.WorldHash() != before {
				t.Fatalf("refused command (%v) changed the world", err)
			}
			return
		}
		for range 20 {
			w.Step()
		}
	})
}
