package host

import (
	"net"
	"testing"
)

// fakeConn is a connection from remote that may know its path and say
// it is relayed.
type fakeConn struct {
	net.Conn
	remote  net.Addr
	path    string
	relayed bool
}

func (c fakeConn) RemoteAddr() net.Addr { return c.remote }

type pathedConn struct{ fakeConn }

func (c pathedConn) Path() string  { return c.path }
func (c pathedConn) Relayed() bool { return c.relayed }

// TestConnPathAndLimitKeys: a connection's path on the status page, and
// the keys its per-address limits count it under: a relayed one per
// relay allocation, under the relay's network.
func TestConnPathAndLimitKeys(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	udp := func(s string) net.Addr { a, _ := net.ResolveUDPAddr("udp", s); return a }
	for _, c := range []struct {
		name               string
		nc                 net.Conn
		path, key, network string
	}{
		{"LAN over TCP", fakeConn{remote: tcp("192.168.1.20:5000")}, "lan", "192.168.1.20", "192.168.1.0/24"},
		{"loopback", fakeConn{remote: tcp("127.0.0.1:5000")}, "lan", "127.0.0.1", "127.0.0.0/24"},
		{"internet over TCP", fakeConn{remote: tcp("203.0.113.7:5000")}, "direct", "203.0.113.7", "203.0.113.0/24"},
		{"punched", pathedConn{fakeConn{remote: udp("198.51.100.9:40000"), path: "punched"}}, "punched", "198.51.100.9", "198.51.100.0/24"},
		{"relayed A", pathedConn{fakeConn{remote: udp("203.0.113.50:49152"), path: "turn", relayed: true}}, "turn", "relay 203.0.113.50:49152", "203.0.113.0/24"},
		{"relayed B", pathedConn{fakeConn{remote: udp("203.0.113.50:49153"), path: "turn-udp", relayed: true}}, "turn-udp", "relay 203.0.113.50:49153", "203.0.113.0/24"},
		{"host relayed, joiner not", pathedConn{fakeConn{remote: udp("198.51.100.9:40000"), path: "turn-udp"}}, "turn-udp", "198.51.100.9", "198.51.100.0/24"},
	} {
		key, network := limitKeys(c.nc)
		if p := connPath(c.nc); p != c.path || key != c.key || network != c.network {
			t.Errorf("%s: path %q, keys %q %q; want %q, %q %q", c.name, p, key, network, c.path, c.key, c.network)
		}
	}
}
