// Package coord is the coordinator: the meeting point that lets a friend
// join a host by an invite code (join +K7QF2MX) instead of an address.
//
// A host keeps one outbound WebSocket open to the coordinator (Register):
// it signs the coordinator's challenge with an Ed25519 key whose seed is
// a secret kept in its data folder (the code is derived from the public
// key, so it is stable across restarts of the host and of the
// coordinator, which keeps which key holds each code) and tells the
// coordinator how
// it may be reached: its direct addresses (the router's mapped address,
// a public one), its LAN addresses, its browser player's links and its
// TLS fingerprint. A joiner looks the code up (Lookup), races the
// addresses it got (Race, happy-eyeballs style) and, when none answers,
// may open a signalling channel (OpenSignal) through which opaque blobs
// (an ICE offer, answer and candidates) reach the host for one attempt;
// ICE itself lives elsewhere (package transport/coordice joins the two).
// Connect races the addresses and, after their head start, runs such a
// fallback beside them. The coordinator also hands out short-lived
// TURN credentials (the TURN REST API convention, TURNCredentials) for a
// standard TURN server, and counts connection attempts by outcome
// (Report).
//
// The coordinator never carries game traffic and is not trusted with a
// host's identity: a joiner that pinned a host's fingerprint refuses a
// lookup that names another, and TLS to the host checks the pin itself.
//
// The server side is package coordserver; this package is what hosts and
// joiners link. The wire is specified in docs/protocol.md, section 18
// "The coordinator".
package coord
