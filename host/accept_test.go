package host_test

import (
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"log/slog"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

// emfileListener fails its first n Accepts as a process out of file
// descriptors does, then accepts for real.
type emfileListener struct {
	net.Listener
	n atomic.Int32
}

func (l *emfileListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptRetriesWhenOutOfDescriptors: running out of file descriptors
// is temporary; the host logs it, waits and accepts again, and the session
// goes on (a player joins afterwards and stays in sync with the host).
func TestAcceptRetriesWhenOutOfDescriptors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const fails = 6
	el := &emfileListener{Listener: ln}
	el.n.Store(fails)
	var buf syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	h := startHostOn(t, el, host.Config{Logger: logger}, locksteptest.New(1, 16))
	a := startJoiner(t, h.addr, "Alice")
	checkSameHashes(t, h, hostTick(h)+20, a)
	if got := strings.Count(buf.String(), "accept failed; retrying"); got != fails {
		t.Fatalf("%d retry lines, want %d:\n%s", got, fails, buf.String())
	}
	if !strings.Contains(buf.String(), "too many open files") {
		t.Fatalf("the retry lines do not say why:\n%s", buf.String())
	}
}
