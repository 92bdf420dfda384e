package lan

import (
	"bytes"
	"context"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockhost/lockhost/internal/ratelimit"
	"github.com/lockhost/lockhost/status"
)

func sampleInfo() status.Info {
	return status.Info{Players: 2, MaxPlayers: 8, GameName: "colony", GameVersion: "1.5", Protocol: 4,
		Tick: 600, Password: true, Databases: 1, DefsHash: 0x0011223344556677}
}

// unhex reads hex bytes separated by spaces and newlines.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// specDatagram matches one of section 13.2's example datagrams.
var specDatagram = regexp.MustCompile("(?m)^(Probe|Discovery reply) datagram:\\s*\\n+```hex\\n([0-9a-f \\n]+)```")

// TestGolden holds the probe and reply to the bytes docs/protocol.md
// shows (section 13.2), and those bytes to the decoders.
func TestGolden(t *testing.T) {
	spec, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string][]byte{}
	for _, m := range specDatagram.FindAllStringSubmatch(string(spec), -1) {
		doc[m[1]] = unhex(t, m[2])
	}
	probe := AppendProbe(nil, 0x01020304)
	if !bytes.Equal(doc["Probe"], probe) {
		t.Errorf("probe\n%x\nthe spec says\n%x", probe, doc["Probe"])
	}
	if id, ok := ParseProbe(doc["Probe"]); !ok || id != 0x01020304 {
		t.Errorf("the spec's probe parses as %#x, %v", id, ok)
	}
	want := Reply{GamePort: 30006, HostID: 0x0a0b0c0d0e0f1011, ProbeID: 0x01020304, Info: sampleInfo()}
	reply, err := AppendReply(nil, want)
	if err != nil || !bytes.Equal(doc["Discovery reply"], reply) {
		t.Errorf("reply %v\n%x\nthe spec says\n%x", err, reply, doc["Discovery reply"])
	}
	if got, err := DecodeReply(doc["Discovery reply"]); err != nil || got != want {
		t.Errorf("the spec's reply decodes as %+v, %v; want %+v", got, err, want)
	}
}

// TestReplyNeverLarger: the largest reply, both strings at their limit,
// is smaller than the probe that asks for it.
func TestReplyNeverLarger(t *testing.T) {
	info := sampleInfo()
	info.GameName, info.GameVersion = strings.Repeat("n", status.MaxString), strings.Repeat("v", status.MaxString)
	b, err := AppendReply(nil, Reply{GamePort: 65535, HostID: ^uint64(0), ProbeID: 1, Info: info})
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != MaxReplySize || len(b) > ProbeSize {
		t.Errorf("largest reply %d bytes, MaxReplySize %d, probe %d", len(b), MaxReplySize, ProbeSize)
	}
}

// TestParseProbeRefuses: wrong size, magic, version or padding gets no answer.
func TestParseProbeRefuses(t *testing.T) {
	good := AppendProbe(nil, 7)
	for name, p := range map[string][]byte{
		"short":   good[:ProbeSize-1],
		"long":    append(AppendProbe(nil, 7), 0),
		"magic":   append([]byte("LHPQ"), good[4:]...),
		"version": append(append([]byte("LHDQ"), 2), good[5:]...),
		"padding": append(append([]byte{}, good[:ProbeSize-1]...), 1),
		"status":  status.AppendRequest(nil, 7),
	} {
		if _, ok := ParseProbe(p); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

// fakeAddr is a UDP source address for answer.
func fakeAddr(s string) net.Addr { return net.UDPAddrFromAddrPort(netip.MustParseAddrPort(s)) }

// TestRateLimits: a source gets its burst then nothing until time passes,
// and all sources together get the total burst; the clock is the test's.
func TestRateLimits(t *testing.T) {
	r := NewResponder(sampleInfo, Options{GamePort: 30502, Rate: 1, Burst: 3, TotalRate: 1, TotalBurst: 5})
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	probe := AppendProbe(nil, 9)
	answered := func(from string) int {
		n := 0
		for range 10 {
			if _, ok := r.answer(nil, probe, fakeAddr(from)); ok {
				n++
			}
		}
		return n
	}
	if n := answered("192.0.2.1:5000"); n != 3 {
		t.Errorf("one source: %d answers, want its burst 3", n)
	}
	if n := answered("192.0.2.2:5000"); n != 2 {
		t.Errorf("second source: %d answers, want the 2 left of the total burst 5", n)
	}
	now = now.Add(time.Second)
	if n := answered("192.0.2.3:5000"); n != 1 {
		t.Errorf("after a second: %d answers, want 1 (total rate 1/s)", n)
	}
}

// TestAnswerBounds: every answer is a valid reply no larger than the
// probe; a refused source gets none.
func TestAnswerBounds(t *testing.T) {
	r := NewResponder(func() status.Info {
		i := sampleInfo()
		i.GameName = strings.Repeat("é", 100) // clamped to 64 bytes
		return i
	}, Options{GamePort: 1, Accept: LoopbackOnly})
	probe := AppendProbe(nil, 5)
	b, ok := r.answer(nil, probe, fakeAddr("127.0.0.1:9"))
	if !ok || len(b) > len(probe) {
		t.Fatalf("answer ok=%v, %d bytes for a %d-byte probe", ok, len(b), len(probe))
	}
	if rep, err := DecodeReply(b); err != nil || rep.ProbeID != 5 || len(rep.Info.GameName) > status.MaxString || rep.HostID == 0 {
		t.Errorf("reply %v id %d host %#x name %d bytes", err, rep.ProbeID, rep.HostID, len(rep.Info.GameName))
	}
	if _, ok := r.answer(nil, probe, fakeAddr("192.0.2.1:9")); ok {
		t.Error("answered a non-loopback source with LoopbackOnly")
	}
}

// loopback returns the loopback interfaces, the only ones tests probe.
func loopback(t *testing.T) []net.Interface {
	t.Helper()
	ifaces, err := ServedInterfaces(netip.MustParseAddr("127.0.0.1"))
	if err != nil || len(ifaces) == 0 {
		t.Fatalf("no loopback interface: %v %v", ifaces, err)
	}
	return ifaces
}

// serve starts a responder on a free discovery port, on loopback only.
func serve(t *testing.T, info func() status.Info, gamePort uint16) (port int, r *Responder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pcs, err := Listen(ctx, 0, loopback(t))
	if err != nil {
		t.Fatal(err)
	}
	r = NewResponder(info, Options{GamePort: gamePort, Accept: LoopbackOnly})
	for _, pc := range pcs {
		go func() { _ = r.Serve(ctx, pc) }()
	}
	t.Cleanup(func() {
		cancel()
		for _, pc := range pcs {
			pc.Close()
		}
	})
	return pcs[0].LocalAddr().(*net.UDPAddr).Port, r
}

// TestDiscoverLoopback: Discover on the loopback interface finds a host by
// broadcast and multicast and reports its game address and status.
func TestDiscoverLoopback(t *testing.T) {
	port, r := serve(t, sampleInfo, 30777)
	found, err := Discover(context.Background(), DiscoverOptions{Port: port, Interfaces: loopback(t), Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Addr != netip.MustParseAddrPort("127.0.0.1:30777") || found[0].Info != sampleInfo() {
		t.Fatalf("found %+v, want one host at 127.0.0.1:30777 with the sample status", found)
	}
	// Two rounds of probes, each by broadcast and by multicast: four answers.
	replies := waitReplies(r, 2*resends)
	if replies != 2*resends {
		t.Errorf("%d replies, want %d (broadcast and multicast, %d rounds)", replies, 2*resends, resends)
	}
}

// TestEachProbeKind: a probe by IPv4 broadcast, by IPv4 multicast, sent
// straight to the host's address (unicast) and by IPv6 (to ::1: the
// loopback interface carries no IPv6 multicast) each gets one reply, all
// on loopback, whose status reply is of version 1.
func TestEachProbeKind(t *testing.T) {
	port, _ := serve(t, sampleInfo, 30777)
	for _, tc := range []struct {
		name, network, from string
		to                  netip.Addr
	}{
		{"broadcast", "udp4", "127.0.0.1:0", netip.MustParseAddr("127.255.255.255")},
		{"multicast", "udp4", "127.0.0.1:0", Group4},
		{"unicast", "udp4", "127.0.0.1:0", netip.MustParseAddr("127.0.0.1")},
		{"ipv6", "udp6", "[::1]:0", netip.MustParseAddr("::1")},
	} {
		pc, err := net.ListenPacket(tc.network, tc.from)
		if err != nil && tc.network == "udp6" {
			t.Logf("no IPv6 loopback here, IPv6 probe not tried: %v", err)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		defer pc.Close()
		if tc.to.IsMulticast() {
			if err := setMulticastInterface(pc, netip.MustParseAddr("127.0.0.1")); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := pc.WriteTo(AppendProbe(nil, 77), net.UDPAddrFromAddrPort(netip.AddrPortFrom(tc.to, uint16(port)))); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, ProbeSize)
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("%s: no reply: %v", tc.name, err)
		}
		if rep, err := DecodeReply(buf[:n]); err != nil || rep.GamePort != 30777 || rep.ProbeID != 77 {
			t.Errorf("%s: reply port %d id %d err %v", tc.name, rep.GamePort, rep.ProbeID, err)
		}
		if v := buf[replyHeader+4]; v != status.Version {
			t.Errorf("%s: the status reply inside is of version %d, want %d", tc.name, v, status.Version)
		}
	}
}

func TestBroadcastAddress(t *testing.T) {
	for in, want := range map[string]string{"192.0.2.7/24": "192.0.2.255", "127.0.0.1/8": "127.255.255.255", "10.1.2.3/30": "10.1.2.3"} {
		got, ok := broadcast(netip.MustParsePrefix(in))
		if !ok || got.String() != want {
			t.Errorf("broadcast(%s) = %v %v, want %s", in, got, ok, want)
		}
	}
	if _, ok := broadcast(netip.MustParsePrefix("192.0.2.7/32")); ok {
		t.Error("a /32 has a broadcast address")
	}
}

// waitReplies waits up to 5 s for r to have sent want replies and returns
// how many it sent.
func waitReplies(r *Responder, want uint64) uint64 {
	for range 500 {
		if n, _ := r.Stats(); n >= want {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
	n, _ := r.Stats()
	return n
}

// TestOneHostManyAddresses: replies carrying one host ID are one host,
// joined at its best address (loopback, IPv4, IPv6, link-local last);
// another host ID of the same name is another host.
func TestOneHostManyAddresses(t *testing.T) {
	d := &discovery{found: map[uint64]*Found{}}
	a := Reply{GamePort: 30502, HostID: 1, Info: sampleInfo()}
	for _, from := range []string{"[fe80::9f:8bff:fe1c:f89]:30502", "[2001:db8::5]:30502", "192.0.2.10:30502", "192.0.2.10:30502"} {
		d.add(a, netip.MustParseAddrPort(from))
	}
	b := a
	b.HostID = 2
	d.add(b, netip.MustParseAddrPort("192.0.2.11:30502"))
	found := d.sorted()
	if len(found) != 2 {
		t.Fatalf("found %d hosts, want 2: %+v", len(found), found)
	}
	one := found[0]
	if one.Addr.String() != "192.0.2.10:30502" || len(one.Also) != 2 ||
		one.Also[0].String() != "[2001:db8::5]:30502" || one.Also[1].String() != "[fe80::9f:8bff:fe1c:f89]:30502" {
		t.Errorf("host 1 at %v, also %v; want 192.0.2.10 first, then the global IPv6, then the link-local one", one.Addr, one.Also)
	}
	if found[1].Addr.String() != "192.0.2.11:30502" || len(found[1].Also) != 0 {
		t.Errorf("host 2: %+v", found[1])
	}
	d.add(a, netip.MustParseAddrPort("127.0.0.1:30502"))
	if got := d.sorted()[0].Addr.String(); got != "127.0.0.1:30502" {
		t.Errorf("with a loopback reply the host is joined at %s, want 127.0.0.1:30502", got)
	}
}

// TestManySourcesBounded: probes from 300 loopback addresses at once, five
// each, over real sockets. Every source is within its own limit, so only
// the limit on all sources together, and the allowance for new sources
// beyond it, hold the host back: it answers at most their bursts plus
// their rates over the time the flood took (measured after, so a slow
// machine only loosens the bound), and answers the probes it can.
func TestManySourcesBounded(t *testing.T) {
	port, r := serve(t, sampleInfo, 30777)
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
	probe := AppendProbe(nil, 3)
	start := time.Now()
	sent := 0
	for i := range 300 {
		from := netip.AddrFrom4([4]byte{127, 0, byte(1 + i/250), byte(1 + i%250)})
		pc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(from, 0)))
		if err != nil {
			t.Fatalf("source %v: %v", from, err)
		}
		for range 5 {
			if _, err := pc.WriteTo(probe, to); err == nil {
				sent++
			}
		}
		pc.Close()
	}
	waitReplies(r, DefaultTotalBurst)
	time.Sleep(100 * time.Millisecond) // let the responder finish what it read
	elapsed := time.Since(start)
	replies, dropped := r.Stats()
	bound := uint64(DefaultTotalBurst + DefaultNewBurst + (DefaultTotalRate+DefaultNewRate)*elapsed.Seconds() + 1)
	t.Logf("%d probes from 300 addresses in %v: %d answered, %d dropped (bound %d)", sent, elapsed.Round(time.Millisecond), replies, dropped, bound)
	if replies > bound {
		t.Fatalf("%d replies to %d probes from 300 addresses in %v, over the total limit's and new sources' %d", replies, sent, elapsed, bound)
	}
	if replies < DefaultTotalBurst {
		t.Fatalf("%d replies, fewer than the total burst %d: the host stopped answering", replies, DefaultTotalBurst)
	}
}

// TestNewSourceThroughFlood: while 300 sources, each within its own
// limit, probe once a second and spend the limit on all sources together,
// a source not answered lately (an honest prober's new socket) is still
// answered, ahead of that limit, from an allowance that is itself
// bounded: the flood gets no more than the total limit plus the
// allowance, and a source answered lately waits for the total like the
// flood. The clock is the test's.
func TestNewSourceThroughFlood(t *testing.T) {
	r := NewResponder(sampleInfo, Options{GamePort: 30502})
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	probe := AppendProbe(nil, 9)
	ask := func(from string) bool {
		_, ok := r.answer(nil, probe, fakeAddr(from))
		return ok
	}
	flood := func() (answered int) {
		for i := range 300 {
			if ask(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i / 250), byte(1 + i%250)}), 40000).String()) {
				answered++
			}
		}
		return answered
	}
	for second := range 12 { // time for every flood source to be answered once
		if n := flood(); n > DefaultTotalBurst+DefaultNewBurst {
			t.Fatalf("second %d: the flood got %d answers, over the total burst %d plus the new sources' %d",
				second, n, DefaultTotalBurst, DefaultNewBurst)
		}
		now = now.Add(time.Second)
	}
	// Every flood source has been answered lately; the total is spent.
	if n := flood(); n > DefaultTotalRate {
		t.Fatalf("the flood got %d answers in a second, over the total rate %d", n, DefaultTotalRate)
	}
	if !ask("127.0.0.1:50001") {
		t.Fatal("an honest prober's new socket was not answered during the flood")
	}
	if ask("127.0.0.1:50001") {
		t.Fatal("a source answered a moment ago was answered ahead of the spent total limit")
	}
	if !ask("127.0.0.1:50002") {
		t.Fatal("the prober's next socket (its next discovery) was not answered")
	}
	fresh := 0
	for i := range 100 {
		if ask(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, 0, byte(1 + i)}), 40000).String()) {
			fresh++
		}
	}
	if fresh > DefaultNewBurst {
		t.Fatalf("100 new sources at once got %d answers, over the new sources' burst %d", fresh, DefaultNewBurst)
	}
}

// TestDiscoverProbesAgainWhenUnanswered: a discovery that hears nothing
// sends its probes again, more rounds than one that is answered, and no
// more than one source's burst in all; on loopback only.
func TestDiscoverProbesAgainWhenUnanswered(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pcs, err := Listen(ctx, 0, loopback(t))
	if err != nil {
		t.Fatal(err)
	}
	var probes atomic.Int32
	for _, pc := range pcs {
		defer pc.Close()
		go func() {
			buf := make([]byte, ProbeSize+1)
			for {
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					return
				}
				if _, ok := ParseProbe(buf[:n]); ok {
					probes.Add(1)
				}
			}
		}()
	}
	port := pcs[0].LocalAddr().(*net.UDPAddr).Port
	found, err := Discover(ctx, DiscoverOptions{Port: port, Interfaces: loopback(t), Wait: time.Second})
	if err != nil || len(found) != 0 {
		t.Fatalf("found %v, %v; want nothing", found, err)
	}
	time.Sleep(50 * time.Millisecond) // the last probe's way through loopback
	n := int(probes.Load())
	t.Logf("%d probes heard (broadcast and multicast each round)", n)
	if n <= 2*resends {
		t.Fatalf("%d probes from a discovery that heard nothing, no more than the %d of one that is answered", n, 2*resends)
	}
	if n > DefaultBurst {
		t.Fatalf("%d probes from one discovery, over one source's burst of %d", n, DefaultBurst)
	}
}

// TestNewSourceWindow: a source answered lately is not new; one
// answered recentWindow ago is new again, and the responder forgets the
// sources it answered longer ago than that. The clock is the test's.
func TestNewSourceWindow(t *testing.T) {
	r := NewResponder(sampleInfo, Options{GamePort: 30502, TotalRate: 0.001, TotalBurst: 1, NewRate: 0.001, NewBurst: 1})
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	probe := AppendProbe(nil, 9)
	ask := func(from string) bool {
		_, ok := r.answer(nil, probe, fakeAddr(from))
		return ok
	}
	if !ask("192.0.2.1:1") || ask("192.0.2.1:1") {
		t.Fatal("a source answered a moment ago, the total spent, was answered again")
	}
	if !ask("192.0.2.2:1") {
		t.Fatal("a new source, the total spent, was not answered from the allowance")
	}
	now = now.Add(recentWindow - time.Second)
	if ask("192.0.2.3:1") {
		t.Fatal("a new source was answered with the total and the allowance spent")
	}
	r.fresh = ratelimit.Bucket{} // a full allowance again, the total still spent
	if ask("192.0.2.1:1") {
		t.Fatalf("a source answered %v ago passed for new", recentWindow-time.Second)
	}
	now = now.Add(time.Second)
	if !ask("192.0.2.1:1") {
		t.Fatalf("a source answered %v ago did not pass for new", recentWindow)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.answered[netip.MustParseAddrPort("192.0.2.2:1")]; ok || len(r.answered) != 1 {
		t.Fatalf("after the window the responder remembers %d sources, want only the one just answered", len(r.answered))
	}
}

// TestUpInterfaces: discovery probes the interfaces that are up and
// running; one administratively up without a carrier (a bridge with
// nothing on it) or down is left out.
func TestUpInterfaces(t *testing.T) {
	all := []net.Interface{
		{Name: "lo", Flags: net.FlagUp | net.FlagRunning | net.FlagLoopback},
		{Name: "eth0", Flags: net.FlagUp | net.FlagRunning | net.FlagBroadcast | net.FlagMulticast},
		{Name: "cni-podman0", Flags: net.FlagUp | net.FlagBroadcast | net.FlagMulticast},
		{Name: "eth1", Flags: net.FlagBroadcast | net.FlagMulticast},
	}
	var got []string
	for _, ifi := range upInterfaces(all) {
		got = append(got, ifi.Name)
	}
	if want := []string{"lo", "eth0"}; !slices.Equal(got, want) {
		t.Errorf("probed %v, want %v", got, want)
	}
}
