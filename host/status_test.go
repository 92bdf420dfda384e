package host_test

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

func TestStatusPing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()

	srv := hosttest.StartOn(t, ln, host.Config{GameName: "Pinged"},
		host.Content{GameVersion: "1.5", Databases: testDefs}, locksteptest.New(1, 64)).Server
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.ServeStatus(ctx, pc)
	alice := startJoiner(t, ln.Addr().String(), "Alice")

	// The status reply reads the published Overview: wait for one showing
	// Alice, then ask once (pinging in a loop meets the rate limit).
	testkit.WaitFor(t, "an Overview showing Alice", func() bool {
		o := srv.Overview()
		return len(o.Players) == 1 && o.Tick > 0
	})
	info, rtt, err := status.Ping(ctx, pc.LocalAddr().String(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if info.GameName != "Pinged" || info.Players != 1 || info.MaxPlayers != 8 || info.Protocol != wire.ProtocolVersion ||
		info.GameVersion != "1.5" || info.Databases != int32(len(testDefs)) || info.Tick == 0 || rtt <= 0 {
		t.Fatalf("status %+v rtt %v", info, rtt)
	}

	// A flood of junk gets no replies and does not disturb the session.
	junk, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer junk.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.IntN(300))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		if i%3 == 0 && len(b) >= 4 {
			copy(b, "LHPQ") // right magic, wrong rest
		}
		junk.Write(b)
	}
	junk.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := junk.Read(make([]byte, 512)); err == nil {
		t.Fatalf("a junk datagram got a %d-byte reply", n)
	}
	t0 := alice.log.latest()
	testkit.WaitFor(t, "Alice to keep playing", func() bool { return alice.log.latest() > t0+20 })
	if _, _, err := status.Ping(ctx, pc.LocalAddr().String(), 20*time.Second); err != nil {
		t.Fatalf("a real ping after the flood: %v", err)
	}

	// A spectator is online but is not counted as a player.
	startJoiner(t, ln.Addr().String(), "Watcher", spectate)
	testkit.WaitFor(t, "the Overview to show the spectator", func() bool { return len(srv.Overview().Players) == 2 })
	info, _, err = status.Ping(ctx, pc.LocalAddr().String(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if info.Players != 1 {
		t.Fatalf("status counts %d players with one player and one spectator online", info.Players)
	}
}

// TestStatusReachUnknownWithoutReach: a host given no Reach (a program
// embedding the host that does not say how it is reached) answers a
// version 2 request with mapping 0, unknown, and no address (section
// 13.1); lockhost's own host always says (TestNoPortMappingSaysOff).
func TestStatusReachUnknownWithoutReach(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	srv := hosttest.StartOn(t, ln, host.Config{}, host.Content{GameVersion: "1.5"}, locksteptest.New(1, 64)).Server
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.ServeStatus(ctx, pc)
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(status.AppendRequestVersion(nil, 7, status.ReachVersion)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, status.MaxReachReplySize+1)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	if buf[4] != status.ReachVersion || buf[n-2] != 0 || buf[n-1] != 0 {
		t.Fatalf("reply version %d ends % x; want version 2 ending 00 00 (mapping unknown, no address)", buf[4], buf[n-2:n])
	}
}

// pathListener hands out TCP connections that say they came by the next
// of paths, in the order accepted ("" or none left: a plain connection,
// which the host names by its address).
type pathListener struct {
	net.Listener
	mu    sync.Mutex
	paths []string
}

// pathConn is a connection that knows the way it came (host.Pathed).
type pathConn struct {
	net.Conn
	path string
}

func (c pathConn) Path() string { return c.path }

func (l *pathListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.paths) == 0 {
		return c, nil
	}
	p := l.paths[0]
	l.paths = l.paths[1:]
	if p == "" {
		return c, nil
	}
	return pathConn{c, p}, nil
}

// TestStatusPaths: real players through the host, over loopback TCP
// connections that say the ways they came; a version 3 status query
// counts them by path (spectators not), and version 1 and 2 replies say
// nothing of paths.
func TestStatusPaths(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ln := &pathListener{Listener: tcp, paths: []string{"punched", "turn-udp", "", "punched", "turn-tls"}}
	srv := hosttest.StartOn(t, ln, host.Config{}, host.Content{GameVersion: "1.5", Databases: testDefs}, locksteptest.New(1, 64)).Server
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.ServeStatus(ctx, pc)

	// One at a time, so each takes the next path.
	for i, name := range []string{"Ann", "Bob", "Cat", "Dan"} {
		startJoiner(t, ln.Addr().String(), name)
		testkit.WaitFor(t, name+" in the Overview", func() bool { return len(srv.Overview().Players) == i+1 })
	}
	startJoiner(t, ln.Addr().String(), "Watcher", spectate)
	testkit.WaitFor(t, "the Overview to show the spectator", func() bool { return len(srv.Overview().Players) == 5 })
	got := map[string]string{}
	for _, p := range srv.Overview().Players {
		got[p.Name] = p.Path
	}
	t.Logf("the status page's paths: %v", got)

	info, _, err := status.Ping(ctx, pc.LocalAddr().String(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if info.Players != 4 || info.Paths.Total() != 4 || info.Paths.String() != "2 punched, 1 lan, 1 turn-udp" {
		t.Fatalf("status says %d players, paths %q (%d); want 4: 2 punched, 1 lan, 1 turn-udp", info.Players, info.Paths, info.Paths.Total())
	}

	// Asked in version 1 or 2, the host leaves the paths out.
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, v := range []byte{status.Version, status.ReachVersion} {
		if _, err := c.Write(status.AppendRequestVersion(nil, 9, v)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, status.MaxPathsReplySize+1)
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		_, info, err := status.DecodeReply(buf[:n])
		if err != nil || buf[4] != v || info.Players != 4 || info.Paths != (status.Paths{}) {
			t.Fatalf("version %d: reply version %d, %d players, paths %v (%v)", v, buf[4], info.Players, info.Paths, err)
		}
	}
}
