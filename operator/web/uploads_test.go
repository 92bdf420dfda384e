package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
)

// TestViewUploads: the overview's JSON carries the world transfers, with
// bytes, total and time left, and those waiting in line; empty lists are
// [] and an unknown time left is null.
func TestViewUploads(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := host.Overview{At: now, Uploads: host.UploadsView{Rate: 1 << 20, Slots: 1,
		Sending: []host.TransferView{{Name: "Ann", Acked: 3 << 20, Total: 64 << 20, Started: now.Add(-3 * time.Second), ETA: 61 * time.Second}},
		Waiting: []string{"Bob"}}}
	b, err := json.Marshal(view(o, now, time.Minute).Uploads)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rate":1048576,"slots":1,"sending":[{"name":"Ann","acked":3145728,"total":67108864,"started":"2026-01-02T03:04:02Z","eta_ms":61000}],"waiting":["Bob"]}`
	if string(b) != want {
		t.Errorf("uploads JSON\n%s\nwant\n%s", b, want)
	}
	b, _ = json.Marshal(view(host.Overview{At: now}, now, time.Minute).Uploads)
	if !strings.Contains(string(b), `"sending":[]`) || !strings.Contains(string(b), `"waiting":[]`) {
		t.Errorf("no transfers: %s", b)
	}
}
