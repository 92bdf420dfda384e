//go:build js && wasm

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall/js"
	"time"

	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
)

// inviteTimeout bounds one attempt to reach the host by its code, as
// the join tool's (section 18.4: 20 s).
const inviteTimeout = 20 * time.Second

// inviteDialer reaches the host registered as a code through the
// coordinator that served the page: a lookup, then a signalling attempt
// (section 18.5) and the browser's own RTCPeerConnection with the TURN
// servers the lookup gives, and a negotiated data channel that carries
// the byte stream. Each call looks the code up anew (a rejoin: the host
// may have moved). A host with TLS is checked against the fingerprint
// the coordinator gave first.
type inviteDialer struct {
	co   *coord.Coordinator
	code coord.Code
	pin  string
	path string // the last connection's path
}

// newInviteDialer is the dialer for code at the coordinator base.
func newInviteDialer(base, code string) (*inviteDialer, error) {
	co, err := coord.ParseURL(base)
	if err != nil {
		return nil, err
	}
	c, err := coord.ParseCode(code)
	if err != nil {
		return nil, err
	}
	return &inviteDialer{co: co, code: c}, nil
}

// dial is join.Config.Dial: one attempt to reach the host.
func (d *inviteDialer) dial(ctx context.Context, _ string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, inviteTimeout)
	defer cancel()
	r, err := d.co.Lookup(ctx, d.code)
	if err != nil {
		return nil, err
	}
	if d.pin == "" {
		d.pin = r.Fingerprint
	} else if r.Fingerprint != d.pin {
		return nil, fmt.Errorf("the coordinator now gives %s a different certificate (%q, was %q): not joining", d.code, r.Fingerprint, d.pin)
	}
	conn, path, err := d.co.Connect(ctx, r, coord.ConnectOptions{FallbackOnly: true, Fallback: browserICE, Wrap: d.handshake})
	if err != nil {
		return nil, fmt.Errorf("could not reach %s through the coordinator within %s: %w", d.code, inviteTimeout, err)
	}
	d.path = path
	return conn, nil
}

// handshake runs TLS over nc when the host has it, pinned to the
// fingerprint the coordinator gave (inside the data channel's DTLS).
func (d *inviteDialer) handshake(ctx context.Context, nc net.Conn) (net.Conn, error) {
	if d.pin == "" {
		return nc, nil
	}
	pin := d.pin
	tc := tls.Client(nc, &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true, // pinned below
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || tlsid.FingerprintDER(cs.PeerCertificates[0].Raw) != pin {
				return fmt.Errorf("the host's certificate is not %s", pin)
			}
			return nil
		}})
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
}

// iceServers are the RTCIceServers of the coordinator's TURN server t:
// its URLs with the credentials, and STUN at each turn: address (as
// transport/coordice gives the Go joiner), for hole punching.
func iceServers(t *coord.TURN) js.Value {
	out := js.Global().Get("Array").New()
	if t == nil || len(t.URLs) == 0 {
		return out
	}
	urls := js.Global().Get("Array").New()
	stun := js.Global().Get("Array").New()
	seen := map[string]bool{}
	for _, u := range t.URLs {
		urls.Call("push", u)
		if rest, ok := strings.CutPrefix(u, "turn:"); ok {
			hp, _, _ := strings.Cut(rest, "?")
			if hp != "" && !seen[hp] {
				seen[hp] = true
				stun.Call("push", "stun:"+hp)
			}
		}
	}
	out.Call("push", js.ValueOf(map[string]any{"urls": urls, "username": t.Username, "credential": t.Credential}))
	if stun.Length() > 0 {
		out.Call("push", js.ValueOf(map[string]any{"urls": stun}))
	}
	return out
}

// browserICE is the coord.Fallback of the page: an offer with every
// candidate gathered, the host's answer, and the open channel.
func browserICE(ctx context.Context, sig coord.Signal, t *coord.TURN) (net.Conn, string, error) {
	rtc := js.Global().Get("RTCPeerConnection")
	if rtc.IsUndefined() {
		return nil, "", errors.New("this browser has no WebRTC")
	}
	pc := rtc.New(js.ValueOf(map[string]any{"iceServers": iceServers(t)}))
	dc := pc.Call("createDataChannel", "lockhost", js.ValueOf(map[string]any{
		"negotiated": true, "id": 0, "ordered": true, "protocol": "lockhost"}))
	dc.Set("binaryType", "arraybuffer")
	conn, path, err := negotiate(ctx, sig, pc, dc)
	if err != nil {
		dc.Call("close")
		pc.Call("close")
		return nil, "", err
	}
	return conn, path, nil
}

// negotiate runs the offer and answer over sig and waits for dc to open.
func negotiate(ctx context.Context, sig coord.Signal, pc, dc js.Value) (net.Conn, string, error) {
	events := make(chan string, 16)
	var undo []func()
	on := func(target js.Value, name string, f func() string) {
		fn := js.FuncOf(func(js.Value, []js.Value) any {
			select {
			case events <- f():
			default:
			}
			return nil
		})
		target.Call("addEventListener", name, fn)
		undo = append(undo, func() { target.Call("removeEventListener", name, fn); fn.Release() })
	}
	defer func() {
		for _, u := range undo {
			u()
		}
	}()
	on(pc, "icegatheringstatechange", func() string { return "gathering " + pc.Get("iceGatheringState").String() })
	on(pc, "connectionstatechange", func() string { return "connection " + pc.Get("connectionState").String() })
	on(dc, "open", func() string { return "open" })
	on(dc, "close", func() string { return "closed" })
	offer, err := await(ctx, pc.Call("createOffer"))
	if err == nil {
		_, err = await(ctx, pc.Call("setLocalDescription", offer))
	}
	if err != nil {
		return nil, "", fmt.Errorf("WebRTC offer: %w", err)
	}
	for pc.Get("iceGatheringState").String() != "complete" {
		if err := next(ctx, events, "gathering the browser's addresses"); err != nil {
			return nil, "", err
		}
	}
	blob := js.Global().Get("JSON").Call("stringify", pc.Get("localDescription")).String()
	if len(blob) > coord.MaxBlob {
		return nil, "", fmt.Errorf("the browser's offer is %d bytes, more than the coordinator carries (%d)", len(blob), coord.MaxBlob)
	}
	if err := sig.Send(ctx, []byte(blob)); err != nil {
		return nil, "", err
	}
	answer, err := sig.Recv(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("the host's answer: %w", err)
	}
	desc, err := parseJSON(string(answer))
	if err == nil {
		_, err = await(ctx, pc.Call("setRemoteDescription", desc))
	}
	if err != nil {
		return nil, "", fmt.Errorf("the host's answer: %w", err)
	}
	for dc.Get("readyState").String() != "open" {
		switch s := pc.Get("connectionState").String(); {
		case s == "failed" || s == "closed" || dc.Get("readyState").String() == "closed":
			return nil, "", errors.New("no path to the host: the browser's connection failed")
		}
		if err := next(ctx, events, "connecting to the host"); err != nil {
			return nil, "", err
		}
	}
	c := newDCConn(pc, dc, "")
	c.path = selectedPath(ctx, pc)
	return c, c.path, nil
}

// next waits for an event, or says what was under way when ctx ended.
func next(ctx context.Context, events <-chan string, doing string) error {
	select {
	case <-events:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", doing, ctx.Err())
	}
}

// parseJSON is JSON.parse(s), the exception an error.
func parseJSON(s string) (v js.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("not JSON")
		}
	}()
	return js.Global().Get("JSON").Call("parse", s), nil
}

// selectedPath names the path of pc's selected candidate pair as
// transport/ice does: direct (both host candidates), punched (a mapped
// address), turn-udp, turn-tcp or turn-tls (this side relayed), turn
// (the host's side relayed); "punched" when the browser does not say.
func selectedPath(ctx context.Context, pc js.Value) string {
	report, err := await(ctx, pc.Call("getStats"))
	if err != nil {
		return "punched"
	}
	stats := map[string]js.Value{}
	var pair js.Value
	each := js.FuncOf(func(_ js.Value, a []js.Value) any {
		s := arg(a, 0)
		stats[s.Get("id").String()] = s
		return nil
	})
	report.Call("forEach", each)
	each.Release()
	for _, s := range stats {
		if s.Get("type").String() == "transport" {
			if id := s.Get("selectedCandidatePairId"); id.Type() == js.TypeString {
				pair = stats[id.String()]
			}
		}
	}
	if pair.IsUndefined() {
		return "punched"
	}
	local, remote := stats[pair.Get("localCandidateId").String()], stats[pair.Get("remoteCandidateId").String()]
	if local.IsUndefined() || remote.IsUndefined() {
		return "punched"
	}
	lt, rt := local.Get("candidateType").String(), remote.Get("candidateType").String()
	switch {
	case lt == "relay":
		switch p := local.Get("relayProtocol"); {
		case p.Type() != js.TypeString:
			return "turn"
		case p.String() == "tcp":
			return "turn-tcp"
		case p.String() == "tls":
			return "turn-tls"
		default:
			return "turn-udp"
		}
	case rt == "relay":
		return "turn"
	case lt == "host" && rt == "host":
		return "direct"
	}
	return "punched"
}
