package ice

import (
	"context"
	"strings"
	"testing"
	"time"

	pice "github.com/pion/ice/v4"
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

// TestSignalledType: a peer-reflexive remote candidate at the address
// and port of a host candidate the peer's description lists is taken
// for that host candidate (a check that came before the candidate was
// taken in), as is one at a link-local address; any other the
// description does not list stays peer-reflexive.
func TestSignalledType(t *testing.T) {
	cfg := Config{LoopbackOnly: true}.Defaults()
	joiner, err := newPeer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer joiner.pc.Close()
	host, err := newPeer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer host.pc.Close()
	offer, err := joiner.pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := joiner.gather(ctx, offer); err != nil {
		t.Fatal(err)
	}
	if err := host.pc.SetRemoteDescription(*joiner.pc.LocalDescription()); err != nil {
		t.Fatal(err)
	}
	var listed *webrtc.ICECandidate
	for _, line := range strings.Split(joiner.pc.LocalDescription().SDP, "\n") {
		if raw, ok := strings.CutPrefix(strings.TrimSpace(line), "a=candidate:"); ok {
			c, err := pice.UnmarshalCandidate(raw)
			if err == nil && c.Type() == pice.CandidateTypeHost && !c.NetworkType().IsTCP() {
				listed = &webrtc.ICECandidate{Typ: webrtc.ICECandidateTypePrflx, Address: c.Address(), Port: uint16(c.Port()), Protocol: webrtc.ICEProtocolUDP}
				break
			}
		}
	}
	if listed == nil {
		t.Fatal("the offer lists no UDP host candidate")
	}
	if got := host.signalledType(listed); got != webrtc.ICECandidateTypeHost {
		t.Errorf("a peer-reflexive candidate at a listed host candidate's address: %s, want host", got)
	}
	unlisted := *listed
	unlisted.Port++
	if got := host.signalledType(&unlisted); got != webrtc.ICECandidateTypePrflx {
		t.Errorf("a peer-reflexive candidate the offer does not list: %s, want prflx", got)
	}
	linkLocal := webrtc.ICECandidate{Typ: webrtc.ICECandidateTypePrflx, Address: "fe80::fc:ff:fe00:1", Port: 45384, Protocol: webrtc.ICEProtocolUDP}
	if got := host.signalledType(&linkLocal); got != webrtc.ICECandidateTypeHost {
		t.Errorf("a peer-reflexive candidate at a link-local address: %s, want host", got)
	}
}
