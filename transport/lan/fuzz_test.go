package lan

import (
	"bytes"
	"testing"

	"github.com/lockhost/lockhost/status"
)

// FuzzParseProbe fuzzes the host's side: whatever a probe holds, the host
// either drops it or answers with no more bytes than it carried.
func FuzzParseProbe(f *testing.F) {
	f.Add(AppendProbe(nil, 1))
	f.Add(status.AppendRequest(nil, 1))
	f.Add([]byte("LHDQ"))
	r := NewResponder(sampleInfo, Options{GamePort: 30502, Rate: -1, TotalRate: 1e9, TotalBurst: 1 << 30})
	f.Fuzz(func(t *testing.T, p []byte) {
		id, ok := ParseProbe(p)
		reply, answered := r.answer(nil, p, fakeAddr("127.0.0.1:1"))
		if ok != answered {
			t.Fatalf("parsed %v, answered %v", ok, answered)
		}
		if !ok {
			return
		}
		if !bytes.Equal(AppendProbe(nil, id), p) {
			t.Fatalf("accepted a probe that does not re-encode the same: %x", p)
		}
		if len(reply) > len(p) {
			t.Fatalf("%d-byte reply to a %d-byte probe", len(reply), len(p))
		}
	})
}

// FuzzDecodeReply fuzzes the joiner's side: whatever decodes re-encodes
// to the same bytes.
func FuzzDecodeReply(f *testing.F) {
	b, _ := AppendReply(nil, Reply{GamePort: 30502, HostID: 0x1122, ProbeID: 9, Info: sampleInfo()})
	f.Add(b)
	f.Add(AppendProbe(nil, 1))
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := DecodeReply(p)
		if err != nil {
			return
		}
		b, err := AppendReply(nil, r)
		if err != nil || !bytes.Equal(b, p) {
			t.Fatalf("re-encoded %x (%v), want %x", b, err, p)
		}
	})
}
