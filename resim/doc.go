// Package resim re-simulates the window of a desync on one machine: the
// ticks from the last checkpoint at which a player's hashes matched the
// host's to the one at which they differed, from a copy of the state at
// the first, with the commands the machine applied, hashing the maps
// after every tick (Resimulate, Run). It holds what both halves of an
// explanation share (Side, Request, Reply, the answer document of
// docs/protocol.md section 10.1) and the player's half (Answer), so a
// player links it without anything of the host's; the host's half, which
// puts both sides together into a desync.Explanation, is package
// desync/explain.
package resim
