package ice

import (
	"crypto/tls"
	"net"
	"strconv"
	"time"

	"github.com/pion/stun/v4"
)

// TURNDialTimeout bounds connecting to a TURN server over TCP, the TLS
// handshake included (turns:). A network that drops the connection's
// packets (a firewall that lets only port 443 out) would otherwise hold
// the attempt, and its close, until the kernel gives up, minutes later.
const TURNDialTimeout = 3 * time.Second

// turnDialer connects to TURN servers over TCP within TURNDialTimeout,
// and speaks TLS itself to those of a turns: URL: the ICE agent hands a
// proxy dialer the TCP URLs of both kinds and adds no TLS on that path.
type turnDialer struct {
	// tlsName maps the host:port of each turns: URL to the name its
	// certificate must hold.
	tlsName map[string]string
}

// newTURNDialer returns the dialer for servers' TCP TURN URLs, or nil
// when there are none. A host:port given both as turn: and as turns: is
// dialled with TLS.
func newTURNDialer(servers []Server) *turnDialer {
	d := &turnDialer{tlsName: map[string]string{}}
	tcp := false
	for _, s := range servers {
		for _, raw := range s.URLs {
			u, err := stun.ParseURI(raw)
			if err != nil || (u.Scheme != stun.SchemeTypeTURN && u.Scheme != stun.SchemeTypeTURNS) {
				continue
			}
			if u.Scheme == stun.SchemeTypeTURNS {
				d.tlsName[net.JoinHostPort(u.Host, strconv.Itoa(u.Port))] = u.Host
				tcp = true
			} else if u.Proto == stun.ProtoTypeTCP {
				tcp = true
			}
		}
	}
	if !tcp {
		return nil
	}
	return d
}

// Dial connects to the TURN server at addr (host:port, as in its URL).
func (d *turnDialer) Dial(network, addr string) (net.Conn, error) {
	deadline := time.Now().Add(TURNDialTimeout)
	c, err := (&net.Dialer{Deadline: deadline}).Dial(network, addr)
	if err != nil {
		return nil, err
	}
	name, ok := d.tlsName[addr]
	if !ok {
		return c, nil
	}
	tc := tls.Client(c, &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12})
	_ = tc.SetDeadline(deadline)
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, err
	}
	_ = tc.SetDeadline(time.Time{})
	return tc, nil
}
