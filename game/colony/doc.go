// Package colony is lockhost's reference simulation: a small RimWorld-like
// colony game that every machine of a session runs in lockstep. It
// implements lockstep.Sim (World) and provides a lockstep.Loader (Loader)
// and a lockstep.MapLoader (MapLoader, which rebuilds a world one map at a
// time), so the host and the join tool can snapshot, transfer, load and
// replay it.
//
// A world holds several maps. Each map has a terrain grid, things (items,
// food, plants, buildings) and pawns. Every tick pawns get hungry, pick
// jobs (eat, sow, harvest, haul to storage, wander), find paths with A*
// and walk them; on a map's rare tick (every RareTicks, each map on its
// own phase) plants grow and things decay; wild plants take root on random
// fertile cells. The world-level state is the tick, the seed, a PRNG and
// the temperature, which follows the seasons and drives plant growth.
//
// # Big worlds
//
// Maps go up to MaxSide (4096) cells a side and worlds up to MaxMaps (256)
// maps, so a world can encode to gigabytes; SizedConfig picks a config for
// a given encoded size. Terrain encodes to one byte per cell; in memory it
// takes half a byte per cell when the content has at most 16 terrain
// types (the generated worlds use 6 to 10), one byte otherwise, and
// everything else a map keeps in memory grows with its things and pawns,
// not its area (one bit per cell apart), so a world in memory is no more
// than its encoding, and with the packed terrain well under it. Regions (connected areas) are kept as passable runs per
// row and built the first time pawns need them; path searches use memory
// bounded by their budget, not by the map.
//
// A joiner that loads through MapLoader and drops each map's bytes after
// AddMap needs memory for the loaded world plus one encoded map; Load
// needs the whole encoding on top (for SizedConfig(64 MiB): a live heap
// of about 70 MiB at its highest against 130 MiB).
//
// For a host that cuts join points often, World implements
// lockstep.Cloner (Clone copies the state in time proportional to things
// and pawns; terrain never changes after generation and is shared) and
// lockstep.MapVersioner (MapVersion changes whenever a map's encoding
// does, so unchanged maps can keep their compressed blobs). A map without
// pawns (Config.IdleMaps) changes only on its rare ticks while plants grow
// or stacks decay, and when a wild plant takes root; once everything has
// grown and rotted it keeps its version for good.
//
// For desync handling World implements lockstep.MapDigester (MapDigest
// hashes a map and its parts, meta, terrain, things, pawns and things and
// pawns by quarter of the map's rows, in one pass, so a report can say
// what diverged) and lockstep.MapReplacer (ReplaceMap swaps one map for
// another machine's encoding of it, decoded like a load). Perturb makes a
// map diverge on purpose, to exercise both.
//
// Everything the simulation knows about terrains, things and pawn kinds
// comes from a Content, normally built from RimWorld-style XML defs by
// ReadContent (or ContentFromDefs). It accepts any content: it simulates
// what it knows and carries the rest (other def types, other thing
// categories) untouched, reporting what it carried. The default content
// is embedded (DefaultContentFS, DefaultContent).
//
// Players act through map-scoped commands (CmdSpawnThing, CmdMovePawn),
// built with SpawnThing and MovePawn; World.Apply validates them fully and
// refuses anything else, engine kinds and world-scoped commands included.
// Game speed belongs to the engine (lockstep.KindSetSpeed).
//
// # Determinism rules
//
// Given the same Content, the same encoded state and the same commands at
// the same ticks, every machine computes the same states and hashes. The
// code keeps that true by these rules:
//
//   - integer arithmetic only, on fixed-size types (int32, uint64), with
//     value ranges bounded by Content validation so nothing overflows;
//     no floating point anywhere in state or logic;
//   - randomness comes only from splitmix64 generators whose state is part
//     of the encoded state: one for the world, one per map (wild plants
//     roll from the map's generator state mixed with the tick, and advance
//     the generator only when one takes root);
//   - iteration order is fixed: slices sorted by ID, maps in ID order,
//     ties broken by ID or cell index; Go maps are used only for lookups;
//   - no clocks, no process-seeded hashing (xxhash only), and no
//     goroutine whose timing can change a result: a world of many things
//     steps its maps on every core (step.go), but a map's step reads only
//     the rules, the tick and the temperature and writes only its own map,
//     with path-search memory of its own, so the tick ends as if the maps
//     had stepped one after the other in ID order; loading and hashing
//     maps at once likewise touch one map each;
//   - map versions come from a process-wide counter, but they are not
//     state: they never enter an encoding or a hash;
//   - everything not encoded (per-cell counters, regions, storage lists,
//     path search memory) is derived from the encoded state and rebuilt
//     after a load (and by a clone when it is first stepped), so a loaded
//     world or a clone evolves exactly like the original.
//
// MapHash is xxhash64 of a map's encoding (the bytes MarshalMap returns);
// WorldHash covers the world-level encoding and every map hash in ID order.
// The encodings carry a version byte and the Content fingerprint, and the
// decoder treats its input as untrusted.
package colony
