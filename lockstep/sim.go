package lockstep

// WorldScope is the MapID of commands that are not about one map.
const WorldScope int32 = -1

// Command is one player action. The host fills Tick, Seq and Player; a
// client only chooses MapID, Kind and Payload.
//
// This package owns a command's encoding: its codec keys below. The
// protocol's Server_Tick (package wire) and the join point payload
// (package snapshot, and so saves) carry commands as they are, so
// changing a key changes both formats; a test here pins the bytes.
type Command struct {
	Tick    uint64 `codec:"t"`
	Seq     uint32 `codec:"q"` // order of application within Tick
	MapID   int32  `codec:"m"`
	Kind    uint16 `codec:"k"`
	Player  int32  `codec:"p"`
	Payload []byte `codec:"d"`
}

// Command kinds at and above KindReserved belong to the engine; a Sim never
// sees them. A game numbers its own kinds below KindReserved; the host
// refuses a client's command of a reserved kind (with a notice) unless the
// engine handles it, like KindSetSpeed.
const (
	// KindReserved is the first engine-owned command kind.
	KindReserved uint16 = 0xFF00
	// KindSetSpeed changes the host's tick rate. Its payload is one byte:
	// the speed multiplier (0 = paused, 1 = normal, 2, 3 = fast).
	KindSetSpeed uint16 = 0xFF00
)

// Sim is what a deterministic game implements to be hosted. All methods are
// called from one goroutine at a time (but see Cloner). Given the same
// starting state and the same commands at the same ticks, every machine
// must reach the same hashes.
//
// Maps: a world has at most MaxMaps maps; their IDs are the game's own
// (WorldScope excepted). A command's MapID is one of MapIDs or WorldScope;
// the host refuses others before they reach Apply.
//
// Factions are not the Sim's: the host assigns each player a faction
// number (one shared faction, or one per player; spectators have none) and
// tells each joiner its own (join.Info.Faction). Commands carry the Player
// ID the host stamped, not a faction; a game that keeps factions in its
// state maps players to them itself, from its own commands.
//
// Def databases are optional: a game without any hosts with an empty
// host.Content.Databases and joins with an empty join.Config.Databases;
// the handshake then compares nothing.
type Sim interface {
	// Tick is the number of the next tick to be simulated.
	Tick() uint64
	// Apply applies one command at the current tick. It must validate the
	// command fully and leave the state untouched when it returns an error.
	Apply(cmd Command) error
	// Step simulates one tick.
	Step()
	// MapIDs lists the maps in ascending order.
	MapIDs() []int32
	// MapHash is a stable hash of one map's state; ok is false for an
	// unknown map.
	MapHash(id int32) (h uint64, ok bool)
	// WorldHash is a stable hash of the world-level state and every map.
	WorldHash() uint64
	// MarshalWorld encodes the world-level state (everything that is not a
	// map, the tick included).
	MarshalWorld() ([]byte, error)
	// MarshalMap encodes one map.
	MarshalMap(id int32) ([]byte, error)
}

// MapBlob is one encoded map, as produced by Sim.MarshalMap.
type MapBlob struct {
	ID   int32
	Data []byte
	// Owned hands Data over: the loader may keep it, or parts of it, in
	// the simulation it builds instead of copying them, and the caller
	// must not use Data again. False (the zero value) means Data is the
	// caller's, and nothing may keep it after the call.
	Owned bool
}

// Loader rebuilds a Sim from the output of MarshalWorld and MarshalMap. It
// must treat its input as untrusted and fail cleanly on anything malformed.
type Loader func(world []byte, maps []MapBlob) (Sim, error)

// Cloner is implemented by simulations that can copy their state much
// faster than they can encode it. The host then only clones on the tick
// goroutine and encodes the clone elsewhere, so cutting a join point
// stalls the tick for no longer than a copy.
//
// The clone is only read, never stepped or given a command, but it is
// read from several goroutines at once: one encoder per core calls
// MarshalMap (or snapshot's AppendMap) and MapHash on different maps of
// the same clone concurrently, and Tick, MapIDs, MarshalWorld, WorldHash
// and the optional hashers (MapDigester, WorldHasher) may run alongside. Those methods must
// therefore be safe for concurrent use on a clone: no caches filled on
// read, no shared scratch buffers. The clone must share no mutable memory
// with the original, which goes on stepping.
type Cloner interface {
	Clone() Sim
}

// MapVersioner is implemented by simulations that can tell cheaply whether
// a map changed: MapVersion returns a number that changes whenever the
// map's state does. The host reuses an unchanged map's compressed blob
// from the previous join point.
//
// Versions are compared for equality only, and 0 is an ordinary version:
// a map whose version equals the one recorded at the previous join point,
// 0 included, is taken as unchanged. So a game must not return a constant
// (0, say) for a map that can change; it should start a map's counter at
// any value and bump it on every change. A simulation that cannot tell
// should not implement MapVersioner at all: then every map is encoded
// afresh. The host reads versions on the tick goroutine, from the
// original, and asks only about IDs in MapIDs.
type MapVersioner interface {
	MapVersion(id int32) uint64
}

// MapLoader is implemented by games that can rebuild a simulation one map
// at a time. A joiner then hands each map over as soon as it is inflated
// and drops its raw bytes, so its memory stays near one copy of the world
// instead of the raw bytes plus the loaded world.
type MapLoader interface {
	// Begin starts from the world-level state (MarshalWorld's output) of a
	// world with the given number of maps. It treats its input as
	// untrusted.
	Begin(world []byte, maps int) (MapAssembly, error)
}

// MapAssembly is a simulation being rebuilt map by map.
type MapAssembly interface {
	// AddMap decodes one map (MarshalMap's output). Maps may come in any
	// order; the data is not kept after AddMap returns unless m.Owned
	// hands it over. Calls are not concurrent.
	AddMap(m MapBlob) error
	// Finish checks that every map arrived and returns the simulation.
	Finish() (Sim, error)
}

// ConcurrentMapAssembly is a MapAssembly whose AddMap may be called from
// several goroutines at once, each with a different map; Finish is still
// called alone, once every AddMap has returned. A joiner then decodes
// maps on every core instead of one at a time.
type ConcurrentMapAssembly interface {
	MapAssembly
	// ConcurrentAddMap does nothing: it marks the assembly as one whose
	// AddMap calls may overlap.
	ConcurrentAddMap()
}

// MapReplacer is implemented by simulations that can swap one map's state
// for an encoding of it (MarshalMap's output), leaving the world-level
// state and every other map as they are. A client whose map diverged from
// the host's then repairs that map alone instead of reloading the world.
// ReplaceMap treats its input as untrusted: on an error the simulation is
// unchanged. The map must already exist (m.ID is one of MapIDs).
type MapReplacer interface {
	ReplaceMap(m MapBlob) error
}

// MapDigester is implemented by simulations that can hash parts of a map
// as well as the whole, so a desync report can say which part of a map
// diverged. MapDigest returns MapHash(id) and appends the part hashes to
// parts (ok false for an unknown map); it should cost about one MapHash.
// MapPartNames names the parts, in order; it is the same for every map and
// every call, and has at most MaxMapParts names.
type MapDigester interface {
	MapDigest(id int32, parts []uint64) (h uint64, out []uint64, ok bool)
	MapPartNames() []string
}

// WorldHasher is implemented by simulations whose WorldHash is built on
// the map hashes: WorldHashOf returns WorldHash() given MapHash of every
// map in MapIDs order, so a checkpoint hashes each map once instead of
// twice.
type WorldHasher interface {
	WorldHashOf(mapHashes []uint64) uint64
}

// WorldHashFrom is st's world hash given mapHashes, the MapHash of every
// map in MapIDs order: combined by WorldHashOf when st is a WorldHasher
// and mapHashes is not nil, otherwise st.WorldHash(). It is the one place
// the world hash is made from map hashes, for checkpoints and join points
// alike.
func WorldHashFrom(st interface{ WorldHash() uint64 }, mapHashes []uint64) uint64 {
	if wh, ok := st.(WorldHasher); ok && mapHashes != nil {
		return wh.WorldHashOf(mapHashes)
	}
	return st.WorldHash()
}

// MaxMapParts bounds the part hashes of one map in a hash report.
const MaxMapParts = 16

// MaxMaps is the most maps a world may have: a state-hash report or a
// repair names at most this many (wire.MaxHashMaps), so a client of a
// world with more could not report its hashes.
const MaxMaps = 4096

// LoaderOf is the Loader a MapLoader makes: Begin, every map in the
// order given, Finish.
func LoaderOf(ml MapLoader) Loader {
	return func(world []byte, maps []MapBlob) (Sim, error) {
		asm, err := ml.Begin(world, len(maps))
		if err != nil {
			return nil, err
		}
		for _, m := range maps {
			if err := asm.AddMap(m); err != nil {
				return nil, err
			}
		}
		return asm.Finish()
	}
}
