package ws_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/lockhost/lockhost/transport/ws"
)

// serve runs a Listener with opts on a loopback HTTP server and returns it
// with the URL of its /ws path.
func serve(t *testing.T, opts ws.Options) (*ws.Listener, string) {
	t.Helper()
	ln := ws.NewListener(opts)
	mux := http.NewServeMux()
	mux.Handle("GET "+ws.Path, ln)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		ln.Close()
		srv.Close()
	})
	return ln, "ws" + strings.TrimPrefix(srv.URL, "http") + ws.Path
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rawDial opens a WebSocket to url without the net.Conn wrapping, to send
// what Dial never would.
func rawDial(t *testing.T, ctx context.Context, url string, h http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h})
	if err == nil {
		t.Cleanup(func() { c.CloseNow() })
	}
	return c, resp, err
}

// TestByteStream: what one side writes, in any split, the other reads as
// one stream, both ways; the host sees the HTTP client's address, with
// an AddrPort for its per-address limits.
func TestByteStream(t *testing.T) {
	ctx := testCtx(t)
	ln, url := serve(t, ws.Options{})
	client, err := ws.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	hostEnd, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer hostEnd.Close()
	ap, ok := hostEnd.RemoteAddr().(interface{ AddrPort() netip.AddrPort })
	if !ok || !ap.AddrPort().Addr().IsLoopback() || ap.AddrPort().Port() == 0 {
		t.Fatalf("host sees remote %#v, want a loopback address with a port", hostEnd.RemoteAddr())
	}
	want := bytes.Repeat([]byte("frame-bytes-"), 5000)
	for _, pair := range []struct{ from, to net.Conn }{{client, hostEnd}, {hostEnd, client}} {
		go func() {
			// Three messages, split where no frame would be.
			for _, part := range [][]byte{want[:1], want[1:777], want[777:]} {
				if _, err := pair.from.Write(part); err != nil {
					t.Errorf("write: %v", err)
					return
				}
			}
		}()
		got := make([]byte, len(want))
		if _, err := io.ReadFull(pair.to, got); err != nil {
			t.Fatalf("read: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatal("the stream read is not the stream written")
		}
	}
}

// closedWith reads c until it fails and returns the close status the
// host sent.
func closedWith(ctx context.Context, c *websocket.Conn) websocket.StatusCode {
	for {
		if _, _, err := c.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// TestTextMessageRefused: a text message ends the connection with status
// 1003 (unsupported data), and the host's read fails.
func TestTextMessageRefused(t *testing.T) {
	ctx := testCtx(t)
	ln, url := serve(t, ws.Options{})
	c, _, err := rawDial(t, ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	hostEnd, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer hostEnd.Close()
	if err := c.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := hostEnd.Read(make([]byte, 16))
		readErr <- err
	}()
	if got := closedWith(ctx, c); got != websocket.StatusUnsupportedData {
		t.Fatalf("close status %v, want %v", got, websocket.StatusUnsupportedData)
	}
	if err := <-readErr; err == nil {
		t.Fatal("the host read a text message")
	}
}

// TestOversizedMessageRefused: a message of the read limit is read whole;
// one byte more ends the connection with status 1009 (message too big)
// before the host reads past the limit, and after it read up to it.
func TestOversizedMessageRefused(t *testing.T) {
	const limit = 4096
	ctx := testCtx(t)
	ln, url := serve(t, ws.Options{ReadLimit: limit})
	c, _, err := rawDial(t, ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	hostEnd, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer hostEnd.Close()
	if err := c.Write(ctx, websocket.MessageBinary, make([]byte, limit)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(hostEnd, make([]byte, limit)); err != nil {
		t.Fatalf("a message of the limit: %v", err)
	}
	if err := c.Write(ctx, websocket.MessageBinary, make([]byte, limit+1)); err != nil {
		t.Fatal(err)
	}
	// A bound, should the limit not hold: the client never ends its message.
	_ = hostEnd.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, hostEnd)
	if err == nil || !errors.Is(err, websocket.ErrMessageTooBig) {
		t.Fatalf("reading an oversized message: %d bytes, err %v; want ErrMessageTooBig", n, err)
	}
	if n > limit+1 { // the library reads one byte past the limit to find the end of a message
		t.Fatalf("the host read %d bytes of a message over the limit of %d", n, limit)
	}
	// What comes before the limit is read as any bytes are (section 2:
	// a frame at the start of an oversized message may be acted on
	// before the 1009).
	if n < limit {
		t.Fatalf("the host read %d bytes of a message over the limit before the error; want the first %d", n, limit)
	}
	if got := closedWith(ctx, c); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status %v, want %v", got, websocket.StatusMessageTooBig)
	}
}

// TestBacklogRefuses: while nobody accepts, the backlog fills and one
// more upgrade is answered 503 without being upgraded; an Accept makes
// room; Close closes what waits and refuses what comes. (One address
func TestBacklogRefuses(t *testing.T) {
	ctx := testCtx(t)
	ln, url := serve(t, ws.Options{Backlog: 2, PerAddress: 2})
	var waiting []*websocket.Conn
	for range 2 {
		c, _, err := rawDial(t, ctx, url, nil)
		if err != nil {
			t.Fatalf("within the backlog: %v", err)
		}
		waiting = append(waiting, c)
	}
	_, resp, err := rawDial(t, ctx, url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("beyond the backlog: err %v, response %v; want 503", err, resp)
	}
	first, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := rawDial(t, ctx, url, nil); err != nil {
		t.Fatalf("after an Accept made room: %v", err)
	}
	// Which of the two waiting connections Accept returned depends on
	// which upgrade the server queued first: close the accepted one
	// here, so each of the two ends closed, one by us and one, waiting
	// unaccepted, by the listener's Close. If Close left the waiting
	// one open, its closedWith would wait out the test's context.
	first.Close()
	ln.Close()
	for i, c := range waiting {
		if got := closedWith(ctx, c); got != websocket.StatusNormalClosure {
			t.Fatalf("waiting connection %d after Close: status %v, want %v", i, got, websocket.StatusNormalClosure)
		}
	}
	if _, resp, err := rawDial(t, ctx, url, nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("after Close: err %v, response %v; want 503", err, resp)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

// TestOrigin: a page from another site is refused unless its origin is
// allowed; the host's own page and clients that send no Origin pass.
func TestOrigin(t *testing.T) {
	ctx := testCtx(t)
	_, url := serve(t, ws.Options{})
	_, openURL := serve(t, ws.Options{OriginPatterns: []string{"game.example"}})
	self := "http" + strings.TrimSuffix(strings.TrimPrefix(url, "ws"), ws.Path)
	for _, tc := range []struct {
		url, origin string
		want        int
	}{
		{url, "", http.StatusSwitchingProtocols},
		{url, self, http.StatusSwitchingProtocols},
		{url, "https://evil.example", http.StatusForbidden},
		{url, "https://game.example", http.StatusForbidden},
		{openURL, "https://game.example", http.StatusSwitchingProtocols},
		{openURL, "https://evil.example", http.StatusForbidden},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		_, resp, _ := rawDial(t, ctx, tc.url, h)
		if resp == nil || resp.StatusCode != tc.want {
			t.Errorf("origin %q to %s: response %v, want %d", tc.origin, tc.url, resp, tc.want)
		}
	}
}

// TestServerDeadlinesCleared: a WebSocket connection outlives the HTTP
// server's read and write timeouts (the host's status server has a write
// timeout of 30 s; the host sets the connection's own deadlines), as
// net/http clears a hijacked connection's deadlines.
func TestServerDeadlinesCleared(t *testing.T) {
	ctx := testCtx(t)
	ln := ws.NewListener(ws.Options{})
	defer ln.Close()
	srv := httptest.NewUnstartedServer(ln)
	srv.Config.ReadTimeout = 50 * time.Millisecond
	srv.Config.WriteTimeout = 50 * time.Millisecond
	srv.Start()
	defer srv.Close()
	client, err := ws.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+ws.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	hostEnd, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer hostEnd.Close()
	time.Sleep(200 * time.Millisecond) // past both server timeouts
	go hostEnd.Write([]byte("ping"))
	got := make([]byte, 4)
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "ping" {
		t.Fatalf("host to client after the server's timeouts: %q, %v", got, err)
	}
	go client.Write([]byte("pong"))
	if _, err := io.ReadFull(hostEnd, got); err != nil || string(got) != "pong" {
		t.Fatalf("client to host after the server's timeouts: %q, %v", got, err)
	}
}

func TestIsURL(t *testing.T) {
	for addr, want := range map[string]bool{
		"ws://127.0.0.1:8080/ws":  true,
		"wss://host.example/ws":   true,
		"WS://HOST:1/ws":          true,
		"127.0.0.1:7777":          false,
		"host.example:7777":       false,
		"http://host.example/ws":  false,
		"[::1]:7777":              false,
		"ws:/missing-slash":       false,
		"":                        false,
		"tcp://host.example:7777": false,
		"wss://[::1]:8443/ws?x=1": true,
	} {
		if got := ws.IsURL(addr); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestReadDeadlineKeepsConnection: on the host's side a read deadline
// fails the read and leaves the connection open, as on TCP (the library
// alone would close it without a close frame): a read waiting when the
// deadline is moved into the past returns, the host can still write (its
// Server_Disconnect), read again once the deadline is lifted, and close
// with status 1000.
func TestReadDeadlineKeepsConnection(t *testing.T) {
	ctx := testCtx(t)
	ln, url := serve(t, ws.Options{})
	c, _, err := rawDial(t, ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	hostEnd, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer hostEnd.Close()
	_ = hostEnd.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := hostEnd.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	_ = hostEnd.SetReadDeadline(time.Time{})
	waiting := make(chan error, 1)
	go func() {
		_, err := hostEnd.Read(make([]byte, 8))
		waiting <- err
	}()
	time.Sleep(20 * time.Millisecond)
	_ = hostEnd.SetReadDeadline(time.Now().Add(-time.Second))
	if err := <-waiting; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a waiting read when the deadline passed: %v, want os.ErrDeadlineExceeded", err)
	}
	if _, err := hostEnd.Write([]byte("late")); err != nil {
		t.Fatalf("write after a read deadline: %v", err)
	}
	if _, b, err := c.Read(ctx); err != nil || string(b) != "late" {
		t.Fatalf("the client read %q, %v; want the host's write", b, err)
	}
	_ = hostEnd.SetReadDeadline(time.Time{})
	if err := c.Write(ctx, websocket.MessageBinary, []byte("more")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if _, err := io.ReadFull(hostEnd, got); err != nil || string(got) != "more" {
		t.Fatalf("read after the deadline was lifted: %q, %v", got, err)
	}
	hostEnd.Close()
	if got := closedWith(ctx, c); got != websocket.StatusNormalClosure {
		t.Fatalf("close status %v, want %v", got, websocket.StatusNormalClosure)
	}
}

// may fill it here: its share is the whole backlog.)
// dialFrom opens a WebSocket to url from the loopback address from and
// returns the HTTP status of the upgrade's answer.
func dialFrom(t *testing.T, ctx context.Context, url, from string) int {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	t.Cleanup(client.CloseIdleConnections)
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: client})
	if err == nil {
		t.Cleanup(func() { c.CloseNow() })
	}
	if resp == nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	return resp.StatusCode
}

// TestBacklogShares: 48 upgrades from one address, which the host does
// not accept, hold only that address's share of the default backlog, and
// its network (an IPv4 /24) only its own share: another address, in the
// same /24 while the /24 has room, or in another network, still gets
// through. An Accept gives the address its slot back.
func TestBacklogShares(t *testing.T) {
	ctx := testCtx(t)
	ln, url := serve(t, ws.Options{})
	count := func(from string, n int) int { return upgrades(t, ctx, url, from, n) }
	if got := count("127.0.0.5", 48); got != ws.DefaultBacklog/4 {
		t.Fatalf("48 upgrades from one address: %d upgraded, want its share %d", got, ws.DefaultBacklog/4)
	}
	if got := count("127.0.1.1", 1); got != 1 {
		t.Fatal("another network's address was refused while one address flooded")
	}
	if got := count("127.0.0.6", 48); got != ws.DefaultBacklog/4 {
		t.Fatalf("a second address of the /24: %d upgraded, want %d", got, ws.DefaultBacklog/4)
	}
	if got := count("127.0.0.7", 1); got != 0 {
		t.Fatalf("a third address of a /24 at its share of %d: %d upgraded", ws.DefaultBacklog/2, got)
	}
	if got := count("127.0.2.1", 1); got != 1 {
		t.Fatal("another network's address was refused while a /24 was at its share")
	}
	if _, err := ln.Accept(); err != nil {
		t.Fatal(err)
	}
	// The first upgrade queued was 127.0.0.5's: its address and network
	// have a slot again.
	if got := count("127.0.0.5", 2); got != 1 {
		t.Fatalf("after an Accept, the first address got %d upgrades, want 1", got)
	}
}

// TestBacklogReserve: networks that already hold upgrades fill at most
// three quarters of the backlog, each within its share, so a player from
// a network holding none still gets in while they flood; once every
// network waits, the backlog is full.
func TestBacklogReserve(t *testing.T) {
	ctx := testCtx(t)
	_, url := serve(t, ws.Options{})
	count := func(from string, n int) int { return upgrades(t, ctx, url, from, n) }
	// Two networks flood from two addresses each, every address within
	// its share of 4 and every network within its 8.
	flood := 0
	for _, a := range []string{"127.0.10.1", "127.0.10.2", "127.0.11.1", "127.0.11.2"} {
		flood += count(a, 8)
	}
	if want := ws.DefaultBacklog * 3 / 4; flood != want {
		t.Fatalf("two flooding networks got %d upgrades, want the backlog less its reserve, %d", flood, want)
	}
	if got := count("127.0.99.1", 1); got != 1 {
		t.Fatal("a player from a network holding none was refused while two networks flooded")
	}
	if got := count("127.0.99.2", 1); got != 0 {
		t.Fatal("a second upgrade from the player's network took the reserve")
	}
	for i, a := range []string{"127.0.98.1", "127.0.97.1", "127.0.96.1"} {
		if got := count(a, 1); got != 1 {
			t.Fatalf("new network %d of the reserve refused", i+2)
		}
	}
	if got := count("127.0.95.1", 1); got != 0 {
		t.Fatal("an upgrade past the full backlog")
	}
}

// upgrades asks for n upgrades from the address from and counts those
// upgraded; any answer but 101 or 503 fails the test.
func upgrades(t *testing.T, ctx context.Context, url, from string, n int) (upgraded int) {
	t.Helper()
	for range n {
		switch code := dialFrom(t, ctx, url, from); code {
		case http.StatusSwitchingProtocols:
			upgraded++
		case http.StatusServiceUnavailable:
		default:
			t.Fatalf("from %s: status %d", from, code)
		}
	}
	return upgraded
}

// statusCounter counts the answers of h by status code.
type statusCounter struct {
	h    http.Handler
	mu   sync.Mutex
	seen map[int]int
}

func (s *statusCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w}
	s.h.ServeHTTP(rec, r)
	s.mu.Lock()
	s.seen[rec.code]++
	s.mu.Unlock()
}

func (s *statusCounter) count(code int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[code]
}

// statusRecorder notes the status a handler answers; it passes Hijack on
// for the upgrade (which answers 101 itself).
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if r.code == 0 {
		r.code = http.StatusSwitchingProtocols
	}
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

// TestDialRetryBusy: Dial reports a 503 as a busy StatusError with the
// host's Retry-After; DialRetry waits it out and gets in once the host
// makes room, and gives up at once when the wait would outlast its
// context. Any other status is a StatusError that is not busy.
func TestDialRetryBusy(t *testing.T) {
	ctx := testCtx(t)
	ln := ws.NewListener(ws.Options{Backlog: 1})
	defer ln.Close()
	mux := http.NewServeMux()
	mux.Handle("GET "+ws.Path, ln)
	counter := &statusCounter{h: mux, seen: map[int]int{}}
	srv := httptest.NewServer(counter)
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + ws.Path
	first, err := ws.Dial(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = ws.Dial(ctx, url)
	var se *ws.StatusError
	if !errors.As(err, &se) || !se.Busy() || se.RetryAfter != time.Second {
		t.Fatalf("a full backlog: %v, want a busy StatusError asking for 1s", err)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	before := counter.count(http.StatusServiceUnavailable)
	if _, err := ws.DialRetry(short, url); !errors.As(err, &se) || !se.Busy() {
		t.Fatalf("DialRetry with less time than the host asks: %v, want the busy StatusError", err)
	}
	if n := counter.count(http.StatusServiceUnavailable) - before; n != 1 {
		t.Fatalf("DialRetry with less time than the host asks tried %d times, want 1", n)
	}
	got := make(chan error, 1)
	go func() {
		c, err := ws.DialRetry(ctx, url)
		got <- err
		if err == nil {
			c.Close() // waits for the host's closing answer, which does not come
		}
	}()
	for counter.count(http.StatusServiceUnavailable) == before+1 {
		time.Sleep(10 * time.Millisecond) // until DialRetry has been turned away
	}
	hostEnd, err := ln.Accept() // makes room
	if err != nil {
		t.Fatal(err)
	}
	defer hostEnd.Close()
	if err := <-got; err != nil {
		t.Fatalf("DialRetry once the host made room: %v", err)
	}
	if _, err := ws.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/elsewhere"); !errors.As(err, &se) || se.Busy() || se.Code != http.StatusNotFound {
		t.Fatalf("a path nothing serves: %v, want a StatusError 404", err)
	}
}
