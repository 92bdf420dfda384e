package host_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// dialFrom connects to addr from the loopback address from (127.0.0.0/8
// is all loopback on Linux), so one test can be several addresses.
func dialFrom(t *testing.T, from, addr string) *rawClient {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Skipf("cannot dial from %s: %v", from, err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawClient{t: t, nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)}
}

// TestPendingConnectionCaps: a newcomer over a pending cap is not
// refused; the pending connection that has done least for longest is
// closed as RateLimited instead, one of the newcomer's own address when
// that address is at its share. Admitted players are not counted and not
// evicted; a real joiner gets in while idlers fill the table.
func TestPendingConnectionCaps(t *testing.T) {
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{MaxPending: 3, MaxPendingPerAddr: 2}}, locksteptest.New(1, 16))
	alice := startJoiner(t, h.addr, "Alice") // admitted: not pending
	pending := func(n int) {
		t.Helper()
		testkit.WaitFor(t, fmt.Sprintf("%d pending connections", n), func() bool { return h.srv.Overview().Stats.Pending == n })
	}
	first := dialFrom(t, "127.0.0.2", h.addr)
	pending(1)
	second := dialFrom(t, "127.0.0.2", h.addr)
	pending(2)
	time.Sleep(600 * time.Millisecond)        // past the age at which a connection may be evicted
	third := dialFrom(t, "127.0.0.2", h.addr) // over its address's share: its own oldest goes
	if d := first.disconnected(); d.Reason != wire.ReasonRateLimited {
		t.Fatalf("the oldest idler of an address over its share: %+v, want RateLimited", d)
	}
	pending(2)
	other := dialFrom(t, "127.0.0.3", h.addr)
	other.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	other.expect(wire.IDServerModList)
	pending(3) // full: second, third (both idle) and other
	time.Sleep(600 * time.Millisecond)
	// A real player joins through the full table: the oldest idler makes
	// room.
	bob := startJoiner(t, h.addr, "Bob")
	if d := second.disconnected(); d.Reason != wire.ReasonRateLimited {
		t.Fatalf("the oldest idler when the table is full: %+v, want RateLimited", d)
	}
	if st := h.srv.Overview().Stats; st.PendingEvicted != 2 {
		t.Fatalf("%d evicted, want 2", st.PendingEvicted)
	}
	_ = third
	checkSameHashes(t, h, hostTick(h)+20, alice, bob)
}

// TestHandshakeFrameLimit: before admission a frame over the small
// handshake limit is refused, and a declared but unsent big frame does
// not hold the host; after admission the full limit applies.
func TestHandshakeFrameLimit(t *testing.T) {
	h := startHost(t, host.Config{Limits: host.LimitConfig{HandshakeMaxFrame: 4096}}, locksteptest.New(1, 16))
	alice := startJoiner(t, h.addr, "Alice")
	c := dialRaw(t, h.addr)
	c.writeRaw(frameHeader(5000, wire.IDClientProtocol))
	if d := c.disconnected(); d.Reason != wire.ReasonBadPacket || !strings.Contains(d.Message, "frame exceeds") {
		t.Fatalf("big frame before admission: %+v, want BadPacket naming the frame size", d)
	}
	// Admitted, a 10 KB command is fine (over the handshake limit).
	p := dialRaw(t, h.addr)
	p.toPlaying("Bob")
	// The sim refuses the big one; the small one after it shows the
	// connection survived it.
	p.send(&wire.ClientCommand{MapID: 0, Kind: locksteptest.KindAdd, Payload: make([]byte, 10000)})
	payload := []byte{0x2a}
	p.send(&wire.ClientCommand{MapID: 0, Kind: locksteptest.KindAdd, Payload: payload})
	testkit.WaitFor(t, "the command after the 10 KB one to be applied", func() bool {
		h.log.mu.Lock()
		defer h.log.mu.Unlock()
		for k := range h.log.cmds {
			if strings.HasSuffix(k, fmt.Sprintf("/0/1/%x", payload)) {
				return true
			}
		}
		return false
	})
	checkSameHashes(t, h, hostTick(h)+20, alice)
	select {
	case err := <-alice.errc:
		t.Fatalf("Alice left: %v", err)
	default:
	}
}

// TestOversizedDefsListRefusedBeforeDecoding: a Client_Defs of 60,000
// empty entries (a byte each) is refused as too many databases.
func TestOversizedDefsListRefusedBeforeDecoding(t *testing.T) {
	h := startHost(t, host.Config{}, locksteptest.New(1, 16))
	alice := startJoiner(t, h.addr, "Alice")
	c := dialRaw(t, h.addr)
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	c.expect(wire.IDServerModList)
	body, err := codec.Encode(map[string]any{"d": make([]struct{}, 60000)})
	if err != nil {
		t.Fatal(err)
	}
	c.writeRaw(wire.AppendFrame(nil, wire.IDClientDefs, body))
	if d := c.disconnected(); d.Reason != wire.ReasonGeneric || !strings.Contains(d.Message, "def databases") {
		t.Fatalf("60,000 databases: %+v, want a refusal naming the limit", d)
	}
	checkSameHashes(t, h, hostTick(h)+20, alice)
}

// tryJoin joins and leaves at once, returning the refusal's reason (0 if
// admitted).
func tryJoin(t *testing.T, addr, name string, mod func(*join.Config)) wire.Reason {
	t.Helper()
	s, re := joinWith(t, addr, name, mod)
	if re != nil {
		return re.Reason
	}
	s.Close()
	return 0
}

// TestPasswordBeforeRoster: without the password a joiner learns nothing
// of the roster: a name online, a full session and a free name are all
// BadPassword. With it, the roster's rules speak.
func TestPasswordBeforeRoster(t *testing.T) {
	pw := func(s string) func(*join.Config) { return func(c *join.Config) { c.Password = []byte(s) } }
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{Password: []byte("sesame"), PasswordRate: -1}, Limits: host.LimitConfig{MaxPlayers: 1}}, locksteptest.New(1, 16))
	alice := startJoiner(t, h.addr, "Alice", pw("sesame"))
	for _, tc := range []struct {
		name, pw string
		want     wire.Reason
	}{
		{"Alice", "guess", wire.ReasonBadPassword},            // online, but not told
		{"Bobby", "guess", wire.ReasonBadPassword},            // full, but not told
		{"Al", "guess", wire.ReasonUsernameLength},            // the name's form is no secret
		{"Alice", "sesame", wire.ReasonUsernameAlreadyOnline}, // with the password, the roster speaks
		{"Bobby", "sesame", wire.ReasonServerFull},
	} {
		if got := tryJoin(t, h.addr, tc.name, pw(tc.pw)); got != tc.want {
			t.Errorf("%s with %q: %v, want %v", tc.name, tc.pw, got, tc.want)
		}
	}
	checkSameHashes(t, h, hostTick(h)+20, alice)
}

// TestPasswordAttemptsLimited: past the budget of attempts every attempt
// is refused as RateLimited, the right password included, unchecked; the
// player already in plays on.
func TestPasswordAttemptsLimited(t *testing.T) {
	pw := func(s string) func(*join.Config) { return func(c *join.Config) { c.Password = []byte(s) } }
	for _, tc := range []struct {
		name string
		cfg  host.Config
	}{
		// Alice's join and two guesses spend a budget of three.
		{"per address", host.Config{Admission: host.AdmissionConfig{PasswordRate: 0.001, PasswordBurst: 3}}},
		// Without puzzles, the budget in all locks everyone out.
		{"in all", host.Config{Admission: host.AdmissionConfig{PasswordRate: 100, PasswordBurst: 100, PasswordRateAll: 0.001, PasswordBurstAll: 3, PasswordPuzzleMaxBits: -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Admission.Password = []byte("sesame")
			h := startHost(t, tc.cfg, locksteptest.New(1, 16))
			alice := startJoiner(t, h.addr, "Alice", pw("sesame"))
			for i, want := range []wire.Reason{wire.ReasonBadPassword, wire.ReasonBadPassword, wire.ReasonRateLimited} {
				if got := tryJoin(t, h.addr, "Mallory", pw(fmt.Sprint("guess", i))); got != want {
					t.Fatalf("guess %d: %v, want %v", i+1, got, want)
				}
			}
			if got := tryJoin(t, h.addr, "Bobby", pw("sesame")); got != wire.ReasonRateLimited {
				t.Fatalf("right password past the budget: %v, want RateLimited", got)
			}
			checkSameHashes(t, h, hostTick(h)+20, alice)
		})
	}
}

// countingObserver counts the join attempts it hears of.
type countingObserver struct{ joins atomic.Int64 }

func (o *countingObserver) JoinFinished(host.JoinRecord) { o.joins.Add(1) }
func (o *countingObserver) Desync(host.DesyncRecord)     {}
func (o *countingObserver) Saved(host.SaveRecord)        {}

// TestConnectFloodIsQuiet: a connect-and-close flood from one address
// logs one refusal line for the interval, not one per connection, and
// stays off the joins list (counted instead), while a player joins and
// plays in sync.
func TestConnectFloodIsQuiet(t *testing.T) {
	var buf syncbuf.Buffer
	obs := &countingObserver{}
	h := startHost(t, host.Config{Observer: obs,
		Logger:    slog.New(slog.NewTextHandler(&buf, nil)),
		Admission: host.AdmissionConfig{ConnRate: 5, ConnBurst: 10, RefusalLogEvery: time.Hour},
	}, locksteptest.New(1, 16))
	alice := startJoiner(t, h.addr, "Alice")
	const flood = 200
	for range flood {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.5")}}
		nc, err := d.Dial("tcp", h.addr)
		if err != nil {
			t.Skipf("cannot dial from 127.0.0.5: %v", err)
		}
		nc.Close()
	}
	testkit.WaitFor(t, "every flood connection to be counted", func() bool { return h.srv.Overview().Unnamed == flood })
	if got := obs.joins.Load(); got != flood+1 {
		t.Errorf("observer heard of %d attempts, want %d (the flood and Alice)", got, flood+1)
	}
	o := h.srv.Overview()
	if len(o.Joins) != 1 || o.Joins[0].Name != "Alice" {
		t.Errorf("joins list %+v, want only Alice's", o.Joins)
	}
	if n := strings.Count(buf.String(), `msg="client refused"`); n != 1 {
		t.Errorf("%d refusal lines for a flood from one address in one interval, want 1:\n%s", n, buf.String())
	}
	checkSameHashes(t, h, hostTick(h)+20, alice)
}

// TestSquatterDroppedBelowMinimumRate: a joiner that acknowledges a byte
// of the world now and then (so the stall timeout never fires) is
// dropped with reason Timeout once the download is past what the minimum
// rate allows, and its player slot goes to the next joiner.
func TestSquatterDroppedBelowMinimumRate(t *testing.T) {
	h := startHost(t, host.Config{Limits: host.LimitConfig{MaxPlayers: 2}, Timeouts: host.TimeoutConfig{DownloadStall: 3 * time.Second}, Join: host.JoinConfig{MinDownloadRate: 1 << 20}}, locksteptest.New(1, 16))
	alice := startJoiner(t, h.addr, "Alice")
	sq := dialRaw(t, h.addr)
	sq.toUsername()
	sq.send(&wire.ClientUsername{Name: "Squatter"})
	wd := sq.syncClockUntil(wire.IDServerWorldData).(*wire.ServerWorldData)
	if wd.Total < 100 {
		t.Fatalf("world of %d bytes: too small to trickle", wd.Total)
	}
	if got := tryJoin(t, h.addr, "Bobby", nil); got != wire.ReasonServerFull {
		t.Fatalf("while the squatter downloads: %v, want ServerFull", got)
	}
	// Trickle: one more byte acknowledged every 50 ms, from another
	// goroutine, while this one waits for the host's word.
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for n := uint64(1); n < wd.Total; n++ {
			select {
			case <-stop:
				return
			case <-tk.C:
			}
			if _, err := sq.nc.Write(wire.MustMarshal(&wire.ClientAck{Received: n})); err != nil {
				return
			}
		}
	}()
	d := sq.expect(wire.IDServerDisconnect).(*wire.ServerDisconnect)
	close(stop)
	<-trickled
	if d.Reason != wire.ReasonTimeout || !strings.Contains(d.Message, "minimum") {
		t.Fatalf("squatter: %+v, want Timeout naming the minimum rate", d)
	}
	testkit.WaitFor(t, "the squatter's slot to be free", func() bool { return tryJoin(t, h.addr, "Bobby", nil) == 0 })
	checkSameHashes(t, h, hostTick(h)+20, alice)
}
