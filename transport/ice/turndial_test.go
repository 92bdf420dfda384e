package ice

import (
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// TestTURNDialer: the TCP TURN URLs get the dialer, turns: ones with TLS
// to the name in the URL; none when no URL is over TCP.
func TestTURNDialer(t *testing.T) {
	if d := newTURNDialer([]Server{{URLs: []string{"stun:s.example:3478", "turn:s.example:3478?transport=udp"}}}); d != nil {
		t.Fatalf("a dialer for UDP URLs only: %+v", d)
	}
	d := newTURNDialer([]Server{{URLs: []string{"turn:s.example:3478?transport=tcp", "turns:t.example:443?transport=tcp", "turns:u.example"}}})
	if d == nil {
		t.Fatal("no dialer for TCP URLs")
	}
	want := map[string]string{"t.example:443": "t.example", "u.example:5349": "u.example"}
	if len(d.tlsName) != len(want) {
		t.Fatalf("TLS names %v, want %v", d.tlsName, want)
	}
	for k, v := range want {
		if d.tlsName[k] != v {
			t.Fatalf("TLS names %v, want %v", d.tlsName, want)
		}
	}
}

// TestTURNDialerBounded: a server that takes the connection and never
// answers the TLS handshake fails the dial within TURNDialTimeout; a
// plain turn: address is handed back as TCP.
func TestTURNDialerBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	addr := ln.Addr().String()
	plain := newTURNDialer([]Server{{URLs: []string{"turn:" + addr + "?transport=tcp"}}})
	c, err := plain.Dial("tcp4", addr)
	if err != nil {
		t.Fatalf("plain dial: %v", err)
	}
	if _, ok := c.(*tls.Conn); ok {
		t.Fatal("a turn: URL was dialled with TLS")
	}
	c.Close()
	secure := newTURNDialer([]Server{{URLs: []string{"turns:" + addr + "?transport=tcp"}}})
	t0 := time.Now()
	c, err = secure.Dial("tcp4", addr)
	took := time.Since(t0)
	if err == nil {
		c.Close()
		t.Fatal("a TLS dial to a silent server succeeded")
	}
	if took < TURNDialTimeout/2 || took > TURNDialTimeout+2*time.Second {
		t.Fatalf("the TLS dial to a silent server failed after %v (%v), want about %v", took, err, TURNDialTimeout)
	}
}
