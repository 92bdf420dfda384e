package turnserver_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/transport/coord"
	"github.com/lockhost/lockhost/transport/coord/turnserver"
	"github.com/lockhost/lockhost/transport/ice"
)

var secret = []byte("embedded-test-secret")

// startLoopback starts an embedded server on a free loopback port until
// the test ends, relaying to loopback peers if allowLoopback.
func startLoopback(t *testing.T, allowLoopback bool) *turnserver.Server {
	t.Helper()
	s, err := turnserver.Start(turnserver.Config{Addr: "127.0.0.1:0", Secret: secret, AllowPrivatePeers: allowLoopback})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// connect dials relay-only through url with the credential and accepts
// on loopback, and returns the joiner's connection and both paths.
func connect(t *testing.T, url, user, pass string, timeout time.Duration) (net.Conn, net.Conn, ice.Path, ice.Path, error) {
	t.Helper()
	host := ice.Config{LoopbackOnly: true, Timeout: timeout}
	joiner := host
	joiner.RelayOnly = true
	joiner.Servers = []ice.Server{{URLs: []string{url}, Username: user, Credential: pass}}
	js, hs := ice.Pipe()
	type res struct {
		c    net.Conn
		path ice.Path
		err  error
	}
	hc := make(chan res, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		c, p, err := ice.Accept(ctx, hs, host)
		hc <- res{c, p, err}
	}()
	jc, jp, err := ice.Dial(ctx, js, joiner)
	if err != nil {
		hs.Close()
		return nil, nil, "", "", err
	}
	r := <-hc
	if r.err != nil {
		jc.Close()
		return nil, nil, "", "", r.err
	}
	t.Cleanup(func() { jc.Close(); r.c.Close() })
	return jc, r.c, jp, r.path, nil
}

// TestRelayed: a joiner that may only use relay candidates connects
// through the embedded server over UDP and over TCP with the credentials
// the coordinator issues, names its path turn-udp or turn-tcp, and bytes
// cross both ways; the relay holds an allocation meanwhile.
func TestRelayed(t *testing.T) {
	s := startLoopback(t, true)
	urls := s.URLs()
	for i, tc := range []struct {
		url  string
		want ice.Path
	}{{urls[0], ice.PathTURNUDP}, {urls[1], ice.PathTURNTCP}} {
		t.Run(string(tc.want), func(t *testing.T) {
			user, pass := coord.TURNCredentials(secret, "joiner", time.Now().Add(time.Hour))
			j, h, jp, hp, err := connect(t, tc.url, user, pass, 15*time.Second)
			if err != nil {
				t.Fatalf("relay-only through %s: %v", tc.url, err)
			}
			if jp != tc.want || hp != ice.PathTURN {
				t.Fatalf("paths: joiner %q, host %q; want %q and %q", jp, hp, tc.want, ice.PathTURN)
			}
			if n := s.Allocations(); n < 1 {
				t.Fatalf("%d allocations on the relay while connected through it", n)
			}
			for k, pair := range [][2]net.Conn{{j, h}, {h, j}} {
				msg := []byte(strings.Repeat("relayed ", 100) + string(rune('a'+i*2+k)))
				go pair[0].Write(msg)
				got := make([]byte, len(msg))
				pair[1].SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := io.ReadFull(pair[1], got); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("direction %d: read %v; bytes equal %v", k, err, bytes.Equal(got, msg))
				}
			}
		})
	}
}

// TestWrongCredential: a credential that is not the HMAC of the username
// under the secret, or one that has expired, gets no relay.
func TestWrongCredential(t *testing.T) {
	s := startLoopback(t, true)
	good, _ := coord.TURNCredentials(secret, "joiner", time.Now().Add(time.Hour))
	expired, expiredPass := coord.TURNCredentials(secret, "joiner", time.Now().Add(-time.Minute))
	_, otherPass := coord.TURNCredentials([]byte("another secret"), "joiner", time.Now().Add(time.Hour))
	for name, cred := range map[string][2]string{
		"other secret": {good, otherPass},
		"expired":      {expired, expiredPass},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, _, _, err := connect(t, s.URLs()[0], cred[0], cred[1], 3*time.Second); err == nil {
				t.Fatal("connected relay-only with a credential the relay must refuse")
			}
		})
	}
}

// TestPrivatePeersRefused: by default a relay does not reach a loopback
// peer, so a relay-only joiner on one machine does not connect even with
// a good credential.
func TestPrivatePeersRefused(t *testing.T) {
	s := startLoopback(t, false)
	user, pass := coord.TURNCredentials(secret, "joiner", time.Now().Add(time.Hour))
	if _, _, _, _, err := connect(t, s.URLs()[0], user, pass, 3*time.Second); err == nil {
		t.Fatal("a relay reached a loopback peer with private peers not allowed")
	}
}

// TestValidate: the configurations refused, each with its reason.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  turnserver.Config
		want string // "" for none
	}{
		{turnserver.Config{Addr: "127.0.0.1:3478", Secret: secret}, ""},
		{turnserver.Config{Addr: ":3478", Secret: secret, RelayIP: net.ParseIP("198.51.100.7")}, ""},
		{turnserver.Config{Addr: ":3478", Secret: secret}, "relay address"},
		{turnserver.Config{Addr: "0.0.0.0:3478", Secret: secret}, "relay address"},
		{turnserver.Config{Addr: "127.0.0.1:3478"}, "secret"},
		{turnserver.Config{Addr: "turn.example.org:3478", Secret: secret}, "not a name"},
		{turnserver.Config{Addr: "3478", Secret: secret}, "listen address"},
		{turnserver.Config{Addr: "127.0.0.1:99999", Secret: secret}, "port"},
		{turnserver.Config{Addr: "127.0.0.1:3478", Secret: secret, MaxAllocations: -1}, "negative"},
	} {
		err := tc.cfg.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want one saying %q", tc.cfg, err, tc.want)
		}
	}
}

// TestMaxAllocations: with room for one relay, a second joiner gets none
// while the first holds it, and so does not connect relay-only.
func TestMaxAllocations(t *testing.T) {
	s, err := turnserver.Start(turnserver.Config{Addr: "127.0.0.1:0", Secret: secret, AllowPrivatePeers: true, MaxAllocations: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	user, pass := coord.TURNCredentials(secret, "joiner", time.Now().Add(time.Hour))
	if _, _, _, _, err := connect(t, s.URLs()[0], user, pass, 15*time.Second); err != nil {
		t.Fatalf("the first joiner: %v", err)
	}
	if n := s.Allocations(); n != 1 {
		t.Fatalf("%d allocations with the first joiner connected, want 1", n)
	}
	if _, _, _, _, err := connect(t, s.URLs()[0], user, pass, 3*time.Second); err == nil {
		t.Fatal("a second joiner connected relay-only past a quota of one relay")
	}
}
