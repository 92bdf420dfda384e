// Package coordserver is the coordinator's server (host coordinator): the
// table of registered hosts and which key holds each invite code, lookups
// rate-limited per source address and /24 or /64, the signalling relay
// between one joiner and one host per attempt, TURN REST credentials, the
// invite link's page (the browser player, ServerConfig.Player, when it
// has one: the page then joins through the coordinator itself, WebRTC)
// and the counters of connection attempts by outcome.
// The wire it speaks is package coord's (docs/protocol.md, section 18);
// hosts and joiners use coord alone, so the join tool links none of this.
//
// Each host's WebSocket and each joiner's signalling WebSocket has one
// reader (the request's goroutine) and one writer (coord.WriteLoop) with
// a bounded queue; a peer that does not read is dropped, never waited
// for. The table is under Server.mu, a host's reach and attempts under
// its own mutex.
package coordserver
