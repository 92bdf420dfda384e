package lockstep

// Explaining a desync: the game's side.
//
// A checkpoint says that a player's state differs from the host's, not
// where or why. To say that, the engine needs two things from the game,
// both optional:
//
//   - a Tracer, so that every machine keeps a cheap record of every tick
//     (a TraceLog): cheap enough to keep always, so that once the states
//     differ the record of the player's own live run is still there;
//   - a StateDiffer, so that two states found to differ can be compared
//     field by field and the differences named in the game's own terms.
//
// A game that implements neither still gets the first differing tick: the
// explanation re-simulates both sides from the last matching checkpoint
// and compares MapHash tick by tick (see package desync/explain).

// Difference is one field whose value differs between the host's state
// and a player's, in the game's own terms.
type Difference struct {
	// Path names the field: "map 0 / pawn 615 / x",
	// "map 2 / thing 10644 (Steel) / count", "world / temperature".
	Path string
	// Host is the host's value, Player the player's: "12" and "13".
	// An object one side lacks has the value "absent" there.
	Host, Player string
}

// Tracer is implemented by games that can record a cheap trace of a map
// every tick: the part of the state that is cheap to copy and that most
// divergences touch first (a game's PRNG state, its next ID, its counts,
// its few moving actors). It must cost a small fraction of a Step: a
// TraceLog calls it for every map after every Step, on the simulation's
// own goroutine.
//
// AppendTrace appends the trace of map id to b and returns it; id
// WorldScope asks for the world-level state. The bytes are the game's
// own; the engine only stores them, compares them for equality and hands
// two of them to StateDiffer.DiffTrace. Equal states must give equal
// bytes. An unknown map appends nothing.
type Tracer interface {
	AppendTrace(id int32, b []byte) []byte
}

// StateDiffer is implemented by games that can say what differs between
// two states of a map. Both methods take the host's bytes first and the
// player's second, treat both as untrusted, and return the differences in
// a stable order (the game's: by object ID, say), the host's value in
// Difference.Host. Equal inputs give no differences.
type StateDiffer interface {
	// DiffMap compares two encodings of map id (MarshalMap's output), or
	// of the world-level state (MarshalWorld's) when id is WorldScope.
	DiffMap(id int32, host, player []byte) ([]Difference, error)
	// DiffTrace compares two traces of map id (Tracer.AppendTrace's
	// output; WorldScope for the world-level trace).
	DiffTrace(id int32, host, player []byte) ([]Difference, error)
}
