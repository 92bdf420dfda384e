package explain

import (
	"github.com/lockhost/lockhost/resim"
	"reflect"
	"testing"
)

// TestAnswerDocumentRoundTrip sends the player's half through its wire
// form and combines it as the host does: the same explanation as in one
// process.
func TestAnswerDocumentRoundTrip(t *testing.T) {
	in, hr, p := twiceAtThree(t)
	req, err := resim.RequestFromWire(0, 10, []int32{1}, resim.FlatHashes(hr))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Answer(req, side(p))
	if err != nil {
		t.Fatal(err)
	}
	b, err := resim.EncodeReply(rep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := resim.DecodeReply(b, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Run.Hashes, rep.Run.Hashes) || !reflect.DeepEqual(got.State, rep.State) ||
		!reflect.DeepEqual(got.End, rep.End) || len(got.Live) != len(rep.Live) || len(got.Commands) != len(rep.Commands) {
		t.Fatalf("the answer changed on the way")
	}
	ex, err := Combine(in, hr, got)
	if err != nil {
		t.Fatal(err)
	}
	if ex.FirstTick != 3 || ex.Kind != "command" {
		t.Errorf("tick %d kind %s, want 3 command", ex.FirstTick, ex.Kind)
	}
	// An answer for another window is refused.
	other, _ := resim.RequestFromWire(0, 9, []int32{1}, resim.FlatHashes(hr)[:9*2])
	if _, err := resim.DecodeReply(b, other); err == nil {
		t.Error("an answer for 10 ticks was read against a 9-tick request")
	}
}

// FuzzDecodeReply feeds answer documents to the host's reader: it must
// refuse or accept without panicking, and what it accepts fits the
// window.
func FuzzDecodeReply(f *testing.F) {
	h, p := runCounters(10, nil)
	in := Input{From: 0, To: 10, Maps: []int32{1}, Host: side(h)}
	hr, err := HostRun(in)
	if err != nil {
		f.Fatal(err)
	}
	req, _ := resim.RequestFromWire(0, 10, []int32{1}, resim.FlatHashes(hr))
	rep, err := Answer(req, side(p))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := resim.EncodeReply(rep)
	f.Add(b)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := resim.DecodeReply(b, req)
		if err != nil {
			return
		}
		if len(rep.Run.Hashes) != 10 || len(rep.Live) > 10 {
			t.Fatalf("accepted an answer that does not fit the window: %d hashes", len(rep.Run.Hashes))
		}
		_, _ = Combine(in, hr, rep) // must not panic
	})
}
