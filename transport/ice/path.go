package ice

import "github.com/pion/webrtc/v4"

// Path is the way a connection took, as the status page and the metrics
// name it.
type Path string

// The paths. A relayed connection is named by how this side reaches its
// TURN server; when only the peer's side is relayed, this side cannot
// tell how the peer reaches its server, and the path is PathTURN.
const (
	// PathDirect: both ends' own addresses (host candidates), as on a
	// LAN or to a host with a public address.
	PathDirect Path = "direct"
	// PathPunched: at least one end's address as its NAT maps it (a
	// server-reflexive or peer-reflexive candidate): a hole punched.
	PathPunched Path = "punched"
	// PathTURNUDP: this side reaches a TURN relay over UDP (or DTLS).
	PathTURNUDP Path = "turn-udp"
	// PathTURNTCP: this side reaches a TURN relay over TCP.
	PathTURNTCP Path = "turn-tcp"
	// PathTURNTLS: this side reaches a TURN relay over TLS (turns:, as
	// on port 443 where nothing else passes).
	PathTURNTLS Path = "turn-tls"
	// PathTURN: the peer's side is relayed, this side is not.
	PathTURN Path = "turn"
)

// endpoint is what the classification needs of a candidate: its type
// and, for a relay candidate, how its side reaches the TURN server ("udp",
// "tcp", "tls" or "dtls"; empty when not known).
type endpoint struct {
	typ   webrtc.ICECandidateType
	relay string
}

// classify names the path of the selected candidate pair.
func classify(local, remote endpoint) Path {
	switch {
	case local.typ == webrtc.ICECandidateTypeRelay:
		switch local.relay {
		case "tcp":
			return PathTURNTCP
		case "tls":
			return PathTURNTLS
		case "udp", "dtls":
			return PathTURNUDP
		}
		return PathTURN
	case remote.typ == webrtc.ICECandidateTypeRelay:
		return PathTURN
	case local.typ == webrtc.ICECandidateTypeHost && remote.typ == webrtc.ICECandidateTypeHost:
		return PathDirect
	}
	return PathPunched
}
