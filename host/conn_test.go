package host

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestSlowConsumerDropped: a client that stops reading is dropped once
// more than the byte cap of small packets waits for it, instead of the
// host buffering without end or blocking its caller.
func TestSlowConsumerDropped(t *testing.T) {
	// In a synctest bubble the clock moves only when every goroutine in it
	// is blocked: a send that waited on the stuck pipe would let the
	// clock run to the write timeout, so the time a send takes is exact.
	synctest.Test(t, slowConsumerDropped)
}

func slowConsumerDropped(t *testing.T) {
	hostEnd, clientEnd := net.Pipe() // no buffer at all: a client that does not read blocks every write
	defer clientEnd.Close()
	c := newConn(hostEnd, 1024, 2000, 3*time.Second, testkit.Quiet())
	frame := wire.MustMarshal(&wire.ServerNotice{Text: strings.Repeat("x", 90)})
	sent := 0
	start := time.Now()
	for i := 0; i < 100; i++ {
		if !c.send(frame) {
			break
		}
		sent++
	}
	// No time at all passed: a send never waits on the socket.
	if d := time.Since(start); d != 0 {
		t.Fatalf("sending to a stuck client blocked for %v", d)
	}
	if sent*len(frame) > 2000+len(frame) || sent == 0 {
		t.Fatalf("%d frames of %d bytes accepted for a cap of 2000 bytes", sent, len(frame))
	}
	select {
	case <-c.closing:
	default:
		t.Fatal("the connection is not closing")
	}
	if !strings.Contains(c.why, "bytes") {
		t.Fatalf("closed because %q", c.why)
	}
	// The client, reading at last, gets what was queued and then the
	// disconnect with reason SlowClient.
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-time.After(5 * time.Second):
		case <-done:
		}
		clientEnd.Close()
	}()
	fr := wire.NewFrameReader(bufio.NewReader(clientEnd), 0)
	for {
		id, body, err := fr.Next()
		if err != nil {
			t.Fatalf("no disconnect before %v", err)
		}
		if id == wire.IDServerDisconnect {
			p, _ := wire.Decode(id, body)
			if r := p.(*wire.ServerDisconnect).Reason; r != wire.ReasonSlowClient {
				t.Fatalf("reason %s, want SlowClient", r)
			}
			return
		}
	}
}
