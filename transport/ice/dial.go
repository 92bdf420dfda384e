package ice

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/pion/datachannel"
	pice "github.com/pion/ice/v4"
	"github.com/pion/webrtc/v4"
)

// The data channel both sides create, negotiated out of band: no
// in-band open message is exchanged, so its id and options are fixed here
// and in docs/protocol.md.
const (
	// Label is the data channel's label.
	Label = "lockhost"
	// ChannelID is its negotiated stream id.
	ChannelID = 0
	// Protocol is its subprotocol, the WebSocket transport's.
	Protocol = "lockhost"
)

// Dial connects to the host at the other end of sig as the joiner: it
// sends the offer, takes the answer and returns the open channel as the
// protocol's byte stream, with the path it took. ctx and cfg.Timeout
// bound the attempt; the connection lives until Close.
func Dial(ctx context.Context, sig Signaller, cfg Config) (net.Conn, Path, error) {
	c, err := connect(ctx, sig, cfg, true)
	if err != nil {
		return nil, "", err
	}
	return c, c.path, nil
}

// Accept answers the joiner at the other end of sig as the host: it takes
// the offer, sends the answer and returns the open channel, with the path
// it took. ctx and cfg.Timeout bound the attempt.
func Accept(ctx context.Context, sig Signaller, cfg Config) (net.Conn, Path, error) {
	c, err := connect(ctx, sig, cfg, false)
	if err != nil {
		return nil, "", err
	}
	return c, c.path, nil
}

// How long an attempt waits for the kinds of candidate pairs. Gathering
// ends RelayGrace after the first relay candidate came, whatever is still
// outstanding: a STUN or TURN request over UDP from a network that drops
// UDP waits seconds for an answer that never comes, while the relay over
// TCP or TLS is there. Once checks run, a pair through a NAT's mapping
// (server- or peer-reflexive) is taken as soon as it works, and a relayed
// one only after RelayWait, so that a hole still being punched wins over
// the relay it would otherwise lose to.
const (
	RelayGrace = 500 * time.Millisecond
	RelayWait  = time.Second
	mappedWait = 200 * time.Millisecond
)

// peer is one side of an attempt.
type peer struct {
	pc     *webrtc.PeerConnection
	dc     *webrtc.DataChannel
	opened chan datachannel.ReadWriteCloser
	failed chan error
	// relay is closed when the first relay candidate is gathered.
	relay     chan struct{}
	relayOnce sync.Once
}

// connect runs one attempt, as the joiner (offer) or the host.
func connect(ctx context.Context, sig Signaller, cfg Config, joiner bool) (*Conn, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ice config: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	p, err := newPeer(cfg)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			p.pc.Close()
		}
	}()
	if joiner {
		err = p.offer(ctx, sig, cfg.MaxBlob)
	} else {
		err = p.answer(ctx, sig, cfg.MaxBlob)
	}
	if err != nil {
		return nil, timedOut(ctx, cfg, err)
	}
	var rw datachannel.ReadWriteCloser
	select {
	case rw = <-p.opened:
	case err := <-p.failed:
		return nil, err
	case <-ctx.Done():
		return nil, timedOut(ctx, cfg, fmt.Errorf("ice: no candidate pair connected: %w", ctx.Err()))
	}
	path, local, remote, err := p.selected()
	if err != nil {
		rw.Close()
		return nil, err
	}
	ok = true
	c := newConn(p.pc, p.dc, rw, path, local, remote)
	c.peerRelayed = p.peerRelayed()
	return c, nil
}

// timedOut says so in a sentence when the attempt's bound ended err.
func timedOut(ctx context.Context, cfg Config, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("ice: no connection within %v: %w", cfg.Timeout, err)
	}
	return err
}

// newPeer makes a peer connection with the negotiated channel.
func newPeer(cfg Config) (*peer, error) {
	var se webrtc.SettingEngine
	se.DetachDataChannels()
	se.SetSCTPMaxMessageSize(maxMessage)
	if cfg.LoopbackOnly {
		se.SetIncludeLoopbackCandidate(true)
		se.SetIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
		se.SetRemoteIPFilter(func(ip net.IP) bool { return ip.IsLoopback() })
		se.SetICEMulticastDNSMode(pice.MulticastDNSModeDisabled)
	}
	rc := webrtc.Configuration{}
	for _, s := range cfg.Servers {
		rc.ICEServers = append(rc.ICEServers, webrtc.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential})
	}
	if d := newTURNDialer(cfg.Servers); d != nil {
		se.SetICEProxyDialer(d)
	}
	se.SetSrflxAcceptanceMinWait(mappedWait)
	se.SetPrflxAcceptanceMinWait(mappedWait)
	se.SetRelayAcceptanceMinWait(RelayWait)
	if cfg.RelayOnly {
		rc.ICETransportPolicy = webrtc.ICETransportPolicyRelay
		// Only relay pairs will come: nominate the first that works
		// instead of waiting for a better kind.
		se.SetRelayAcceptanceMinWait(0)
	}
	pc, err := webrtc.NewAPI(webrtc.WithSettingEngine(se)).NewPeerConnection(rc)
	if err != nil {
		return nil, fmt.Errorf("ice: %w", err)
	}
	negotiated, ordered, id, proto := true, true, uint16(ChannelID), Protocol
	dc, err := pc.CreateDataChannel(Label, &webrtc.DataChannelInit{Negotiated: &negotiated, Ordered: &ordered, ID: &id, Protocol: &proto})
	if err != nil {
		pc.Close()
		return nil, fmt.Errorf("ice: data channel: %w", err)
	}
	p := &peer{pc: pc, dc: dc, opened: make(chan datachannel.ReadWriteCloser, 1), failed: make(chan error, 1), relay: make(chan struct{})}
	pc.OnICECandidate(func(c *webrtc.ICECandidate) {
		if c != nil && c.Typ == webrtc.ICECandidateTypeRelay {
			p.relayOnce.Do(func() { close(p.relay) })
		}
	})
	dc.OnOpen(func() {
		rw, err := dc.Detach()
		if err != nil {
			p.fail(fmt.Errorf("ice: data channel: %w", err))
			return
		}
		p.opened <- rw
	})
	pc.OnConnectionStateChange(func(s webrtc.PeerConnectionState) {
		if s == webrtc.PeerConnectionStateFailed {
			p.fail(errors.New("ice: no candidate pair connected"))
		}
	})
	return p, nil
}

func (p *peer) fail(err error) {
	select {
	case p.failed <- err:
	default:
	}
}

// offer sends the joiner's offer, with every candidate, and applies the
// host's answer.
func (p *peer) offer(ctx context.Context, sig Signaller, limit int) error {
	desc, err := p.pc.CreateOffer(nil)
	if err != nil {
		return fmt.Errorf("ice: offer: %w", err)
	}
	if err := p.gather(ctx, desc); err != nil {
		return err
	}
	if err := p.send(ctx, sig); err != nil {
		return err
	}
	ans, err := recvBlob(ctx, sig, kindAnswer, limit)
	if err != nil {
		return err
	}
	if err := p.pc.SetRemoteDescription(ans); err != nil {
		return fmt.Errorf("ice: the host's answer: %w", err)
	}
	return nil
}

// answer takes the joiner's offer and sends the host's answer, with
// every candidate.
func (p *peer) answer(ctx context.Context, sig Signaller, limit int) error {
	off, err := recvBlob(ctx, sig, kindOffer, limit)
	if err != nil {
		return err
	}
	if err := p.pc.SetRemoteDescription(off); err != nil {
		return fmt.Errorf("ice: the joiner's offer: %w", err)
	}
	desc, err := p.pc.CreateAnswer(nil)
	if err != nil {
		return fmt.Errorf("ice: answer: %w", err)
	}
	if err := p.gather(ctx, desc); err != nil {
		return err
	}
	return p.send(ctx, sig)
}

// gather sets desc as the local description and waits until every
// candidate is in it, or for RelayGrace after the first relay candidate:
// the description sent (LocalDescription) holds the candidates gathered
// by then, and those that come later are still paired with the peer's.
func (p *peer) gather(ctx context.Context, desc webrtc.SessionDescription) error {
	done := webrtc.GatheringCompletePromise(p.pc)
	if err := p.pc.SetLocalDescription(desc); err != nil {
		return fmt.Errorf("ice: %w", err)
	}
	var grace <-chan time.Time
	relay := p.relay
	for {
		select {
		case <-done:
			return nil
		case <-relay:
			relay = nil
			t := time.NewTimer(RelayGrace)
			defer t.Stop()
			grace = t.C
		case <-grace:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("ice: gathering candidates: %w", ctx.Err())
		}
	}
}

// send sends the local description, candidates and all.
func (p *peer) send(ctx context.Context, sig Signaller) error {
	b, err := encodeBlob(*p.pc.LocalDescription())
	if err != nil {
		return fmt.Errorf("ice: %w", err)
	}
	if err := sig.Send(ctx, b); err != nil {
		return fmt.Errorf("ice: signalling: %w", err)
	}
	return nil
}

// recvBlob receives and decodes the peer's description of kind want.
func recvBlob(ctx context.Context, sig Signaller, want string, limit int) (webrtc.SessionDescription, error) {
	b, err := sig.Recv(ctx)
	if err != nil {
		return webrtc.SessionDescription{}, fmt.Errorf("ice: signalling: %w", err)
	}
	desc, err := decodeBlob(b, want, limit)
	if err != nil {
		return webrtc.SessionDescription{}, fmt.Errorf("ice: signalling: %w", err)
	}
	return desc, nil
}

// selected classifies the selected candidate pair and returns its ends'
// addresses.
func (p *peer) selected() (Path, net.Addr, net.Addr, error) {
	pair, err := p.pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	if err != nil || pair == nil {
		return "", nil, nil, fmt.Errorf("ice: no selected candidate pair: %v", err)
	}
	local := endpoint{typ: pair.Local.Typ}
	if local.typ == webrtc.ICECandidateTypeRelay {
		local.relay = p.relayProtocol(pair.Local)
	}
	path := classify(local, endpoint{typ: p.signalledType(pair.Remote)})
	return path, candidateAddr(pair.Local), candidateAddr(pair.Remote), nil
}

// peerRelayed says the selected pair's remote end is a relay candidate:
// the peer's packets come through its TURN server.
func (p *peer) peerRelayed() bool {
	pair, err := p.pc.SCTP().Transport().ICETransport().GetSelectedCandidatePair()
	return err == nil && pair != nil && p.signalledType(pair.Remote) == webrtc.ICECandidateTypeRelay
}

// signalledType is the type of the remote candidate c as the peer's
// description gives it. A connectivity check that arrives before this
// side's agent has taken the signalled candidate at its address makes
// that candidate peer-reflexive; the description says what it is (a host
// candidate on a LAN, a relay one). So is one at a link-local address,
// which no router forwards, let alone maps: the peer is on this link,
// checking from an address it did not signal (an IPv6 link-local one).
// Any other peer-reflexive candidate that the description does not list
// is one indeed.
func (p *peer) signalledType(c *webrtc.ICECandidate) webrtc.ICECandidateType {
	rd := p.pc.RemoteDescription()
	if c.Typ != webrtc.ICECandidateTypePrflx || rd == nil {
		return c.Typ
	}
	if a, err := netip.ParseAddr(c.Address); err == nil && a.IsLinkLocalUnicast() {
		return webrtc.ICECandidateTypeHost
	}
	for _, line := range strings.Split(rd.SDP, "\n") {
		raw, ok := strings.CutPrefix(strings.TrimSpace(line), "a=candidate:")
		if !ok {
			continue
		}
		sc, err := pice.UnmarshalCandidate(raw)
		if err != nil || sc.Address() != c.Address || sc.Port() != int(c.Port) || sc.NetworkType().IsTCP() != (c.Protocol == webrtc.ICEProtocolTCP) {
			continue
		}
		switch sc.Type() {
		case pice.CandidateTypeHost:
			return webrtc.ICECandidateTypeHost
		case pice.CandidateTypeServerReflexive:
			return webrtc.ICECandidateTypeSrflx
		case pice.CandidateTypeRelay:
			return webrtc.ICECandidateTypeRelay
		}
	}
	return c.Typ
}

// relayProtocol is how this side reaches the TURN server of its relay
// candidate c, from the connection's statistics.
func (p *peer) relayProtocol(c *webrtc.ICECandidate) string {
	for _, s := range p.pc.GetStats() {
		cs, ok := s.(webrtc.ICECandidateStats)
		if ok && cs.CandidateType == webrtc.ICECandidateTypeRelay && cs.IP == c.Address && int(cs.Port) == int(c.Port) {
			return cs.RelayProtocol
		}
	}
	return ""
}

// candidateAddr is c's address as a net.Addr of its protocol.
func candidateAddr(c *webrtc.ICECandidate) net.Addr {
	ip := net.ParseIP(c.Address)
	if c.Protocol == webrtc.ICEProtocolTCP {
		return &net.TCPAddr{IP: ip, Port: int(c.Port)}
	}
	return &net.UDPAddr{IP: ip, Port: int(c.Port)}
}
