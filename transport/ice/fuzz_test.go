package ice

import (
	"testing"

	"github.com/pion/webrtc/v4"
)

// FuzzDecodeBlob: decoding a signalling blob never panics, refuses what
// is over the limit, and what it accepts is of the kind asked for and
// encodes back to a blob that decodes to the same description.
func FuzzDecodeBlob(f *testing.F) {
	f.Add([]byte(`{"type":"offer","sdp":"v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\nc=IN IP4 0.0.0.0\r\na=mid:0\r\n"}`))
	f.Add([]byte(`{"type":"answer","sdp":""}`))
	f.Add([]byte(`{}`))
	f.Add([]byte("\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, kind := range []string{kindOffer, kindAnswer} {
			desc, err := decodeBlob(b, kind, 4096)
			if err != nil {
				continue
			}
			if len(b) > 4096 {
				t.Fatalf("accepted %d bytes over a limit of 4096", len(b))
			}
			if desc.Type != webrtc.NewSDPType(kind) {
				t.Fatalf("asked for %q, accepted %v", kind, desc.Type)
			}
			again, err := encodeBlob(desc)
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeBlob(again, kind, len(again))
			if err != nil || back.Type != desc.Type || back.SDP != desc.SDP {
				t.Fatalf("re-encoded %q does not decode to the same: %v", again, err)
			}
		}
	})
}
