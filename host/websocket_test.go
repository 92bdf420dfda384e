package host_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/ws"
	"github.com/lockhost/lockhost/wire"
)

// wsHost is a host serving a TCP listener and a WebSocket listener, the
// latter on a loopback HTTP server, in one session.
type wsHost struct {
	srv    *host.Server
	tcp    net.Listener
	wsl    *ws.Listener
	url    string
	logs   *syncbuf.Buffer
	served chan error
}

func startWSHost(t *testing.T, ctx context.Context, cfg host.Config) *wsHost {
	t.Helper()
	h := &wsHost{logs: &syncbuf.Buffer{}, served: make(chan error, 1)}
	cfg.Logger = slog.New(slog.NewTextHandler(h.logs, nil))
	srv, err := host.New(cfg, host.Content{GameVersion: "counters 1"}, locksteptest.New(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	if h.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	h.wsl = ws.NewListener(ws.Options{})
	mux := http.NewServeMux()
	mux.Handle("GET "+ws.Path, h.wsl)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	h.url = "ws" + strings.TrimPrefix(hs.URL, "http") + ws.Path
	go func() { h.served <- srv.ServeListeners(ctx, &host.Listeners{TCP: h.tcp, Extra: []net.Listener{h.wsl}}) }()
	return h
}

// joinWS joins h through the WebSocket dialer.
func (h *wsHost) joinWS(ctx context.Context, cfg join.Config) (*join.Session, error) {
	jctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cfg.Addr, cfg.Dial = h.url, ws.Dial
	cfg.Logger, cfg.Loader = testkit.Quiet(), locksteptest.Load
	return join.Join(jctx, cfg)
}

// TestWebSocketTransport: a player joins through a WebSocket listener
// served with the TCP one in one session, reaches WorldReady and plays a
// command; the host sees the HTTP client's address, and its connection
// rate counts WebSocket and TCP connections from that address together;
// ending the session closes both listeners.
func TestWebSocketTransport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := startWSHost(t, ctx, host.Config{Admission: host.AdmissionConfig{ConnRate: 0.01, ConnBurst: 1}})
	applied := make(chan lockstep.Command, 1)
	alice, err := h.joinWS(ctx, join.Config{Name: "Alice", OnApply: func(c lockstep.Command) {
		if c.MapID == 1 {
			applied <- c
		}
	}})
	if err != nil {
		t.Fatalf("join over WebSocket: %v", err)
	}
	defer alice.Close()
	go alice.Run(ctx)
	if err := alice.Send(1, locksteptest.KindAdd, []byte{9}); err != nil {
		t.Fatal(err)
	}
	<-applied
	values := make(chan int64, 1)
	alice.Do(func(sim lockstep.Sim) { values <- sim.(*locksteptest.Counters).Value(1) })
	if v := <-values; v != 9 {
		t.Fatalf("map 1 holds %d after Alice's add of 9", v)
	}
	players, err := h.srv.Players()
	if err != nil {
		t.Fatal(err)
	}
	if len(players) != 1 || players[0].Name != "Alice" || !strings.HasPrefix(players[0].Addr, "127.0.0.1:") {
		t.Fatalf("players %+v, want Alice from 127.0.0.1", players)
	}
	// A burst of one: a second WebSocket connection from 127.0.0.1 is
	// refused, and so is a TCP one.
	if _, err := h.joinWS(ctx, join.Config{Name: "Bob"}); err == nil {
		t.Fatal("a second WebSocket connection from Alice's address was admitted over the connection rate")
	}
	tctx, tcancel := context.WithTimeout(ctx, 20*time.Second)
	defer tcancel()
	if _, err := join.Join(tctx, join.Config{Addr: h.tcp.Addr().String(), Name: "Carol", Logger: testkit.Quiet(), Loader: locksteptest.Load}); err == nil {
		t.Fatal("a TCP connection from Alice's address was admitted over the connection rate")
	}
	cancel()
	if err := <-h.served; err != nil {
		t.Fatalf("served: %v", err)
	}
	// One refusal is logged in full, the next in the summary for the
	// address that the session's end flushes.
	logs := h.logs.String()
	if !strings.Contains(logs, "remote=127.0.0.1:") || !strings.Contains(logs, "reason=RateLimited") ||
		!strings.Contains(logs, `msg="more clients refused" addr=127.0.0.1 count=1 `) || !strings.Contains(logs, "reason_RateLimited=1") {
		t.Fatalf("want a RateLimited refusal logged and one more summarized for 127.0.0.1 (WebSocket and TCP):\n%s", logs)
	}
	// Both listeners are closed: a WebSocket upgrade is answered 503,
	// a TCP connect refused.
	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	if nc, err := ws.Dial(dctx, h.url); err == nil {
		nc.Close()
		t.Fatal("the WebSocket listener upgrades after the session")
	} else if !strings.Contains(err.Error(), "503") {
		t.Fatalf("a WebSocket dial after the session: %v, want 503", err)
	}
	if nc, err := net.Dial("tcp", h.tcp.Addr().String()); err == nil {
		nc.Close()
		t.Fatal("the TCP listener accepts after the session")
	}
}

// TestWebSocketLeaveNow: a player that leaves with LeaveNow, as a
// browser page being unloaded does (it sends Client_Leave and closes the
// WebSocket at once, waiting for nothing), is counted as a leave, not a
// dropped connection, and its Run ends.
func TestWebSocketLeaveNow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := startWSHost(t, ctx, host.Config{})
	tab, err := h.joinWS(ctx, join.Config{Name: "Tab"})
	if err != nil {
		t.Fatalf("join over WebSocket: %v", err)
	}
	ran := make(chan error, 1)
	go func() { ran <- tab.Run(ctx) }()
	if err := tab.LeaveNow("the page was closed"); err != nil {
		t.Fatalf("leave: %v", err)
	}
	<-ran
	// The overview is published on the tick: wait for Tab's going to be
	// counted, not for an empty list, which a picture from before Tab's
	// admission also shows.
	testkit.WaitFor(t, "Tab to be gone", func() bool {
		o := h.srv.Overview()
		return len(o.Players) == 0 && o.Stats.Leaves+o.Stats.Drops > 0
	})
	if st := h.srv.Overview().Stats; st.Leaves != 1 || st.Drops != 0 {
		t.Fatalf("%d leaves, %d drops; want Tab's leave\n%s", st.Leaves, st.Drops, h.logs.String())
	}
	if !strings.Contains(h.logs.String(), `msg="player left"`) {
		t.Errorf("the host logs no leave:\n%s", h.logs.String())
	}
}

// TestWebSocketPassword: the password's challenge and response run over
// WebSocket as over TCP: the right password reaches WorldReady, a wrong
// one is refused.
func TestWebSocketPassword(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := startWSHost(t, ctx, host.Config{Admission: host.AdmissionConfig{Password: []byte("open sesame")}})
	if _, err := h.joinWS(ctx, join.Config{Name: "Mallory", Password: []byte("guess")}); err == nil {
		t.Fatal("a wrong password was admitted over WebSocket")
	}
	alice, err := h.joinWS(ctx, join.Config{Name: "Alice", Password: []byte("open sesame")})
	if err != nil {
		t.Fatalf("join over WebSocket with the password: %v", err)
	}
	if alice.Sim() == nil || len(alice.Sim().MapIDs()) != 2 {
		t.Fatal("joined without the world")
	}
	alice.Close()
	cancel()
	if err := <-h.served; err != nil {
		t.Fatalf("served: %v", err)
	}
}

// TestWebSocketTLS: a host that speaks TLS expects the TLS handshake
// inside the WebSocket byte stream, as on its TCP port: a joiner with TLS
// reaches WorldReady and learns the host's certificate, one without is
// refused.
func TestWebSocketTLS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cert, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := startWSHost(t, ctx, host.Config{Admission: host.AdmissionConfig{TLS: tlsid.ServerConfig(cert)}})
	if _, err := h.joinWS(ctx, join.Config{Name: "Plain"}); err == nil {
		t.Fatal("a joiner without TLS was admitted by a TLS host over WebSocket")
	}
	known := &tlsid.KnownHosts{Path: filepath.Join(t.TempDir(), "known_hosts")}
	cfg, learned := tlsid.ClientConfig(h.url, "", known)
	alice, err := h.joinWS(ctx, join.Config{Name: "Alice", TLS: cfg})
	if err != nil {
		t.Fatalf("join over TLS inside WebSocket: %v", err)
	}
	alice.Close()
	if fp, _ := learned(); fp != tlsid.Fingerprint(cert) {
		t.Fatalf("learned certificate %q, want the host's %q", fp, tlsid.Fingerprint(cert))
	}
	cancel()
	if err := <-h.served; err != nil {
		t.Fatalf("served: %v", err)
	}
}

// wsExchange opens a raw WebSocket to h, sends frames (one message
// each) and reads until the host closes: the frames it sent and the close
// status.
func wsExchange(t *testing.T, ctx context.Context, h *wsHost, frames ...wire.Packet) ([]wire.Packet, websocket.StatusCode) {
	t.Helper()
	c, _, err := websocket.Dial(ctx, h.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for _, p := range frames {
		if err := c.Write(ctx, websocket.MessageBinary, wire.MustMarshal(p)); err != nil {
			t.Fatal(err)
		}
	}
	var stream []byte
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			var got []wire.Packet
			fr := wire.NewFrameReader(bytes.NewReader(stream), 0)
			for {
				id, body, err := fr.Next()
				if err != nil {
					break
				}
				p, err := wire.Decode(id, body)
				if err != nil {
					t.Fatalf("the host sent a %s that does not decode: %v", id, err)
				}
				got = append(got, p)
			}
			return got, websocket.CloseStatus(err)
		}
		stream = append(stream, b...)
	}
}

// TestWebSocketCloseStatus: the host ends a WebSocket connection with
// status 1000 (normal closure) both after its Server_Disconnect and after
// the client's Client_Leave, as section 2 says.
func TestWebSocketCloseStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := startWSHost(t, ctx, host.Config{})
	got, status := wsExchange(t, ctx, h, &wire.ClientProtocol{Protocol: 99})
	if len(got) == 0 || got[len(got)-1].ID() != wire.IDServerDisconnect || got[len(got)-1].(*wire.ServerDisconnect).Reason != wire.ReasonProtocol {
		t.Fatalf("a wrong version got %v; want a Server_Disconnect of reason Protocol", got)
	}
	if status != websocket.StatusNormalClosure {
		t.Errorf("after Server_Disconnect the host closed with %v; want 1000", status)
	}
	got, status = wsExchange(t, ctx, h, &wire.ClientProtocol{Protocol: wire.ProtocolVersion}, &wire.ClientLeave{Why: "bye"})
	if len(got) == 0 || got[0].ID() != wire.IDServerModList || got[len(got)-1].ID() == wire.IDServerDisconnect {
		t.Fatalf("a leave after the protocol got %v; want Server_ModList and no disconnect", got)
	}
	if status != websocket.StatusNormalClosure {
		t.Errorf("after Client_Leave the host closed with %v; want 1000", status)
	}
}

// TestWebSocketTimeoutDisconnect: a joiner over WebSocket that misses a
// deadline is told so, as over TCP: Server_Disconnect with reason
// Timeout, then a close of status 1000 (the WebSocket library alone ended
// the connection at the deadline, with neither).
func TestWebSocketTimeoutDisconnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := startWSHost(t, ctx, host.Config{Timeouts: host.TimeoutConfig{Handshake: 300 * time.Millisecond}})
	got, status := wsExchange(t, ctx, h, &wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	if len(got) == 0 || got[len(got)-1].ID() != wire.IDServerDisconnect || got[len(got)-1].(*wire.ServerDisconnect).Reason != wire.ReasonTimeout {
		t.Fatalf("a joiner silent past the handshake deadline got %v; want a Server_Disconnect of reason Timeout", got)
	}
	if status != websocket.StatusNormalClosure {
		t.Errorf("after the timeout the host closed with %v; want 1000", status)
	}
}
