package desync

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzRead feeds arbitrary bytes to Read's decoding path: it must never
// panic, and whatever it accepts must encode and decode back to the same
// report.
func FuzzRead(f *testing.F) {
	good, err := json.MarshalIndent(sample(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), 100, 3), "", "  ")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/3])
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"maps":[{"id":1,"parts":[{"name":"a","match":false}]}],"map_ids":[1,1]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"time":"0000-01-01T00:00:00Z"}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decode(b)
		if err != nil {
			if r != nil {
				t.Fatal("a report and an error")
			}
			return
		}
		r.DiffParts()
		again, err := json.Marshal(r)
		if err != nil {
			return // e.g. a time json cannot write back; Write reports it
		}
		r2, err := decode(again)
		if err != nil {
			t.Fatalf("accepted report does not decode after encoding: %v\n%s", err, again)
		}
		third, _ := json.Marshal(r2)
		if !bytes.Equal(again, third) {
			t.Fatalf("encoding not stable:\n%s\n%s", again, third)
		}
	})
}

// TestReadMatchesDecode checks that Read is decode on the file's bytes,
// so FuzzRead covers it.
func TestReadMatchesDecode(t *testing.T) {
	b, _ := json.Marshal(sample(time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), 100, 3))
	p := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(p, b, 0o644)
	r1, err1 := Read(p)
	r2, err2 := decode(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	j1, _ := json.Marshal(r1)
	j2, _ := json.Marshal(r2)
	if !bytes.Equal(j1, j2) {
		t.Fatal("Read and decode differ")
	}
}
