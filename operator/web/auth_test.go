package web_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/prometheus/client_golang/prometheus"
)

const token = "correct horse battery staple"

func basic(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

// TestToken: with Config.Token, every route but /healthz answers 401
// without the token, as a bearer token or a basic-auth password, and
// serves with it; without Config.Token every route is open.
func TestToken(t *testing.T) {
	// A source that samples and draws, so the charts' and pictures'
	// routes answer 200 with the token.
	src := &drawingSource{sampledSource{fakeSource: fakeSource{o: fullOverview(time.Now()), live: true}}}
	guarded := httptest.NewServer(web.Handler(src, web.Config{Gatherer: prometheus.NewRegistry(), Logger: testkit.Quiet(), Token: token}))
	defer guarded.Close()
	open := httptest.NewServer(web.Handler(src, web.Config{Gatherer: prometheus.NewRegistry(), Logger: testkit.Quiet()}))
	defer open.Close()

	auths := []struct {
		name, header string
		ok           bool
	}{
		{"none", "", false},
		{"bearer", "Bearer " + token, true},
		{"bearer, scheme in lower case", "bearer " + token, true},
		{"basic, any user", basic("admin", token), true},
		{"basic, no user", basic("", token), true},
		{"wrong bearer", "Bearer " + token + "x", false},
		{"bearer prefix of the token", "Bearer " + token[:len(token)-1], false},
		{"empty bearer", "Bearer ", false},
		{"token as the basic user", basic(token, ""), false},
		{"wrong basic", basic("admin", "hunter2"), false},
		{"token with no scheme", token, false},
		{"unknown scheme", "Digest " + token, false},
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, route := range []string{"/", "/api/overview", "/events", "/metrics", "/healthz", "/api/samples", "/maps/0.png"} {
		for _, a := range auths {
			for _, srv := range []struct {
				name string
				url  string
				want int
			}{
				{"guarded", guarded.URL, map[bool]int{true: 200, false: 401}[a.ok || route == "/healthz"]},
				{"open", open.URL, 200},
			} {
				t.Run(srv.name+route+"/"+a.name, func(t *testing.T) {
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel() // ends a stream from /events
					req, _ := http.NewRequestWithContext(ctx, "GET", srv.url+route, nil)
					if a.header != "" {
						req.Header.Set("Authorization", a.header)
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					if resp.StatusCode != srv.want {
						t.Fatalf("%d, want %d", resp.StatusCode, srv.want)
					}
					challenge := resp.Header.Get("WWW-Authenticate")
					if srv.want == 401 {
						if !strings.HasPrefix(challenge, "Basic realm=") {
							t.Errorf("401 with WWW-Authenticate %q: a browser would not ask for the token", challenge)
						}
						if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
							t.Error("401 without the headers every answer gets")
						}
					} else if challenge != "" {
						t.Errorf("%d with WWW-Authenticate %q", resp.StatusCode, challenge)
					}
				})
			}
		}
	}
}

// TestServeWarnsWhenOpenToOthers: Serve warns when the routes are open on
// an address other machines reach, and only notes it when a token guards
// them.
func TestServeWarnsWhenOpenToOthers(t *testing.T) {
	for _, c := range []struct {
		name, addr, token, want, wantNot string
	}{
		{"loopback, open", "127.0.0.1:0", "", "", "reachable from other machines"},
		{"every interface, open", "0.0.0.0:0", "", "level=WARN msg=\"status page and metrics are reachable from other machines, with no token; set LOCKHOST_HTTP_TOKEN", ""},
		{"every interface, token", "0.0.0.0:0", token, "level=INFO msg=\"status page and metrics are reachable from other machines; they ask for the status token", "level=WARN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", c.addr)
			if err != nil {
				t.Skipf("cannot listen on %s here: %v", c.addr, err)
			}
			var logs syncbuf.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() {
				served <- web.Serve(ctx, ln, web.Handler(&fakeSource{}, web.Config{Logger: testkit.Quiet(), Token: c.token}), log)
			}()
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(logs.String(), "msg=\"status page\"") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			if err := <-served; err != nil {
				t.Fatal(err)
			}
			out := logs.String()
			if c.want != "" && !strings.Contains(out, c.want) {
				t.Errorf("log lacks %q:\n%s", c.want, out)
			}
			if c.wantNot != "" && strings.Contains(out, c.wantNot) {
				t.Errorf("log has %q:\n%s", c.wantNot, out)
			}
			if strings.Contains(out, token) {
				t.Errorf("the token is in the log:\n%s", out)
			}
		})
	}
}
