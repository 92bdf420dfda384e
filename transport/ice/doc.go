// Package ice carries the protocol over a WebRTC data channel reached
// through ICE, so a joiner reaches a host that no port forward makes
// reachable: directly where the two NATs allow it (host and
// server-reflexive candidates: hole punching), through a TURN relay where
// they do not.
//
// The byte stream of the protocol (docs/protocol.md, section 2) travels
// unchanged over one reliable, ordered data channel, negotiated out of
// band (label "lockhost", id 0): a writer splits it into messages of at
// most MessageSize bytes, a reader sees the messages' bytes in order, and
// a text message ends the connection. The channel is always encrypted
// (DTLS); a relay and whoever carries the signalling see only ciphertext.
//
// Signalling is two blobs, carried by a Signaller the caller provides (a
// coordinator, or Pipe in tests): the joiner's offer and the host's
// answer, each a session description with the candidates gathered
// (every one, or those there RelayGrace after the first relay candidate),
// encoded as a browser's RTCSessionDescriptionInit in JSON, so a
// browser's RTCPeerConnection can be either side. A blob larger than
// Config.MaxBlob or not such a description is refused before it is used.
//
// Dial is the joiner's side and Accept the host's; a Listener gathers the
// host's connections for Accept, so the host serves them through its
// extra listeners (host.Listeners.Extra). Both sides report the Path the
// connection took, from the selected candidate pair. Config's zero value
// works: host candidates only, no STUN or TURN server.
package ice
