// Package lockstep is the deterministic-simulation engine shared by the host
// and the join tool: the small Sim interface a game implements, command
// stamping and per-map command queues on the host side (Authority), the
// catch-up driver on the joining side (Follower), and the state-hash
// checkpoints both sides compare (Hasher, Checkpointer, HashRing).
//
// Timing contract. A command stamped with tick T is applied when the
// simulation's Tick() equals T, before the Step that moves it to T+1.
// Commands of one tick are applied in the order the host accepted them.
// A grant G means "you may Step until Tick() == G"; the host only sends a
// grant after every command stamped below G has been sent on the same
// ordered stream, so a follower that holds grant G holds every command it
// needs to reach G.
//
// A snapshot ("join point") is cut between two Advance calls at tick S: it
// holds the state with Tick() == S, including every command applied before
// the cut (normally none stamped S; while paused, earlier batches of S).
// The queues are reset at the cut, so the commands queued since the join
// point are exactly those applied after it, all stamped >= S.
//
// Checkpoints and repairs. A checkpoint at tick T is taken right after the
// Step that reached T, before any command stamped T, on every machine. A
// repair is cut like a join point, at (T, n): tick T after the first n
// commands stamped T (Authority.Applied); a Follower told HoldAt(T, n)
// stops exactly there, takes the repaired maps (MapReplacer) or a whole
// new simulation (ReplaceSim), and goes on after Release.
//
// What a game implements. Sim is required; Cloner, MapVersioner,
// MapLoader, MapReplacer, MapDigester and WorldHasher are optional and
// make joins, repairs and checkpoints cheaper. The doc comments of Sim and
// Cloner say what the interfaces alone do not: which methods run
// concurrently on a clone, the map-count cap (MaxMaps), the command kinds
// the engine reserves (KindReserved), where factions live (with the host,
// not in the Sim), and that def databases are optional. Tracer and
// StateDiffer, also optional, let a desync be explained in the game's own
// terms (a cheap per-tick trace kept in a TraceLog, a field-by-field diff
// of two states; see package desync/explain). Example hosts a
// tiny game with package host, joins it with package join and checks that
// both machines agree.
package lockstep
