// Package locksteptest provides a tiny deterministic simulation for tests
// of the engine, the host and the join tool, and shows how little a game
// has to implement to be hosted.
package locksteptest
