package join_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// pipeDialKey carries a pipe transport's dialer in the context start
// returns; runCtx sets it as the join's Config.Dial.
type pipeDialKey struct{}

// A transport connects join to a scripted host: over net.Pipe (through
// Config.Dial: synchronous, no kernel buffers) or over loopback
// TCP (what a real joiner uses). Every scripted test runs over both.
type transport struct {
	name string
	// start returns the context to join with, the address, and the
	// channel on which the host's end of each connection arrives.
	start func(t *testing.T) (context.Context, string, <-chan net.Conn)
}

var transports = []transport{{"pipe", pipeTransport}, {"tcp", tcpTransport}}

func pipeTransport(t *testing.T) (context.Context, string, <-chan net.Conn) {
	ends := make(chan net.Conn, 4)
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		client, host := net.Pipe()
		t.Cleanup(func() { host.Close() })
		ends <- host
		return client, nil
	}
	return context.WithValue(context.Background(), pipeDialKey{}, dial), "pipe", ends
}

func tcpTransport(t *testing.T) (context.Context, string, <-chan net.Conn) {
	addr, ends := testkit.Listen(t)
	return context.Background(), addr, ends
}

// fakeHost is the host's end of one connection, driven by a test's
// script with packets built from package wire. What the client sends is
// read on a goroutine of its own, so neither side blocks the other.
type fakeHost struct {
	nc   net.Conn
	from chan wire.Packet // the client's packets in order; closed when its side ends
	wmu  sync.Mutex
}

func newFakeHost(nc net.Conn) *fakeHost {
	h := &fakeHost{nc: nc, from: make(chan wire.Packet, 4096)}
	go func() {
		defer close(h.from)
		fr := wire.NewFrameReader(bufio.NewReader(nc), 0)
		for {
			id, body, err := fr.Next()
			if err != nil {
				return
			}
			p, err := wire.Decode(id, body)
			if err != nil {
				return
			}
			h.from <- p
		}
	}()
	return h
}

// send writes packets to the client.
func (h *fakeHost) send(ps ...wire.Packet) error {
	for _, p := range ps {
		b, err := wire.Marshal(nil, p)
		if err != nil {
			return err
		}
		if err := h.raw(b); err != nil {
			return fmt.Errorf("send %s: %w", p.ID(), err)
		}
	}
	return nil
}

// raw writes bytes as they are, for frames a real host would never send.
func (h *fakeHost) raw(b []byte) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	_ = h.nc.SetWriteDeadline(time.Now().Add(testkit.DefaultWait))
	_, err := h.nc.Write(b)
	return err
}

// errClientClosed is next's error once the client's side has ended.
var errClientClosed = errors.New("the client closed the connection")

// next returns the client's next packet.
func (h *fakeHost) next() (wire.Packet, error) {
	select {
	case p, ok := <-h.from:
		if !ok {
			return nil, errClientClosed
		}
		return p, nil
	case <-time.After(testkit.DefaultWait):
		return nil, errors.New("the client sent nothing")
	}
}

// expect returns the client's next packet, which must have the given ID.
func (h *fakeHost) expect(id wire.ID) (wire.Packet, error) {
	p, err := h.next()
	if err != nil {
		return nil, fmt.Errorf("waiting for %s: %w", id, err)
	}
	if p.ID() != id {
		return nil, fmt.Errorf("client sent %s, want %s", p.ID(), id)
	}
	return p, nil
}

// until skips the client's packets up to the first with the given ID.
func (h *fakeHost) until(id wire.ID) (wire.Packet, error) {
	for {
		p, err := h.next()
		if err != nil {
			return nil, fmt.Errorf("waiting for %s: %w", id, err)
		}
		if p.ID() == id {
			return p, nil
		}
	}
}

// waitClosed waits for the client to hang up, skipping what it sends.
func (h *fakeHost) waitClosed() error {
	for {
		if _, err := h.next(); errors.Is(err, errClientClosed) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// greeting is what the host answers in a successful handshake.
var greeting = struct {
	modList *wire.ServerModList
	defsOK  *wire.ServerDefsOK
}{
	&wire.ServerModList{GameVersion: "1.5", Mods: []string{"lockhost.core", "extra"}},
	&wire.ServerDefsOK{GameName: "Fake colony", PlayerID: 7},
}

// handshake runs the host's side of a handshake that admits the client
// and returns the client's username packet.
func (h *fakeHost) handshake() (*wire.ClientUsername, error) {
	if _, err := h.expect(wire.IDClientProtocol); err != nil {
		return nil, err
	}
	if err := h.send(greeting.modList); err != nil {
		return nil, err
	}
	if _, err := h.expect(wire.IDClientDefs); err != nil {
		return nil, err
	}
	if err := h.send(greeting.defsOK); err != nil {
		return nil, err
	}
	p, err := h.expect(wire.IDClientUsername)
	if err != nil {
		return nil, err
	}
	return p.(*wire.ClientUsername), nil
}

// sendWorld sends b as world data in chunks of size bytes, saying total.
func (h *fakeHost) sendWorld(b []byte, total uint64, size int) error {
	return h.sendWorldFrom(0, b, total, size)
}

// sendWorldFrom sends b, which starts at offset start of the payload.
func (h *fakeHost) sendWorldFrom(start int, b []byte, total uint64, size int) error {
	for off := 0; off < len(b); off += size {
		end := min(off+size, len(b))
		if err := h.send(&wire.ServerWorldData{Offset: uint64(start + off), Total: total, Data: b[off:end]}); err != nil {
			return err
		}
	}
	return nil
}

// testWorld is a small Counters world cut into a join payload.
type testWorld struct {
	tick    uint64 // the join point's tick
	granted uint64 // the grant the payload carries
	payload []byte
	header  snapshot.Header
	// ready is the simulation at the grant: what the joiner must reach.
	ready lockstep.Sim
}

// counters is a deterministic Counters world with maps maps at tick 3.
func counters(t *testing.T, maps int) *locksteptest.Counters {
	t.Helper()
	sim := locksteptest.New(maps, 4<<10)
	for i := range maps {
		if err := sim.Apply(locksteptest.Counters{}.AddCommand(int32(i), int8(i+2))); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		sim.Step()
	}
	return sim
}

// newWorld cuts a payload of a world of maps maps for faction 3 with
// the grant ahead of the join point by ahead ticks.
func newWorld(t *testing.T, maps int, ahead uint64) *testWorld {
	t.Helper()
	sim := counters(t, maps)
	point, err := snapshot.Build(sim, snapshot.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(point, 3, sim.Tick()+ahead, nil)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := snapshot.Parse(pl.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	w := &testWorld{tick: sim.Tick(), granted: sim.Tick() + ahead, payload: pl.Bytes(), header: parsed.Header}
	for range ahead {
		sim.Step()
	}
	w.ready = sim
	return w
}

// run joins with cfg over tr against script, which runs on its own
// goroutine with the host's end; its error arrives on the returned
// channel once it ends.
func run(t *testing.T, tr transport, cfg join.Config, script func(h *fakeHost) error) (*join.Session, <-chan error, error) {
	t.Helper()
	ctx, addr, ends := tr.start(t)
	return runCtx(t, ctx, addr, ends, cfg, script)
}

func runCtx(t *testing.T, ctx context.Context, addr string, ends <-chan net.Conn, cfg join.Config, script func(h *fakeHost) error) (*join.Session, <-chan error, error) {
	t.Helper()
	cfg.Addr = addr
	if d, ok := ctx.Value(pipeDialKey{}).(func(context.Context, string) (net.Conn, error)); ok && cfg.Dial == nil {
		cfg.Dial = d
	}
	if cfg.Name == "" {
		cfg.Name = "Alice"
	}
	if cfg.Loader == nil && cfg.MapLoader == nil {
		cfg.Loader = locksteptest.Load
	}
	if cfg.Logger == nil {
		cfg.Logger = testkit.Quiet()
	}
	scriptErr := make(chan error, 1)
	go func() {
		select {
		case nc := <-ends:
			err := script(newFakeHost(nc))
			if err != nil {
				nc.Close() // so the client is not left waiting
			}
			scriptErr <- err
		case <-time.After(testkit.DefaultWait):
			scriptErr <- errors.New("the client never connected")
		}
	}()
	s, err := join.Join(ctx, cfg)
	if s != nil {
		t.Cleanup(s.Close)
	}
	return s, scriptErr, err
}

// scriptOK fails the test if the script failed.
func scriptOK(t *testing.T, errc <-chan error) {
	t.Helper()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("host script: %v", err)
		}
	case <-time.After(testkit.DefaultWait * 2):
		t.Fatal("the host script did not end")
	}
}
