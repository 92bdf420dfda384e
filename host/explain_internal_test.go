package host

import (
	"testing"

	"github.com/lockhost/lockhost/wire"
)

// TestExplainWaitBounds feeds the buffer a player's answer fills, as a
// reader would: a declared size over the limit is refused before anything
// is kept, chunks out of order or with another total are refused, an
// error ends the wait without data, and a whole answer ends it with
// exactly its bytes.
func TestExplainWaitBounds(t *testing.T) {
	chunk := func(off, total uint64, n int) *wire.ClientExplainReply {
		return &wire.ClientExplainReply{Request: 1, Offset: off, Total: total, Data: make([]byte, n)}
	}
	tests := []struct {
		name   string
		chunks []*wire.ClientExplainReply
		bad    bool // the last chunk is refused
		done   bool
		kept   int
		errMsg string
	}{
		{"whole answer", []*wire.ClientExplainReply{chunk(0, 10, 6), chunk(6, 10, 4)}, false, true, 10, ""},
		{"over the limit", []*wire.ClientExplainReply{chunk(0, 101, 1)}, true, false, 0, ""},
		{"gap", []*wire.ClientExplainReply{chunk(0, 10, 4), chunk(5, 10, 4)}, true, false, 4, ""},
		{"total changes", []*wire.ClientExplainReply{chunk(0, 10, 4), chunk(4, 20, 4)}, true, false, 4, ""},
		{"error", []*wire.ClientExplainReply{{Request: 1, Error: "no copy"}}, false, true, 0, "no copy"},
		{"empty", []*wire.ClientExplainReply{chunk(0, 0, 0)}, false, true, 0, "an empty answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &explainWait{q: 1, limit: 100, done: make(chan struct{})}
			var err error
			for _, c := range tt.chunks {
				if err = w.add(c); err != nil {
					break
				}
			}
			if (err != nil) != tt.bad {
				t.Fatalf("err %v, want refused %v", err, tt.bad)
			}
			done := false
			select {
			case <-w.done:
				done = true
			default:
			}
			if done != tt.done || len(w.buf) != tt.kept || w.errText != tt.errMsg {
				t.Errorf("done %v, kept %d, error %q; want %v, %d, %q", done, len(w.buf), w.errText, tt.done, tt.kept, tt.errMsg)
			}
			if done && w.add(chunk(0, 10, 10)) != nil {
				t.Error("a chunk after the end was refused rather than dropped")
			}
		})
	}
}
