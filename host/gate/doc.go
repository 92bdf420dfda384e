// Package gate is the host's connection gate: what a connection meets
// before the session admits it, shared by the accept loop and the
// connections' readers, each part behind its own lock.
//
//   - Pending (pending.go) is the table of connections not admitted yet:
//     when full it evicts the one that has done least for longest, and it
//     penalizes addresses that stall.
//   - Guesses (guesses.go) bounds the checks of secrets (passwords and a
//     relay host's arbiter proofs, one budget) per address and across all
//     addresses, setting proof-of-work puzzles as guessing grows.
//   - ConnRate (ratelimit.go) limits new connections per address.
//   - RefusalLog (refusals.go) logs refusals, one line per address and
//     reason per interval, so a flood is a few lines.
//
// Addresses are counted by the keys of package internal/addrkey (an IPv6
// address by its /64). The gate knows nothing of the protocol or the
// session: package host asks it and acts on its answers.
package gate
