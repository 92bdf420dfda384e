package coord

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/tlsid"
)

// TestSignalRelay: blobs go from a joiner to the host and back through
// the coordinator, and a close reaches the other side.
// TestSignalWithoutHandler: a host with no ICE path closes an attempt at
// once, and the joiner hears so.
// listen serves accepted connections with a greeting, over TLS when cert
// is given.
func listen(t *testing.T, greeting string, cert *tls.Certificate) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if cert != nil {
				c = tls.Server(c, tlsid.ServerConfig(*cert))
			}
			go func() { io.WriteString(c, greeting); time.Sleep(time.Second); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func TestRace(t *testing.T) {
	good := listen(t, "host", nil)
	stall := "192.0.2.1:30502" // documentation range: a dial hangs until cancelled
	hang := func(ctx context.Context, addr string) (net.Conn, error) {
		if addr == stall {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	conn, cand, err := Race(ctx, []Candidate{{stall, PathLAN}, {testkit.DeadAddr(t), PathLAN}, {good, PathDirect}}, 200*time.Millisecond, hang)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// The stalled LAN address does not hold the direct one back beyond
	// its stagger (the refused one fails at once and starts the next).
	if cand.Addr != good || cand.Path != PathDirect || time.Since(start) > 2*time.Second {
		t.Fatalf("won by %+v after %v", cand, time.Since(start))
	}
	short, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	_, _, err = Race(short, []Candidate{{stall, PathLAN}, {testkit.DeadAddr(t), PathDirect}}, 50*time.Millisecond, hang)
	var re *RaceError
	if !errors.As(err, &re) || len(re.Tried) != 2 || !strings.Contains(err.Error(), "direct") {
		t.Fatalf("every candidate lost: %v", err)
	}
	if _, _, err := Race(ctx, nil, Stagger, hang); err == nil {
		t.Fatal("a race without candidates was won")
	}
}

// TestRaceAddrBound: each address's dial has its own bound, AddrTimeout,
// well inside a longer attempt's.
func TestRaceAddrBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var left time.Duration
	_, _, err := Race(ctx, []Candidate{{"192.0.2.1:30502", PathLAN}}, Stagger, func(dctx context.Context, _ string) (net.Conn, error) {
		d, ok := dctx.Deadline()
		if ok {
			left = time.Until(d)
		}
		return nil, errors.New("refused")
	})
	if err == nil || left <= 0 || left > AddrTimeout {
		t.Fatalf("the dial's bound was %v (%v), want at most %v", left, err, AddrTimeout)
	}
}

// hostileCoordinator answers every lookup with reply.
func hostileCoordinator(t *testing.T, reply LookupReply) *Coordinator {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(reply)
	}))
	t.Cleanup(ts.Close)
	c, err := ParseURL(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHostileCoordinator: a coordinator that names an impostor cannot
// get a joiner that pinned the real host to accept it, whether it gives
// the impostor's fingerprint, none, or the real one with the impostor's
// address.
func TestHostileCoordinator(t *testing.T) {
	real, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fake, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pinned := tlsid.Fingerprint(real)
	impostor := listen(t, "impostor", &fake)
	code := Code("+K7QF2MX")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name string
		fp   string
	}{
		{"the impostor's fingerprint", tlsid.Fingerprint(fake)},
		{"no TLS", ""},
	} {
		c := hostileCoordinator(t, LookupReply{Code: code, Reach: Reach{Addrs: []string{impostor}, Fingerprint: tc.fp}})
		r, err := c.Lookup(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		var pe *PinError
		if _, err := r.Pin(pinned); !errors.As(err, &pe) || pe.Pinned != pinned || pe.Got != tc.fp {
			t.Errorf("%s: Pin gave %v, want a PinError", tc.name, err)
		}
	}
	// The real fingerprint and the impostor's address: TLS refuses it.
	c := hostileCoordinator(t, LookupReply{Code: code, Reach: Reach{Addrs: []string{impostor}, Fingerprint: pinned}})
	r, err := c.Lookup(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Pin(pinned)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := tlsid.ClientConfig(string(code)+":invite", want, nil)
	_, _, err = c.Connect(ctx, r, ConnectOptions{NoReport: true, Dial: func(ctx context.Context, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		return tc, nil
	}})
	var me *tlsid.MismatchError
	if !errors.As(err, &me) || me.Got != tlsid.Fingerprint(fake) {
		t.Fatalf("connect to the impostor: %v, want a MismatchError", err)
	}
	// Without a pin of its own, the joiner takes the coordinator's word.
	if fp, err := r.Pin(""); err != nil || fp != pinned {
		t.Fatalf("Pin without a local pin: %q, %v", fp, err)
	}
}

// TestConnectFallbackAndReport: when no address answers, the fallback
// gets a signalling attempt to the host; the outcome is counted.
// TestInvitePage: the invite link's page points to the host's browser
// player; an unknown code is a 404.
