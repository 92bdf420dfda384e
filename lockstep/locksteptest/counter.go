package locksteptest

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/lockstep"
)

// KindAdd adds the payload's one signed byte to a map's value.
const KindAdd uint16 = 1

// Counters is a world of maps that each hold a value and a little state
// that changes every tick while the value is not zero (a map nobody has
// touched stays idle, so its version does not change).
type Counters struct {
	tick uint64
	maps []counterMap
}

type counterMap struct {
	id      int32
	value   int64
	acc     uint64
	cells   []byte
	version uint64 // bumped on every change; not part of the state
}

// New returns n maps, each with size bytes of state.
func New(n, size int) *Counters {
	c := &Counters{}
	for i := 0; i < n; i++ {
		c.maps = append(c.maps, counterMap{id: int32(i), cells: make([]byte, size)})
	}
	return c
}

// Tick implements lockstep.Sim.
func (c *Counters) Tick() uint64 { return c.tick }

// Apply implements lockstep.Sim.
func (c *Counters) Apply(cmd lockstep.Command) error {
	if cmd.Kind != KindAdd {
		return fmt.Errorf("unknown command kind %d", cmd.Kind)
	}
	if len(cmd.Payload) != 1 {
		return errors.New("add takes one byte")
	}
	m := c.find(cmd.MapID)
	if m == nil {
		return fmt.Errorf("no map %d", cmd.MapID)
	}
	m.value += int64(int8(cmd.Payload[0]))
	m.version++
	return nil
}

// Step implements lockstep.Sim.
func (c *Counters) Step() {
	for i := range c.maps {
		m := &c.maps[i]
		if m.value == 0 {
			continue
		}
		m.version++
		m.acc = m.acc*6364136223846793005 + 1442695040888963407 + uint64(m.value)
		if len(m.cells) > 0 {
			m.cells[c.tick%uint64(len(m.cells))] ^= byte(m.acc >> 56)
		}
	}
	c.tick++
}

func (c *Counters) find(id int32) *counterMap {
	for i := range c.maps {
		if c.maps[i].id == id {
			return &c.maps[i]
		}
	}
	return nil
}

// MapIDs implements lockstep.Sim.
func (c *Counters) MapIDs() []int32 {
	ids := make([]int32, len(c.maps))
	for i, m := range c.maps {
		ids[i] = m.id
	}
	return ids
}

// Value returns a map's value.
func (c *Counters) Value(id int32) int64 {
	if m := c.find(id); m != nil {
		return m.value
	}
	return 0
}

// MapHash implements lockstep.Sim.
func (c *Counters) MapHash(id int32) (uint64, bool) {
	m := c.find(id)
	if m == nil {
		return 0, false
	}
	return m.hash(), true
}

// hash is the xxhash of the map's encoding, streamed: the cells are not
// copied, which matters where every tick is hashed (under the race
// detector, a copy of every map each tick slows a test's host and its
// joiners' catch-up several times over).
func (m *counterMap) hash() uint64 {
	d := xxhash.New()
	_, _ = d.Write(m.header())
	_, _ = d.Write(m.cells)
	return d.Sum64()
}

// WorldHash implements lockstep.Sim.
func (c *Counters) WorldHash() uint64 {
	d := xxhash.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], c.tick)
	d.Write(b[:])
	for _, m := range c.maps {
		h, _ := c.MapHash(m.id)
		binary.LittleEndian.PutUint64(b[:], h)
		d.Write(b[:])
	}
	return d.Sum64()
}

// MarshalWorld implements lockstep.Sim.
func (c *Counters) MarshalWorld() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, c.tick), nil
}

// header is the encoding's fixed part, before the cells.
func (m *counterMap) header() []byte {
	b := make([]byte, 0, 24)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.id))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.value))
	b = binary.LittleEndian.AppendUint64(b, m.acc)
	return binary.LittleEndian.AppendUint32(b, uint32(len(m.cells)))
}

func (m *counterMap) encode() []byte {
	return append(m.header(), m.cells...)
}

// MarshalMap implements lockstep.Sim.
func (c *Counters) MarshalMap(id int32) ([]byte, error) {
	m := c.find(id)
	if m == nil {
		return nil, fmt.Errorf("no map %d", id)
	}
	return m.encode(), nil
}

// MaxCells bounds a loaded map's state.
const MaxCells = 64 << 20

// Load is a lockstep.Loader for Counters.
func Load(world []byte, maps []lockstep.MapBlob) (lockstep.Sim, error) {
	return lockstep.LoaderOf(MapLoader)(world, maps)
}

// MapLoader rebuilds Counters map by map (lockstep.MapLoader).
var MapLoader lockstep.MapLoader = mapLoader{}

type mapLoader struct{}

type assembly struct {
	c    *Counters
	want int
}

// Begin implements lockstep.MapLoader.
func (mapLoader) Begin(world []byte, maps int) (lockstep.MapAssembly, error) {
	if len(world) != 8 {
		return nil, errors.New("world state must be 8 bytes")
	}
	if maps < 0 || maps > 1<<16 {
		return nil, fmt.Errorf("%d maps", maps)
	}
	return &assembly{c: &Counters{tick: binary.LittleEndian.Uint64(world)}, want: maps}, nil
}

// AddMap implements lockstep.MapAssembly.
func (a *assembly) AddMap(mb lockstep.MapBlob) error {
	b := mb.Data
	if len(a.c.maps) >= a.want {
		return fmt.Errorf("map %d: more maps than the %d announced", mb.ID, a.want)
	}
	if len(b) < 24 {
		return fmt.Errorf("map %d: short", mb.ID)
	}
	m := counterMap{
		id:    int32(binary.LittleEndian.Uint32(b)),
		value: int64(binary.LittleEndian.Uint64(b[4:])),
		acc:   binary.LittleEndian.Uint64(b[12:]),
	}
	n := binary.LittleEndian.Uint32(b[20:])
	if n > MaxCells || uint64(n) != uint64(len(b)-24) || m.id != mb.ID {
		return fmt.Errorf("map %d: bad layout", mb.ID)
	}
	if a.c.find(m.id) != nil {
		return fmt.Errorf("map %d twice", m.id)
	}
	m.cells = append([]byte(nil), b[24:]...)
	a.c.maps = append(a.c.maps, m)
	return nil
}

// Finish implements lockstep.MapAssembly.
func (a *assembly) Finish() (lockstep.Sim, error) {
	if len(a.c.maps) != a.want {
		return nil, fmt.Errorf("%d of %d maps", len(a.c.maps), a.want)
	}
	slices.SortFunc(a.c.maps, func(x, y counterMap) int { return cmp.Compare(x.id, y.id) })
	return a.c, nil
}

// Clone implements lockstep.Cloner.
func (c *Counters) Clone() lockstep.Sim {
	d := &Counters{tick: c.tick, maps: make([]counterMap, len(c.maps))}
	for i, m := range c.maps {
		m.cells = append([]byte(nil), m.cells...)
		d.maps[i] = m
	}
	return d
}

// MapVersion implements lockstep.MapVersioner.
func (c *Counters) MapVersion(id int32) uint64 {
	if m := c.find(id); m != nil {
		return m.version
	}
	return 0
}

var (
	_ lockstep.Sim          = (*Counters)(nil)
	_ lockstep.Cloner       = (*Counters)(nil)
	_ lockstep.MapVersioner = (*Counters)(nil)
)

// AddCommand builds a KindAdd command adding delta to a map's value.
func (Counters) AddCommand(mapID int32, delta int8) lockstep.Command {
	return lockstep.Command{MapID: mapID, Kind: KindAdd, Payload: []byte{byte(delta)}}
}

// ReplaceMap implements lockstep.MapReplacer: the map with m.ID takes the
// decoded state; on an error nothing changes.
func (c *Counters) ReplaceMap(mb lockstep.MapBlob) error {
	old := c.find(mb.ID)
	if old == nil {
		return fmt.Errorf("no map %d", mb.ID)
	}
	asm := &assembly{c: &Counters{}, want: 1}
	if err := asm.AddMap(mb); err != nil {
		return err
	}
	m := asm.c.maps[0]
	m.version = old.version + 1
	*old = m
	return nil
}

// Perturb changes map id's state the way a desync would (its accumulator
// flips a bit), for tests of desync detection and repair.
func (c *Counters) Perturb(id int32) error {
	m := c.find(id)
	if m == nil {
		return fmt.Errorf("no map %d", id)
	}
	m.acc ^= 1
	m.version++
	return nil
}

var _ lockstep.MapReplacer = (*Counters)(nil)
