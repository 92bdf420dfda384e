package coord

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeMsg: whatever a peer sends, DecodeMsg returns an error or a
// message within the limits that encodes and decodes to itself.
func FuzzDecodeMsg(f *testing.F) {
	for _, m := range specMessages(f) {
		f.Add(m)
	}
	f.Add([]byte(`{"type":"signal","attempt":"x","blob":"AAAA"}`))
	f.Add([]byte(`{"type":"register","key":"` + string(bytes.Repeat([]byte("A"), 43)) + `","sig":"` + string(bytes.Repeat([]byte("B"), 86)) + `","addrs":["[::1]:1"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMsg(b)
		if err != nil {
			return
		}
		if len(m.Blob) > MaxBlob || len(m.Addrs) > MaxAddrs || len(m.LAN) > MaxAddrs || len(m.Play) > MaxPlay {
			t.Fatalf("a message over the limits decoded: %+v", m)
		}
		again, err := DecodeMsg(EncodeMsg(m))
		if err != nil {
			t.Fatalf("a decoded message does not decode once encoded: %v", err)
		}
		if !bytes.Equal(EncodeMsg(again), EncodeMsg(m)) {
			t.Fatalf("encode and decode changed %+v to %+v", m, again)
		}
	})
}

// FuzzDecodeLookupReply: a hostile coordinator's reply is refused or
// within the limits.
func FuzzDecodeLookupReply(f *testing.F) {
	f.Add([]byte(`{"code":"+K7QF2MX","addrs":["203.0.113.7:30502"],"fingerprint":"sha256:` + string(bytes.Repeat([]byte("ab"), 32)) + `"}`))
	f.Add([]byte(`{"code":"+K7QF2MX","turn":{"urls":["turn:turn.example.org:3478"],"username":"1:a","credential":"x","ttl":60}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeLookupReply(b)
		if err != nil {
			return
		}
		if len(r.Addrs) > MaxAddrs || len(r.LAN) > MaxAddrs || len(r.Play) > MaxPlay || (r.TURN != nil && len(r.TURN.URLs) > MaxTURNURLs) {
			t.Fatalf("a reply over the limits decoded: %+v", r)
		}
		if _, err := ParseCode(string(r.Code)); err != nil {
			t.Fatalf("a reply with a bad code decoded: %q", r.Code)
		}
		enc, _ := json.Marshal(r)
		if _, err := DecodeLookupReply(enc); err != nil {
			t.Fatalf("a decoded reply does not decode once encoded: %v", err)
		}
	})
}

// FuzzDecodeReport: a joiner's report is refused or names a known
// outcome.
func FuzzDecodeReport(f *testing.F) {
	f.Add([]byte(`{"code":"+K7QF2MX","outcome":"direct","ms":412}`))
	f.Add([]byte(`{"code":"+K7QF2MX","outcome":"failed","ms":20000}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeReport(b)
		if err != nil {
			return
		}
		known := false
		for _, o := range Outcomes {
			known = known || o == r.Outcome
		}
		if !known || r.Millis < 0 {
			t.Fatalf("report %+v decoded", r)
		}
	})
}

// FuzzParseCode: a code that parses is + and CodeLen letters of the
// alphabet, and parses to itself.
func FuzzParseCode(f *testing.F) {
	f.Add("+K7QF2MX")
	f.Add("k7q-f2m x")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCode(s)
		if err != nil {
			return
		}
		if len(c) != CodeLen+1 || c[0] != '+' {
			t.Fatalf("ParseCode(%q) = %q", s, c)
		}
		for _, r := range c[1:] {
			if !bytes.ContainsRune([]byte(Alphabet), r) {
				t.Fatalf("ParseCode(%q) = %q, outside the alphabet", s, c)
			}
		}
		if again, err := ParseCode(string(c)); err != nil || again != c {
			t.Fatalf("ParseCode(%q) = %q, %v", c, again, err)
		}
	})
}
