package ice

import (
	"testing"

	"github.com/pion/webrtc/v4"
)

// TestClassify: the path named for each kind of selected pair.
func TestClassify(t *testing.T) {
	const (
		host  = webrtc.ICECandidateTypeHost
		srflx = webrtc.ICECandidateTypeSrflx
		prflx = webrtc.ICECandidateTypePrflx
		relay = webrtc.ICECandidateTypeRelay
	)
	for _, tc := range []struct {
		local, remote endpoint
		want          Path
	}{
		{endpoint{typ: host}, endpoint{typ: host}, PathDirect},
		{endpoint{typ: host}, endpoint{typ: srflx}, PathPunched},
		{endpoint{typ: srflx}, endpoint{typ: host}, PathPunched},
		{endpoint{typ: srflx}, endpoint{typ: srflx}, PathPunched},
		{endpoint{typ: prflx}, endpoint{typ: host}, PathPunched},
		{endpoint{typ: host}, endpoint{typ: prflx}, PathPunched},
		{endpoint{typ: relay, relay: "udp"}, endpoint{typ: host}, PathTURNUDP},
		{endpoint{typ: relay, relay: "dtls"}, endpoint{typ: srflx}, PathTURNUDP},
		{endpoint{typ: relay, relay: "tcp"}, endpoint{typ: host}, PathTURNTCP},
		{endpoint{typ: relay, relay: "tls"}, endpoint{typ: relay}, PathTURNTLS},
		{endpoint{typ: relay}, endpoint{typ: host}, PathTURN},
		{endpoint{typ: host}, endpoint{typ: relay}, PathTURN},
		{endpoint{typ: srflx}, endpoint{typ: relay}, PathTURN},
	} {
		if got := classify(tc.local, tc.remote); got != tc.want {
			t.Errorf("classify(%v %q, %v) = %q, want %q", tc.local.typ, tc.local.relay, tc.remote.typ, got, tc.want)
		}
	}
}
