package coord

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"

	"github.com/lockhost/lockhost/tlsid"
)

// Limits on what the coordinator, a host and a joiner read from each
// other, checked before anything is kept.
const (
	// MaxMessage is the largest message on a WebSocket, and the largest
	// lookup reply, in bytes.
	MaxMessage = 16 << 10
	// MaxAddrs is the most addresses of one kind a host registers.
	MaxAddrs = 16
	// MaxPlay is the most browser links a host registers.
	MaxPlay = 8
	// MaxURL is the longest browser link or TURN URL.
	MaxURL = 256
	// MaxBlob is the largest signalling blob, decoded.
	MaxBlob = 8 << 10
	// MaxReason is the longest reason given for an error or a close.
	MaxReason = 256
	// MaxAttemptID is the longest attempt ID.
	MaxAttemptID = 32
	// MaxTURNURLs is the most TURN server URLs in a lookup or a
	// registration reply.
	MaxTURNURLs = 8
)

// Message types on the host's and the joiner's WebSockets.
const (
	TypeChallenge  = "challenge"
	TypeRegister   = "register"
	TypeRegistered = "registered"
	TypePing       = "ping"
	TypePong       = "pong"
	TypeSignal     = "signal"
	TypeClose      = "close"
	TypeError      = "error"
)

// Msg is one message on a WebSocket to the coordinator, a JSON object
// with a "type" and the fields that type uses (docs/protocol.md lists
// which).
type Msg struct {
	Type string `json:"type"`
	// Nonce is the coordinator's challenge, base64url (challenge).
	Nonce string `json:"nonce,omitempty"`
	// Key is the host's Ed25519 public key and Sig its signature of the
	// connection's challenge, base64url without padding (register).
	Key string `json:"key,omitempty"`
	Sig string `json:"sig,omitempty"`
	// Reach is how the host may be reached (register).
	Reach
	// Code is the host's invite code (registered).
	Code Code `json:"code,omitempty"`
	// TURN is a TURN server and credentials (registered).
	TURN *TURN `json:"turn,omitempty"`
	// Attempt names one joiner's signalling attempt (signal, close on the
	// host's WebSocket).
	Attempt string `json:"attempt,omitempty"`
	// Blob is an opaque signalling blob, base64 (signal).
	Blob []byte `json:"blob,omitempty"`
	// Reason says why (error, close).
	Reason string `json:"reason,omitempty"`
}

// Reach is how a host may be reached, as it registers it and as a lookup
// returns it.
type Reach struct {
	// Addrs are the host's direct addresses on the internet (the router's
	// mapped address, a public one), HOST:PORT of the game port.
	Addrs []string `json:"addrs,omitempty"`
	// LAN are the host's addresses on its own network.
	LAN []string `json:"lan,omitempty"`
	// Play are links to the host's browser player.
	Play []string `json:"play,omitempty"`
	// Fingerprint is the host's TLS certificate fingerprint, "" without
	// TLS.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// TURN is a TURN server list with short-lived credentials.
type TURN struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username"`
	Credential string   `json:"credential"`
	// TTL is the credentials' lifetime in seconds.
	TTL int64 `json:"ttl"`
}

// LookupReply is the coordinator's answer to a lookup.
type LookupReply struct {
	Code Code `json:"code"`
	Reach
	TURN *TURN `json:"turn,omitempty"`
}

// EncodeMsg writes m as the JSON text of one WebSocket message.
func EncodeMsg(m Msg) []byte {
	b, err := json.Marshal(m)
	if err != nil { // only plain fields: cannot happen
		panic(err)
	}
	return b
}

// DecodeMsg reads one WebSocket message and checks it against the limits
// and the fields its type needs.
func DecodeMsg(b []byte) (Msg, error) {
	var m Msg
	if err := strictJSON(b, &m); err != nil {
		return Msg{}, err
	}
	if err := m.check(); err != nil {
		return Msg{}, fmt.Errorf("coordinator message %q: %w", m.Type, err)
	}
	return m, nil
}

// DecodeLookupReply reads a lookup reply, checked as a host's
// registration is.
func DecodeLookupReply(b []byte) (LookupReply, error) {
	var r LookupReply
	if err := strictJSON(b, &r); err != nil {
		return LookupReply{}, err
	}
	if _, err := ParseCode(string(r.Code)); err != nil || !IsCode(string(r.Code)) {
		return LookupReply{}, fmt.Errorf("lookup reply: bad code %q", r.Code)
	}
	if err := r.Reach.check(); err != nil {
		return LookupReply{}, fmt.Errorf("lookup reply: %w", err)
	}
	if err := r.TURN.check(); err != nil {
		return LookupReply{}, fmt.Errorf("lookup reply: %w", err)
	}
	return r, nil
}

// strictJSON decodes one JSON object of at most MaxMessage bytes with no
// unknown fields and nothing after it.
func strictJSON(b []byte, v any) error {
	if len(b) > MaxMessage {
		return fmt.Errorf("coordinator message of %d bytes, more than %d", len(b), MaxMessage)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("coordinator message: %w", err)
	}
	if dec.More() {
		return errors.New("coordinator message: more after the object")
	}
	return nil
}

// check holds m to its type's fields and the limits.
func (m *Msg) check() error {
	if len(m.Reason) > MaxReason || len(m.Attempt) > MaxAttemptID || len(m.Blob) > MaxBlob {
		return errors.New("a field is over its limit")
	}
	empty := m.Nonce == "" && m.Key == "" && m.Sig == "" && m.Code == "" && m.TURN == nil && m.Attempt == "" && m.Blob == nil && m.Reason == "" &&
		m.Addrs == nil && m.LAN == nil && m.Play == nil && m.Fingerprint == ""
	switch m.Type {
	case TypeRegister:
		if _, err := decodeB64(m.Key, ed25519.PublicKeySize); err != nil {
			return fmt.Errorf("key: %w", err)
		}
		if _, err := decodeB64(m.Sig, ed25519.SignatureSize); err != nil {
			return fmt.Errorf("sig: %w", err)
		}
		return m.Reach.check()
	case TypeChallenge:
		if _, err := decodeB64(m.Nonce, NonceLen); err != nil {
			return fmt.Errorf("nonce: %w", err)
		}
	case TypeRegistered:
		if _, err := ParseCode(string(m.Code)); err != nil || !IsCode(string(m.Code)) {
			return fmt.Errorf("bad code %q", m.Code)
		}
		return m.TURN.check()
	case TypePing, TypePong:
		if !empty {
			return errors.New("takes no fields")
		}
	case TypeSignal:
		if len(m.Blob) == 0 {
			return errors.New("no blob")
		}
	case TypeClose, TypeError:
	default:
		return errors.New("unknown type")
	}
	return nil
}

// check holds r to the limits: addresses that parse, links that are http
// or https, a fingerprint tlsid reads.
func (r *Reach) check() error {
	if len(r.Addrs) > MaxAddrs || len(r.LAN) > MaxAddrs || len(r.Play) > MaxPlay {
		return errors.New("too many addresses")
	}
	for _, list := range [][]string{r.Addrs, r.LAN} {
		for _, a := range list {
			if ap, err := netip.ParseAddrPort(a); err != nil || ap.Port() == 0 || len(a) > 64 {
				return fmt.Errorf("address %q is not IP:PORT", a)
			}
		}
	}
	for _, p := range r.Play {
		if err := checkURL(p, "http", "https"); err != nil {
			return err
		}
	}
	if r.Fingerprint != "" {
		fp, err := tlsid.ParseFingerprint(r.Fingerprint)
		if err != nil || fp != r.Fingerprint {
			return fmt.Errorf("fingerprint %q is not sha256: and 64 lowercase hex digits", r.Fingerprint)
		}
	}
	return nil
}

// check holds t, if any, to the limits.
func (t *TURN) check() error {
	if t == nil {
		return nil
	}
	if len(t.URLs) == 0 || len(t.URLs) > MaxTURNURLs || len(t.Username) > MaxReason || len(t.Credential) > MaxReason || t.TTL <= 0 {
		return errors.New("TURN: bad server list or credentials")
	}
	for _, u := range t.URLs {
		if err := checkURL(u, "turn", "turns"); err != nil {
			return err
		}
	}
	return nil
}

// checkURL refuses a URL that is too long or not of one of schemes.
func checkURL(s string, schemes ...string) error {
	u, err := url.Parse(s)
	if err != nil || len(s) > MaxURL {
		return fmt.Errorf("link %q is not a URL of at most %d bytes", s, MaxURL)
	}
	for _, sc := range schemes {
		if u.Scheme == sc {
			return nil
		}
	}
	return fmt.Errorf("link %q: scheme %q, want %v", s, u.Scheme, schemes)
}

// decodeB64 reads n bytes of base64url without padding.
func decodeB64(s string, n int) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != n {
		return nil, fmt.Errorf("not %d bytes of base64url", n)
	}
	return b, nil
}

// NonceLen is the length of a challenge's nonce in bytes.
const NonceLen = 16

// SignContext is what a host signs, followed by the challenge's nonce as
// sent (base64url): the context keeps the signature from meaning anything
// else.
const SignContext = "lockhost coordinator register v1\n"

// CheckTURNURL refuses what is not a turn: or turns: URL within MaxURL.
func CheckTURNURL(s string) error { return checkURL(s, "turn", "turns") }
