// Package coordice joins the coordinator (package transport/coord) to
// the ICE transport (package transport/ice): the way a joiner reaches a
// host by its invite code when none of the addresses the host registered
// answers.
//
// The joiner's side is a coord.Fallback (Fallback): it runs one ICE
// attempt through the coordinator's signalling relay with the TURN
// servers and short-lived credentials of the lookup. The host's side is
// an Answerer: a net.Listener for the host's extra listeners
// (host.Listeners.Extra) and a coord.HostConfig.OnSignal that answers
// each attempt with the TURN credentials of the host's registration. The
// connections it hands the host say which way they came (Path) and, for
// a relayed one, that its RemoteAddr is the relay's (Relayed), so the
// host's per-address limits can tell relayed joiners apart.
//
// A signalling blob is at most coord.MaxBlob bytes both ways: each
// side's ice.Config.MaxBlob is held to it, and an offer or answer larger
// than that (more candidates than a blob carries) fails the attempt with
// a sentence saying so.
package coordice
