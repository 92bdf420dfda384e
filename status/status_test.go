package status

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

func sampleInfo() Info {
	return Info{
		Players: 3, MaxPlayers: 8,
		GameName: "Colony", GameVersion: "1.5.4063 rev1071",
		Protocol: 7, Tick: 123456789012,
		Password:  true,
		TLS:       true,
		Databases: 2,
		DefsHash:  DefsHash([]string{"TerrainDef", "ThingDef"}, []int32{7, 120}, []uint64{1, 0xdeadbeefcafef00d}),
	}
}

// startServer serves on a loopback UDP socket until the test ends.
func startServer(t *testing.T, info func() Info, opts Options) (*Server, string) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = testkit.Quiet()
	}
	s := NewServer(pc, info, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		pc.Close()
	})
	return s, pc.LocalAddr().String()
}

// waitStats waits until the server has handled n datagrams in all.
func waitStats(t *testing.T, s *Server, n uint64) (replies, dropped uint64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		replies, dropped = s.Stats()
		if replies+dropped >= n || time.Now().After(deadline) {
			return replies, dropped
		}
		time.Sleep(time.Millisecond)
	}
}

// expectNoReply fails if anything arrives on c within d.
func expectNoReply(t *testing.T, c net.PacketConn, d time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 2048)
	n, from, err := c.ReadFrom(buf)
	if err == nil {
		t.Fatalf("got a %d-byte datagram from %v, want none", n, from)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read: %v, want timeout", err)
	}
}

func TestPingRoundTrip(t *testing.T) {
	want := sampleInfo()
	want.Reach = Reach{Mapping: MappingMapped, External: netip.MustParseAddrPort("203.0.113.7:30502")}
	want.Paths.Add("punched")
	want.Paths.Add("lan")
	s, addr := startServer(t, func() Info { return want }, Options{})
	got, rtt, err := Ping(context.Background(), addr, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if rtt <= 0 {
		t.Fatalf("rtt %v, want > 0", rtt)
	}
	// Ping asks in all three versions; the server answers each.
	if r, d := waitStats(t, s, 3); r != 3 || d != 0 {
		t.Fatalf("stats %d replies %d dropped, want 3, 0", r, d)
	}
	t.Logf("rtt %v", rtt)
}

func TestPingEmptyInfo(t *testing.T) {
	_, addr := startServer(t, func() Info { return Info{} }, Options{})
	got, _, err := Ping(context.Background(), addr, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got != (Info{}) {
		t.Fatalf("got %+v, want zero Info", got)
	}
}

func junkDatagrams(rng *rand.Rand) [][]byte {
	valid := AppendRequest(nil, 42)
	with := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(valid)) }
	var junk [][]byte
	add := func(b ...[]byte) { junk = append(junk, b...) }
	add(
		[]byte{},                      // empty
		[]byte("LHPQ"),                // magic only
		valid[:9],                     // header only
		valid[:RequestSize-1],         // one short
		append(bytes.Clone(valid), 0), // one long
		append(bytes.Clone(valid), make([]byte, 128)...),   // double
		append(bytes.Clone(valid), make([]byte, 9000)...),  // jumbo
		append(bytes.Clone(valid), make([]byte, 60000)...), // near max UDP
		with(func(b []byte) []byte { b[4] = 0; return b }),
		with(func(b []byte) []byte { b[4] = 4; return b }), // 2 is ReachVersion, 3 PathsVersion
		with(func(b []byte) []byte { b[4] = 255; return b }),
		with(func(b []byte) []byte { copy(b, "LHPR"); return b }), // a reply's magic
		with(func(b []byte) []byte { copy(b, "lhpq"); return b }),
		with(func(b []byte) []byte { b[0] ^= 1; return b }),
		with(func(b []byte) []byte { b[RequestSize-1] = 1; return b }), // dirty padding
		with(func(b []byte) []byte { b[9] = 0x80; return b }),
		make([]byte, RequestSize), // all zero
	)
	// A reply sent to the server must not be answered (no reflection loops).
	r, _ := AppendReply(nil, 42, sampleInfo())
	add(r)
	for range 500 {
		b := make([]byte, rng.IntN(2*RequestSize+1))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if rng.IntN(2) == 0 && len(b) >= 5 {
			copy(b, valid[:5]) // right magic and version, random rest
		}
		add(b)
	}
	for range 100 {
		b := make([]byte, rng.IntN(1500))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		add(b)
	}
	return junk
}

func TestJunkGetsNoReply(t *testing.T) {
	s, addr := startServer(t, sampleInfo, Options{Rate: -1})
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	junk := junkDatagrams(rand.New(rand.NewPCG(1, 2)))
	for i, b := range junk {
		if _, ok := ParseRequest(b); ok {
			t.Fatalf("junk %d parses as a request", i)
		}
	}
	// Send in small batches and wait for each, so no datagram is lost to
	// a full socket buffer and every one is counted.
	sent := uint64(0)
	for i := 0; i < len(junk); i += 16 {
		for _, b := range junk[i:min(i+16, len(junk))] {
			if _, err := c.WriteTo(b, to); err != nil {
				t.Fatalf("send %d bytes: %v", len(b), err)
			}
			sent++
		}
		waitStats(t, s, sent)
	}
	expectNoReply(t, c, 200*time.Millisecond)
	if r, d := s.Stats(); r != 0 || d != sent {
		t.Fatalf("stats %d replies %d dropped, want 0, %d", r, d, sent)
	}
	t.Logf("%d junk datagrams, all dropped", sent)

	if _, _, err := Ping(context.Background(), addr, 20*time.Second); err != nil {
		t.Fatalf("ping after junk: %v", err)
	}
}

func TestRateLimit(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	s := NewServer(pc, sampleInfo, Options{Rate: 1, Burst: 3, Logger: testkit.Quiet()})
	s.now = clock
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Serve(ctx) }()

	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	burst := func(ids ...uint32) (got []uint32) {
		t.Helper()
		r0, d0 := s.Stats()
		for _, id := range ids {
			if _, err := c.WriteTo(AppendRequest(nil, id), pc.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		waitStats(t, s, r0+d0+uint64(len(ids)))
		buf := make([]byte, 2048)
		for {
			_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return got
			}
			id, _, err := DecodeReply(buf[:n])
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
	}

	got := burst(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	if len(got) != 3 {
		t.Fatalf("%d replies to 10 requests, want 3 (%v)", len(got), got)
	}
	if r, d := s.Stats(); r != 3 || d != 7 {
		t.Fatalf("stats %d replies %d dropped, want 3, 7", r, d)
	}

	// Another source IP has its own bucket.
	c2, err := net.ListenPacket("udp", "127.0.0.2:0")
	if err == nil {
		defer c2.Close()
		if _, err := c2.WriteTo(AppendRequest(nil, 99), pc.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		_ = c2.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 2048)
		if _, _, err := c2.ReadFrom(buf); err != nil {
			t.Fatalf("other source: %v", err)
		}
	} else {
		t.Logf("skipping second source: %v", err)
	}

	// Two seconds later the first source has two tokens again.
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	if got := burst(11, 12, 13, 14); len(got) != 2 {
		t.Fatalf("%d replies after 2 s, want 2 (%v)", len(got), got)
	}
}

func TestLimiter(t *testing.T) {
	l := newLimiter(1, 3)
	a := netip.MustParseAddr("192.0.2.1")
	b := netip.MustParseAddr("192.0.2.2")
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		if !l.Allow(a, t0) {
			t.Fatalf("request %d refused within burst", i)
		}
	}
	if l.Allow(a, t0) {
		t.Fatal("fourth request allowed")
	}
	if !l.Allow(b, t0) {
		t.Fatal("other address refused")
	}
	if !l.Allow(a, t0.Add(time.Second)) || l.Allow(a, t0.Add(time.Second)) {
		t.Fatal("want exactly one token after 1 s")
	}
	// A clock going backwards takes nothing.
	if l.Allow(a, t0) {
		t.Fatal("allowed with the clock going backwards")
	}
	// Full buckets are forgotten.
	l.Allow(netip.MustParseAddr("192.0.2.3"), t0.Add(time.Hour))
	if l.Len() != 1 {
		t.Fatalf("%d buckets after sweep, want 1", l.Len())
	}
	// The table is bounded.
	l = newLimiter(1, 3)
	for i := range maxSources {
		l.Allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), t0)
	}
	if l.Allow(a, t0) {
		t.Fatal("new address allowed with a full table")
	}
	if !l.Allow(a, t0.Add(4*time.Second)) {
		t.Fatal("new address refused after the table was swept")
	}
	if newLimiter(-1, 0).Allow(a, t0) != true {
		t.Fatal("nil limiter refused")
	}
}

func TestSourceKey(t *testing.T) {
	v4 := netip.MustParseAddr("192.0.2.1")
	for _, a := range []net.Addr{
		&net.UDPAddr{IP: net.ParseIP("192.0.2.1"), Port: 1},
		net.UDPAddrFromAddrPort(netip.MustParseAddrPort("[::ffff:192.0.2.1]:2")),
		&net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 3},
	} {
		if got := sourceKey(a); got != v4 {
			t.Errorf("sourceKey(%v) = %v, want %v", a, got, v4)
		}
	}
	if got := sourceKey(&net.UnixAddr{Name: "/x", Net: "unixgram"}); got.IsValid() {
		t.Errorf("unix address keyed as %v", got)
	}
}

func TestReplySizeBound(t *testing.T) {
	long := strings.Repeat("x", MaxString)
	max := sampleInfo()
	max.GameName, max.GameVersion = long, long
	max.Players, max.MaxPlayers, max.Databases = 1<<31-1, 1<<31-1, 1<<31-1
	max.Tick, max.Protocol, max.DefsHash = ^uint64(0), ^uint32(0), ^uint64(0)
	b, err := AppendReply(nil, ^uint32(0), max)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != MaxReplySize || len(b) > MaxAmplification*RequestSize || len(b) > 256 {
		t.Fatalf("largest reply %d bytes, MaxReplySize %d, bound %d", len(b), MaxReplySize, MaxAmplification*RequestSize)
	}
	if len(AppendRequest(nil, 0)) != RequestSize {
		t.Fatal("request size")
	}
	if b, _ := AppendReply(nil, 0, Info{}); len(b) != MinReplySize {
		t.Fatalf("smallest reply %d bytes, want %d", len(b), MinReplySize)
	}
	// The largest reply of all: version 3 with an IPv6 address and every
	// path count.
	max.Reach = Reach{Mapping: MappingMapped, External: netip.MustParseAddrPort("[2001:db8::1]:30502")}
	for c := range max.Paths {
		max.Paths[c] = 0xffff
	}
	if b, err := AppendReplyVersion(nil, ^uint32(0), max, PathsVersion); err != nil || len(b) != MaxPathsReplySize || len(b) > MaxAmplification*RequestSize {
		t.Fatalf("largest version 3 reply %d bytes (%v), MaxPathsReplySize %d, bound %d", len(b), err, MaxPathsReplySize, MaxAmplification*RequestSize)
	}

	// AppendReply refuses what would not fit.
	over := max
	over.GameName = long + "y"
	if _, err := AppendReply(nil, 0, over); err == nil {
		t.Fatal("65-byte name accepted")
	}
	for _, bad := range []Info{{Players: -1}, {MaxPlayers: -1}, {Databases: -1}, {GameVersion: "\xff"}} {
		if _, err := AppendReply(nil, 0, bad); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}

	// The server clamps whatever info returns into a valid, bounded reply.
	huge := Info{
		Players: -5, MaxPlayers: -1, Databases: -2,
		GameName:    strings.Repeat("é", 100), // 2 bytes a rune
		GameVersion: strings.Repeat("\xff", 300),
	}
	s, addr := startServer(t, func() Info { return huge }, Options{})
	got, _, err := Ping(context.Background(), addr, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Players != 0 || got.MaxPlayers != 0 || got.Databases != 0 {
		t.Fatalf("counts not clamped: %+v", got)
	}
	if got.GameName != strings.Repeat("é", 32) {
		t.Fatalf("name clamped to %q", got.GameName)
	}
	if len(got.GameVersion) > MaxString || !strings.HasPrefix(got.GameVersion, "\uFFFD") {
		t.Fatalf("version clamped to %q", got.GameVersion)
	}
	if r, _ := waitStats(t, s, 3); r != 3 {
		t.Fatalf("%d replies; want 3, one per version Ping asks in", r)
	}
	// A multi-byte rune straddling the limit is dropped whole.
	if c := clampString(strings.Repeat("x", 63) + "é"); c != strings.Repeat("x", 63) {
		t.Fatalf("clampString cut a rune: %q", c)
	}
}

func TestDecodeReplyRefuses(t *testing.T) {
	good, err := AppendReply(nil, 7, sampleInfo())
	if err != nil {
		t.Fatal(err)
	}
	if id, info, err := DecodeReply(good); err != nil || id != 7 || info != sampleInfo() {
		t.Fatalf("good reply: %v %d %+v", err, id, info)
	}
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	nameAt := replyFixed
	verAt := replyFixed + 1 + len(sampleInfo().GameName)
	cases := map[string][]byte{
		"empty":           {},
		"short":           good[:MinReplySize-1],
		"truncated":       good[:len(good)-1],
		"trailing":        append(bytes.Clone(good), 0),
		"too long":        make([]byte, MaxReplySize+1),
		"magic":           mod(func(b []byte) []byte { b[3] = 'Q'; return b }),
		"version":         mod(func(b []byte) []byte { b[4] = 2; return b }),
		"flags":           mod(func(b []byte) []byte { b[29] |= 4; return b }),
		"players":         mod(func(b []byte) []byte { b[9] = 0x80; return b }),
		"max players":     mod(func(b []byte) []byte { b[13] = 0xff; return b }),
		"databases":       mod(func(b []byte) []byte { b[30] = 0x80; return b }),
		"name length":     mod(func(b []byte) []byte { b[nameAt]++; return b }),
		"name over 64":    mod(func(b []byte) []byte { b[nameAt] = 65; return b }),
		"version length":  mod(func(b []byte) []byte { b[verAt]--; return b }),
		"name not UTF-8":  mod(func(b []byte) []byte { b[nameAt+1] = 0xff; return b }),
		"request instead": AppendRequest(nil, 7),
	}
	for name, b := range cases {
		if _, _, err := DecodeReply(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err %v, want ErrMalformed", name, err)
		}
	}
}

func TestPingNothingListening(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	// The closed port answers with ICMP port unreachable, which ends the
	// ping with "connection refused" long before its timeout: a ping that
	// waited the timeout out would end with DeadlineExceeded instead.
	_, _, err = Ping(context.Background(), addr, time.Minute)
	if err == nil {
		t.Fatal("ping to a closed port succeeded")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want connection refused", err)
	}
}

func TestPingTimeoutSilentServer(t *testing.T) {
	// A socket that reads nothing: no ICMP, so Ping must time out.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	const timeout = 200 * time.Millisecond
	start := time.Now()
	_, _, err = Ping(context.Background(), pc.LocalAddr().String(), timeout)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	// A deadline never fires early, however loaded the machine: this lower
	// bound cannot fail for the wrong reason.
	if took := time.Since(start); took < timeout {
		t.Fatalf("gave up after %v, before its timeout %v", took, timeout)
	}
	// And ctx cancellation ends it too, without a timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, _, err := Ping(ctx, pc.LocalAddr().String(), 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ctx: err %v", err)
	}
}

func TestPingSkipsWrongReplies(t *testing.T) {
	// A fake server of version 1 only (it drops Ping's ReachVersion
	// request, as hosts before it do) answering first with garbage, then
	// another ping ID, then the right reply.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 512)
		var id uint32
		var from net.Addr
		for ok := false; !ok; {
			var n int
			var err error
			if n, from, err = pc.ReadFrom(buf); err != nil {
				return
			}
			id, ok = ParseRequest(buf[:n])
		}
		other, _ := AppendReply(nil, id+1, Info{Players: 99})
		right, _ := AppendReply(nil, id, sampleInfo())
		for _, b := range [][]byte{[]byte("junk"), other, append(bytes.Clone(right), 0), right} {
			_, _ = pc.WriteTo(b, from)
		}
	}()
	got, _, err := Ping(context.Background(), pc.LocalAddr().String(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got != sampleInfo() {
		t.Fatalf("got %+v", got)
	}
}

func TestServeStops(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	s := NewServer(pc, sampleInfo, Options{Logger: testkit.Quiet()})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}

	pc2, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s = NewServer(pc2, sampleInfo, Options{Logger: testkit.Quiet()})
	go func() { done <- s.Serve(context.Background()) }()
	time.Sleep(10 * time.Millisecond)
	pc2.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Serve after close: %v, want net.ErrClosed", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after close")
	}
}

func TestDefsHash(t *testing.T) {
	types := []string{"TerrainDef", "ThingDef"}
	counts := []int32{7, 120}
	hashes := []uint64{1, 2}
	h := DefsHash(types, counts, hashes)
	if h != DefsHash(types, counts, hashes) {
		t.Fatal("not deterministic")
	}
	for name, other := range map[string]uint64{
		"count":     DefsHash(types, []int32{7, 121}, hashes),
		"hash":      DefsHash(types, counts, []uint64{1, 3}),
		"type":      DefsHash([]string{"TerrainDef", "ThingDeg"}, counts, hashes),
		"order":     DefsHash([]string{"ThingDef", "TerrainDef"}, []int32{120, 7}, []uint64{2, 1}),
		"one fewer": DefsHash(types[:1], counts[:1], hashes[:1]),
		"boundary":  DefsHash([]string{"TerrainDe", "fThingDef"}, counts, hashes),
	} {
		if other == h {
			t.Errorf("%s change leaves the hash equal", name)
		}
	}
	if DefsHash(nil, nil, nil) != DefsHash([]string{}, []int32{}, []uint64{}) {
		t.Fatal("nil and empty differ")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("mismatched lengths did not panic")
		}
	}()
	DefsHash(types, counts[:1], hashes)
}

func TestSummaryHash(t *testing.T) {
	sums := []defs.Summary{{Type: "TerrainDef", Count: 7, Hash: 1}, {Type: "ThingDef", Count: 120, Hash: 0xdeadbeefcafef00d}}
	for _, n := range []int{0, 1, 2} {
		types, counts, hashes := make([]string, n), make([]int32, n), make([]uint64, n)
		for i, s := range sums[:n] {
			types[i], counts[i], hashes[i] = s.Type, s.Count, s.Hash
		}
		if got, want := SummaryHash(sums[:n]), DefsHash(types, counts, hashes); got != want {
			t.Errorf("%d summaries: SummaryHash %#x, DefsHash %#x", n, got, want)
		}
	}
	if SummaryHash(nil) != DefsHash(nil, nil, nil) {
		t.Fatal("nil summaries differ from no databases")
	}
}

// TestServeLogSaysUDPStatusQueries: the line the host logs when it starts
// answering says what it answers (join ping's status queries, over UDP),
// not "serving" an address that reads like a page on the game port.
func TestServeLogSaysUDPStatusQueries(t *testing.T) {
	var buf syncbuf.Buffer
	_, addr := startServer(t, sampleInfo, Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if _, _, err := Ping(context.Background(), addr, 20*time.Second); err != nil { // answered: the line is written
		t.Fatal(err)
	}
	want := `msg="answering status queries (join ping) over UDP" addr=` + addr
	if !strings.Contains(buf.String(), want) || strings.Contains(buf.String(), "serving") {
		t.Fatalf("log:\n%s\nwant %s", buf.String(), want)
	}
}
