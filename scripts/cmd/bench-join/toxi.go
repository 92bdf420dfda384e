package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// toxiproxy is a running toxiproxy server, the emulated internet links of
// this benchmark: a proxy per side, each with latency and bandwidth
// toxics, which can be disabled (its listener closed and every
// connection through it closed: the link is down) and enabled again.
type toxiproxy struct {
	cmd *exec.Cmd
	api string // host:port of its HTTP API
}

// startToxiproxy installs toxiproxy's server into dir (a Go module, built
// from source) and starts it with its API on api.
func startToxiproxy(dir, api string) (*toxiproxy, error) {
	install := exec.Command("go", "install", "github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0")
	install.Env = append(os.Environ(), "GOBIN="+dir)
	if out, err := install.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("install toxiproxy: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "toxiproxy-server")
	if err := os.Rename(filepath.Join(dir, "server"), bin); err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(api)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-host", host, "-port", port)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start toxiproxy: %w", err)
	}
	return &toxiproxy{cmd: cmd, api: api}, nil
}

// stop ends the toxiproxy server.
func (t *toxiproxy) stop() {
	_ = t.cmd.Process.Kill()
	_ = t.cmd.Wait()
}

// link is one direction-symmetric emulated link: rtt round trip (half
// each way) and mbit megabits per second each way.
type link struct {
	rtt  time.Duration
	mbit float64
}

func (l link) String() string {
	return fmt.Sprintf("%v round trip, %g Mbit/s each way", l.rtt, l.mbit)
}

// proxy creates the proxy name listening on listen and forwarding to
// upstream through l.
func (t *toxiproxy) proxy(name, listen, upstream string, l link) error {
	if err := t.post("/proxies", map[string]any{"name": name, "listen": listen, "upstream": upstream, "enabled": true}); err != nil {
		return err
	}
	oneWay := l.rtt.Milliseconds() / 2
	rate := int64(l.mbit * 1e6 / 8 / 1000) // toxiproxy's bandwidth is in KB/s
	for _, tox := range []map[string]any{
		{"name": "lat_down", "type": "latency", "stream": "downstream", "attributes": map[string]any{"latency": oneWay}},
		{"name": "lat_up", "type": "latency", "stream": "upstream", "attributes": map[string]any{"latency": oneWay}},
		{"name": "bw_down", "type": "bandwidth", "stream": "downstream", "attributes": map[string]any{"rate": rate}},
		{"name": "bw_up", "type": "bandwidth", "stream": "upstream", "attributes": map[string]any{"rate": rate}},
	} {
		if err := t.post("/proxies/"+name+"/toxics", tox); err != nil {
			return err
		}
	}
	return nil
}

// setEnabled takes the proxy's link down (false: its listener and every
// connection through it closed) or up again.
func (t *toxiproxy) setEnabled(name string, on bool) error {
	return t.post("/proxies/"+name, map[string]any{"enabled": on})
}

// post sends one API request, retrying while the server starts.
func (t *toxiproxy) post(path string, body any) error {
	js, err := json.Marshal(body)
	if err != nil {
		return err
	}
	var resp *http.Response
	for i := 0; i < 100; i++ { // the proxy may still be starting
		if resp, err = http.Post("http://"+t.api+path, "application/json", bytes.NewReader(js)); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("toxiproxy %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("toxiproxy %s: %s %s", path, resp.Status, msg)
	}
	return nil
}
