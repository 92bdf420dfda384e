package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
)

// TestJoinBusyWebSocket: a host that answers the WebSocket upgrade 503
// is asked again after its Retry-After; when it asks for longer than the
// connect may take, the tool gives up with the network exit code and
// says the host is busy.
func TestJoinBusyWebSocket(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
		} else {
			w.Header().Set("Retry-After", "3600")
		}
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
	code, out, errOut := runJoin(t, url, "--name", "Patient", "--exit-after-ready", "-q", "--no-reconnect")
	if code != cliutil.ExitNetwork || !strings.Contains(errOut, "the host is busy") {
		t.Fatalf("exit %d, want %d saying the host is busy\n%s\n%s", code, cliutil.ExitNetwork, out, errOut)
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("the host was asked %d times, want 2 (again after its Retry-After of 1 s, not after one of an hour)", n)
	}
}
