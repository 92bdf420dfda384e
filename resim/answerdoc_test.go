package resim

import (
	"testing"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// TestRequestFromWire refuses a request whose hashes do not fill its
// window, or that names the world among its maps.
func TestRequestFromWire(t *testing.T) {
	tests := []struct {
		name     string
		from, to uint64
		maps     []int32
		n        int
		ok       bool
	}{
		{"two ticks of a map and the world", 10, 12, []int32{1}, 4, true},
		{"a hash short", 10, 12, []int32{1}, 3, false},
		{"empty window", 10, 10, nil, 0, false},
		{"the world as a map", 10, 11, []int32{lockstep.WorldScope}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := RequestFromWire(tt.from, tt.to, tt.maps, make([]uint64, tt.n))
			if (err == nil) != tt.ok {
				t.Fatalf("err %v, want ok %v", err, tt.ok)
			}
			if tt.ok && (len(req.Host.Hashes) != int(tt.to-tt.from) || len(req.Host.IDs) != 1+len(tt.maps)) {
				t.Errorf("run of %d ticks and %d IDs", len(req.Host.Hashes), len(req.Host.IDs))
			}
		})
	}
}

// TestDecodeReplyRefuses reads answers that do not fit the request: each
// is refused.
func TestDecodeReplyRefuses(t *testing.T) {
	req, err := RequestFromWire(10, 12, []int32{1}, make([]uint64, 4))
	if err != nil {
		t.Fatal(err)
	}
	good := func() answerDoc { return answerDoc{Hashes: make([]uint64, 4)} }
	tests := []struct {
		name string
		edit func(d *answerDoc)
	}{
		{"hashes short", func(d *answerDoc) { d.Hashes = d.Hashes[:3] }},
		{"a command outside the window", func(d *answerDoc) { d.Commands = []lockstep.Command{{Tick: 12}} }},
		{"a trace outside the window", func(d *answerDoc) { d.Live = []traceDoc{{Tick: 9}} }},
		{"traces out of order", func(d *answerDoc) { d.Trace = []traceDoc{{Tick: 11}, {Tick: 10}} }},
		{"a state of a map not asked about", func(d *answerDoc) { d.End = []blobDoc{{ID: 2}} }},
		{"a map's state twice", func(d *answerDoc) { d.End = []blobDoc{{ID: 1}, {ID: 1}} }},
		{"a differing tick outside the window", func(d *answerDoc) { d.State, d.DiffTick = []blobDoc{{ID: 1}}, 12 }},
	}
	b, _ := codec.Encode(&answerDoc{Hashes: make([]uint64, 4)})
	if _, err := DecodeReply(b, req); err != nil {
		t.Fatalf("a fitting answer was refused: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := good()
			tt.edit(&d)
			b, err := codec.Encode(&d)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := DecodeReply(b, req); err == nil {
				t.Error("accepted")
			}
		})
	}
}
