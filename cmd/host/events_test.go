package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIdleStreamsDoNotLockOutViewers runs the real host with its status
// page and opens 32 idle /events streams from one address, which used to
// take every stream the page allows. That address gets its own share
// only; a viewer from another address still gets the live page.
func TestIdleStreamsDoNotLockOutViewers(t *testing.T) {
	dir := t.TempDir()
	bin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/host")
	h := startServe(t, bin, filepath.Join(dir, "data"), "--http", "127.0.0.1:0")
	page := waitStatusPage(t, h.log, h.done)

	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
	}
	// open starts a stream and keeps it open until the test ends.
	open := func(c *http.Client) *http.Response {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, "GET", page+"events", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			cancel()
			t.Skipf("cannot connect from another loopback address here: %v", err)
		}
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		return resp
	}

	idler := from("127.0.0.2")
	admitted := 0
	for range 32 {
		if open(idler).StatusCode == http.StatusOK {
			admitted++
		}
	}
	if admitted == 0 || admitted >= 32 {
		t.Fatalf("%d of 32 streams from one address admitted, want some but not all", admitted)
	}

	viewer := open(from("127.0.0.3"))
	if viewer.StatusCode != http.StatusOK {
		t.Fatalf("a viewer from another address got %s", viewer.Status)
	}
	// The viewer's stream is live: an overview event arrives.
	got := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(viewer.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				got <- true
				return
			}
		}
		got <- false
	}()
	select {
	case ok := <-got:
		if !ok {
			t.Fatal("the viewer's stream ended without an event")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event on the viewer's stream in 30 s")
	}
	t.Logf("%d of 32 idle streams from one address admitted; another address's viewer is live", admitted)
}
