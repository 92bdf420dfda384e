package rawconn

import (
	"bufio"
	"net"
	"testing"

	"github.com/lockhost/lockhost/wire"
)

// TestNextAnswersClockAndKeepalive: Next answers a clock round and a
// keepalive itself and returns the first other packet.
func TestNextAnswersClockAndKeepalive(t *testing.T) {
	host, client := net.Pipe()
	defer host.Close()
	c := New(client)
	defer c.Close()
	go func() {
		for _, p := range []wire.Packet{&wire.ServerClock{Nonce: 7}, &wire.ServerKeepalive{Seq: 3}, &wire.ServerNotice{Text: "hi"}} {
			if _, err := host.Write(wire.MustMarshal(p)); err != nil {
				return
			}
		}
	}()
	answers := make(chan wire.Packet, 2)
	go func() {
		fr := wire.NewFrameReader(bufio.NewReader(host), wire.DefaultMaxFrame)
		for range 2 {
			id, body, err := fr.Next()
			if err != nil {
				return
			}
			p, _ := wire.Decode(id, body)
			answers <- p
		}
	}()
	p, err := c.Next()
	if n, ok := p.(*wire.ServerNotice); err != nil || !ok || n.Text != "hi" {
		t.Fatalf("Next = %#v, %v; want the notice", p, err)
	}
	if a := (<-answers).(*wire.ClientClock); a.Nonce != 7 {
		t.Fatalf("clock answer %+v", a)
	}
	if a := (<-answers).(*wire.ClientKeepalive); a.Seq != 3 {
		t.Fatalf("keepalive answer %+v", a)
	}
}
