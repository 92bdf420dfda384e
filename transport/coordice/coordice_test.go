package coordice

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/turntest"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/coord/coordserver"
	"github.com/lockhost/lockhost/transport/ice"
)

// lab is a coordinator on loopback and a host registered with it whose
// only registered address refuses connections, answering signalling
// attempts with an Answerer.
type lab struct {
	co     *coord.Coordinator
	code   coord.Code
	ans    *Answerer
	accept chan net.Conn
}

func newLab(t *testing.T, scfg coordserver.ServerConfig, hostICE ice.Config) *lab {
	t.Helper()
	srv, err := coordserver.NewServer(scfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(srv)
	t.Cleanup(ts.Close)
	co, err := coord.ParseURL(ts.URL + "#" + tlsid.FingerprintDER(ts.Certificate().Raw))
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{co: co, ans: NewAnswerer(hostICE, nil), accept: make(chan net.Conn, 4)}
	ln := l.ans.Listener()
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accept <- c
		}
	}()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	secret, _ := coord.NewSecret()
	registered := make(chan coord.Code, 4)
	coord.Register(ctx, coord.HostConfig{Coordinator: co, Secret: secret, OnSignal: l.ans.Answer,
		Reach:        func() coord.Reach { return coord.Reach{LAN: []string{deadAddr}} },
		OnRegistered: func(c coord.Code, _ *coord.TURN) { registered <- c }})
	select {
	case l.code = <-registered:
	case <-time.After(10 * time.Second):
		t.Fatal("the host did not register in 10 s")
	}
	return l
}

// join reaches the lab's host by its code, as the join tool does, and
// checks that bytes cross both ways.
func (l *lab) join(t *testing.T, joinICE ice.Config) (net.Conn, net.Conn, string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	r, err := l.co.Lookup(ctx, l.code)
	if err != nil {
		t.Fatal(err)
	}
	c, path, err := l.co.Connect(ctx, r, coord.ConnectOptions{Fallback: Fallback(joinICE), NoReport: true})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	took := time.Since(start)
	t.Cleanup(func() { c.Close() })
	var hc net.Conn
	select {
	case hc = <-l.accept:
	case <-time.After(10 * time.Second):
		t.Fatal("the host accepted nothing")
	}
	t.Cleanup(func() { hc.Close() })
	go c.Write([]byte("hello host"))
	buf := make([]byte, 10)
	hc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(hc, buf); err != nil || !bytes.Equal(buf, []byte("hello host")) {
		t.Fatalf("the host read %q, %v", buf, err)
	}
	return c, hc, path, took
}

// TestDirectOverICE: with the host's registered address refusing, a
// joiner reaches it through the coordinator's signalling, directly over
// loopback host candidates; both ends name the path.
func TestDirectOverICE(t *testing.T) {
	l := newLab(t, coordserver.ServerConfig{}, ice.Config{LoopbackOnly: true})
	c, hc, path, took := l.join(t, ice.Config{LoopbackOnly: true})
	t.Logf("connected over ICE (%s) in %v", path, took.Round(time.Millisecond))
	if path != "direct" || c.(*Conn).Path() != "direct" || hc.(*Conn).Path() != "direct" || hc.(*Conn).Relayed() {
		t.Fatalf("path %q, the host's %q (relayed %v)", path, hc.(*Conn).Path(), hc.(*Conn).Relayed())
	}
	waitCount(t, l.ans, "direct", 1)
}

// TestRelayedOverICE: with coturn and the coordinator's short-lived
// credentials, a joiner and a host that both use only relay candidates
// connect through TURN over UDP, or over TCP when that is the only
// transport the coordinator names, and the host sees the joiner relayed.
func TestRelayedOverICE(t *testing.T) {
	ts := turntest.Start(t)
	for _, transport := range []string{"udp", "tcp"} {
		t.Run(transport, func(t *testing.T) {
			l := newLab(t, coordserver.ServerConfig{TURNURLs: []string{ts.URL(transport)}, TURNSecret: []byte(turntest.Secret)},
				ice.Config{LoopbackOnly: true, RelayOnly: true})
			c, hc, path, took := l.join(t, ice.Config{LoopbackOnly: true, RelayOnly: true})
			t.Logf("connected over ICE (%s) in %v", path, took.Round(time.Millisecond))
			want := "turn-" + transport
			if path != want || hc.(*Conn).Path() != want || !hc.(*Conn).Relayed() {
				t.Fatalf("path %q, the host's %q (relayed %v), want %s\n%s", path, hc.(*Conn).Path(), hc.(*Conn).Relayed(), want, ts.Log())
			}
			if _, ok := c.(*Conn); !ok {
				t.Fatalf("the joiner's connection is a %T", c)
			}
			waitCount(t, l.ans, want, 1)
		})
	}
}

// lookup looks the lab's host up, with a context of 20 s that ends with
// the test at the latest.
func (l *lab) lookup(t *testing.T) (context.Context, coord.LookupReply) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	r, err := l.co.Lookup(ctx, l.code)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, r
}

// TestHeadStart: an address that swallows the connection (a dial that
// hangs) does not hold the ICE path back beyond its head start.
func TestHeadStart(t *testing.T) {
	l := newLab(t, coordserver.ServerConfig{}, ice.Config{LoopbackOnly: true})
	ctx, r := l.lookup(t)
	r.LAN = []string{"192.0.2.1:30502"} // documentation range; the dial below hangs
	hang := func(ctx context.Context, _ string) (net.Conn, error) { <-ctx.Done(); return nil, ctx.Err() }
	start := time.Now()
	c, path, err := l.co.Connect(ctx, r, coord.ConnectOptions{Dial: hang, HeadStart: 200 * time.Millisecond,
		Fallback: Fallback(ice.Config{LoopbackOnly: true}), NoReport: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	took := time.Since(start)
	t.Logf("connected over %s in %v beside an address that hangs", path, took.Round(time.Millisecond))
	if path != "direct" || took < 200*time.Millisecond || took > 10*time.Second {
		t.Fatalf("path %q after %v, want direct after the 200 ms head start", path, took)
	}
}

// TestRelayOnlyWithoutTURN: asking for a relayed path from a coordinator
// that offers no TURN server fails at once with a sentence saying so.
func TestRelayOnlyWithoutTURN(t *testing.T) {
	l := newLab(t, coordserver.ServerConfig{}, ice.Config{LoopbackOnly: true})
	ctx, r := l.lookup(t)
	_, _, err := l.co.Connect(ctx, r, coord.ConnectOptions{Fallback: Fallback(ice.Config{LoopbackOnly: true, RelayOnly: true}), NoReport: true})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("offers no TURN server")) {
		t.Fatalf("relay only without TURN: %v", err)
	}
}

// TestServers: each turn: URL's address serves STUN as well; turns: does
// not.
func TestServers(t *testing.T) {
	got := Servers(&coord.TURN{URLs: []string{"turn:a.example:3478?transport=udp", "turn:a.example:3478?transport=tcp",
		"turns:a.example:443?transport=tcp"}, Username: "1:x", Credential: "c"})
	if len(got) != 2 || len(got[0].URLs) != 3 || got[0].Username != "1:x" || len(got[1].URLs) != 1 || got[1].URLs[0] != "stun:a.example:3478" {
		t.Fatalf("%+v", got)
	}
	if Servers(nil) != nil {
		t.Fatal("no TURN, yet servers")
	}
}

// TestOfferFitsRelay: a real offer with every kind of candidate this
// machine gathers (host candidates on every interface, server-reflexive
// and relay ones over UDP and TCP from coturn) fits in a blob the
// coordinator relays, with room to spare.
func TestOfferFitsRelay(t *testing.T) {
	ts := turntest.Start(t)
	cfg, _ := config(ice.Config{Logger: slog.New(slog.DiscardHandler), Timeout: 5 * time.Second},
		&coord.TURN{URLs: ts.URLs(), Username: "9999999999:x", Credential: "x"})
	cfg.MaxBlob = 1 << 20
	a, b := ice.Pipe()
	defer a.Close()
	go ice.Dial(context.Background(), a, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offer, err := b.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("an offer with every candidate: %d bytes (%d candidates); the coordinator relays %d", len(offer),
		bytes.Count(offer, []byte("a=candidate:")), coord.MaxBlob)
	if len(offer) > coord.MaxBlob/2 {
		t.Fatalf("an offer of %d bytes leaves less than half of coord.MaxBlob (%d) to spare", len(offer), coord.MaxBlob)
	}
}

// waitCount waits for the Answerer to count n attempts of outcome.
func waitCount(t *testing.T, a *Answerer, outcome string, n uint64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); a.Counts()[outcome] != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the answerer counted %v, want %d %s", a.Counts(), n, outcome)
		}
	}
}

// TestBlobFitsMessage: the largest blob, base64 in a signal message with
// the longest attempt ID, fits in one coordinator message, so the relay
// carries every blob either side may send.
func TestBlobFitsMessage(t *testing.T) {
	m := coord.Msg{Type: coord.TypeSignal, Attempt: string(bytes.Repeat([]byte("a"), coord.MaxAttemptID)), Blob: bytes.Repeat([]byte{0xff}, coord.MaxBlob)}
	if n := len(coord.EncodeMsg(m)); n > coord.MaxMessage {
		t.Fatalf("a signal with the largest blob is %d bytes, more than a message's %d", n, coord.MaxMessage)
	}
	if a := NewAnswerer(ice.Config{}, nil); a.base.MaxBlob != coord.MaxBlob {
		t.Fatalf("the host's ICE side takes blobs of %d bytes, the relay carries %d", a.base.MaxBlob, coord.MaxBlob)
	}
	if cfg, _ := config(ice.Config{}, nil); cfg.MaxBlob != coord.MaxBlob {
		t.Fatalf("the joiner's ICE side takes blobs of %d bytes, the relay carries %d", cfg.MaxBlob, coord.MaxBlob)
	}
}
