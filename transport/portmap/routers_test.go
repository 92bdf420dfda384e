package portmap

import (
	"context"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNATPMP answers NAT-PMP (RFC 6886) on loopback UDP port 5351 and
// keeps the mappings it granted.
type fakeNATPMP struct {
	conn *net.UDPConn
	ext  [4]byte

	mu     sync.Mutex
	leases map[mapKey]uint32 // granted lifetime per mapping
	asks   int
}

// startFakeNATPMP listens on a random 127/8 address (NAT-PMP's port is
// fixed, so tests in parallel need addresses of their own; Linux answers
// on all of 127/8).
func startFakeNATPMP(t *testing.T) (*fakeNATPMP, netip.Addr) {
	t.Helper()
	gw := netip.AddrFrom4([4]byte{127, 53, byte(rand.IntN(250) + 1), byte(rand.IntN(250) + 1)})
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(gw, 5351)))
	if err != nil {
		t.Skipf("no loopback address for a fake NAT-PMP router: %v", err)
	}
	f := &fakeNATPMP{conn: conn, ext: [4]byte{198, 51, 100, 20}, leases: map[mapKey]uint32{}}
	t.Cleanup(func() { conn.Close() })
	go f.serve()
	return f, gw
}

func (f *fakeNATPMP) serve() {
	buf := make([]byte, 64)
	for {
		n, from, err := f.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if reply := f.answer(buf[:n]); reply != nil {
			_, _ = f.conn.WriteToUDP(reply, from)
		}
	}
}

// answer is the reply to one request: opcode 0 (external address) or 1
// and 2 (map UDP, TCP; lifetime 0 deletes).
func (f *fakeNATPMP) answer(req []byte) []byte {
	if len(req) < 2 || req[0] != 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asks++
	switch op := req[1]; {
	case op == 0 && len(req) == 2:
		r := make([]byte, 12)
		r[1] = 128
		copy(r[8:], f.ext[:])
		return r
	case (op == 1 || op == 2) && len(req) == 12:
		proto := map[byte]Protocol{1: UDP, 2: TCP}[op]
		internal := binary.BigEndian.Uint16(req[4:6])
		ext := binary.BigEndian.Uint16(req[6:8])
		life := binary.BigEndian.Uint32(req[8:12])
		if life == 0 {
			for k := range f.leases {
				if k.proto == proto {
					delete(f.leases, k)
				}
			}
			ext = 0
		} else {
			life = min(life, 120) // this router grants two minutes at most
			f.leases[mapKey{proto, ext}] = life
		}
		r := make([]byte, 16)
		r[1] = 128 + op
		binary.BigEndian.PutUint16(r[8:], internal)
		binary.BigEndian.PutUint16(r[10:], ext)
		binary.BigEndian.PutUint32(r[12:], life)
		return r
	}
	return nil
}

func (f *fakeNATPMP) mappings() map[mapKey]uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[mapKey]uint32{}
	for k, v := range f.leases {
		out[k] = v
	}
	return out
}

func TestNATPMPMapsRenewsAndRemoves(t *testing.T) {
	fake, gw := startFakeNATPMP(t)
	router, err := Find(context.Background(), NATPMP, gw)
	if err != nil {
		t.Fatal(err)
	}
	if router.Method() != "NAT-PMP" {
		t.Fatalf("method %q", router.Method())
	}
	clock := newFakeClock()
	m, err := Start(context.Background(), Config{Router: router, Port: 30502, UDP: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	want := map[mapKey]uint32{{TCP, 30502}: 120, {UDP, 30502}: 120}
	if got := fake.mappings(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("router holds %v; want %v", got, want)
	}
	if st := m.Status(); st.State != Mapped || st.External.String() != "198.51.100.20:30502" || st.Lease != 2*time.Minute {
		t.Fatalf("status %+v", st)
	}
	if d := clock.next(t); d != time.Minute {
		t.Fatalf("renewal due after %v; want 1m, half the lease the router granted", d)
	}
	clock.fire <- time.Time{}
	clock.next(t)
	if st := m.Status(); st.Renewals != 1 || st.State != Mapped {
		t.Fatalf("after a renewal: %+v", st)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fake.mappings(); len(got) != 0 {
		t.Fatalf("after Close the router still holds %v", got)
	}
}

// fakeIGD is a UPnP-IGD root device and its connection service over
// loopback HTTP, answering the SOAP actions a Mapper sends.
type fakeIGD struct {
	srv     *httptest.Server
	service string // the service type, WANIPConnection:1 or :2
	// permanentOnly refuses leases other than 0 (error 725), as many IGD
	// v1 routers do.
	permanentOnly bool

	mu      sync.Mutex
	mapped  map[mapKey]string // → internal client:port and lease
	actions []string
}

func startFakeIGD(t *testing.T, version int, permanentOnly bool) *fakeIGD {
	t.Helper()
	f := &fakeIGD{service: "urn:schemas-upnp-org:service:WANIPConnection:" + strconv.Itoa(version),
		permanentOnly: permanentOnly, mapped: map[mapKey]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/root.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, rootXML, version, version, version, f.service)
	})
	mux.HandleFunc("/ctl", f.control)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

const rootXML = `<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0"><specVersion><major>1</major><minor>0</minor></specVersion>
<device><deviceType>urn:schemas-upnp-org:device:InternetGatewayDevice:%d</deviceType><friendlyName>fake</friendlyName>
<deviceList><device><deviceType>urn:schemas-upnp-org:device:WANDevice:%d</deviceType>
<deviceList><device><deviceType>urn:schemas-upnp-org:device:WANConnectionDevice:%d</deviceType>
<serviceList><service><serviceType>%s</serviceType><serviceId>urn:upnp-org:serviceId:WANIPConn1</serviceId>
<controlURL>/ctl</controlURL><eventSubURL>/evt</eventSubURL><SCPDURL>/scpd.xml</SCPDURL></service></serviceList>
</device></deviceList></device></deviceList></device></root>`

// soapArgs are the arguments of one SOAP action.
type soapArgs struct {
	Body struct {
		Action struct {
			XMLName xml.Name
			Args    []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
			} `xml:",any"`
		} `xml:",any"`
	} `xml:"Body"`
}

func (f *fakeIGD) control(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var env soapArgs
	if err := xml.Unmarshal(body, &env); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	args := map[string]string{}
	for _, a := range env.Body.Action.Args {
		args[a.XMLName.Local] = a.Value
	}
	action := env.Body.Action.XMLName.Local
	f.mu.Lock()
	defer f.mu.Unlock()
	f.actions = append(f.actions, action)
	out := ""
	switch action {
	case "GetExternalIPAddress":
		out = "<NewExternalIPAddress>203.0.113.9</NewExternalIPAddress>"
	case "AddPortMapping":
		if f.permanentOnly && args["NewLeaseDuration"] != "0" {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, soapFault(725, "OnlyPermanentLeasesSupported"))
			return
		}
		ext, _ := strconv.Atoi(args["NewExternalPort"])
		f.mapped[mapKey{Protocol(args["NewProtocol"]), uint16(ext)}] =
			args["NewInternalClient"] + ":" + args["NewInternalPort"] + " lease " + args["NewLeaseDuration"]
	case "DeletePortMapping":
		ext, _ := strconv.Atoi(args["NewExternalPort"])
		delete(f.mapped, mapKey{Protocol(args["NewProtocol"]), uint16(ext)})
	default:
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, soapFault(401, "Invalid Action"))
		return
	}
	fmt.Fprintf(w, `<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" `+
		`s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body><u:%sResponse xmlns:u="%s">%s</u:%sResponse>`+
		`</s:Body></s:Envelope>`, action, f.service, out, action)
}

func soapFault(code int, desc string) string {
	return fmt.Sprintf(`<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>`+
		`<s:Fault><faultcode>s:Client</faultcode><faultstring>UPnPError</faultstring><detail>`+
		`<UPnPError xmlns="urn:schemas-upnp-org:control-1-0"><errorCode>%d</errorCode><errorDescription>%s</errorDescription>`+
		`</UPnPError></detail></s:Fault></s:Body></s:Envelope>`, code, desc)
}

func (f *fakeIGD) state() (map[mapKey]string, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[mapKey]string{}
	for k, v := range f.mapped {
		m[k] = v
	}
	return m, append([]string(nil), f.actions...)
}

func TestUPnPIGDv2MapsRenewsAndRemoves(t *testing.T) {
	fake := startFakeIGD(t, 2, false)
	root, _ := url.Parse(fake.srv.URL + "/root.xml")
	router, err := NewUPnPByURL(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if router.Method() != "UPnP-IGD v2" {
		t.Fatalf("method %q; want UPnP-IGD v2", router.Method())
	}
	clock := newFakeClock()
	m, err := Start(context.Background(), Config{Router: router, Port: 30502, UDP: true, Lease: 10 * time.Minute, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	mapped, _ := fake.state()
	want := map[mapKey]string{{TCP, 30502}: "127.0.0.1:30502 lease 600", {UDP, 30502}: "127.0.0.1:30502 lease 600"}
	if fmt.Sprint(mapped) != fmt.Sprint(want) {
		t.Fatalf("router holds %v; want %v", mapped, want)
	}
	if st := m.Status(); st.External.String() != "203.0.113.9:30502" || st.Lease != 10*time.Minute {
		t.Fatalf("status %+v", st)
	}
	if d := clock.next(t); d != 5*time.Minute {
		t.Fatalf("renewal due after %v; want 5m", d)
	}
	clock.fire <- time.Time{}
	clock.next(t)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	mapped, actions := fake.state()
	if len(mapped) != 0 {
		t.Fatalf("after Close the router still holds %v", mapped)
	}
	wantActions := "AddPortMapping AddPortMapping GetExternalIPAddress AddPortMapping AddPortMapping GetExternalIPAddress DeletePortMapping DeletePortMapping"
	if got := strings.Join(actions, " "); got != wantActions {
		t.Fatalf("actions:\n%s\nwant:\n%s", got, wantActions)
	}
}

func TestUPnPIGDv1PermanentOnlyLease(t *testing.T) {
	fake := startFakeIGD(t, 1, true)
	root, _ := url.Parse(fake.srv.URL + "/root.xml")
	router, err := NewUPnPByURL(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if router.Method() != "UPnP-IGD v1" {
		t.Fatalf("method %q; want UPnP-IGD v1", router.Method())
	}
	clock := newFakeClock()
	m, err := Start(context.Background(), Config{Router: router, Port: 4000, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if mapped, _ := fake.state(); mapped[mapKey{TCP, 4000}] != "127.0.0.1:4000 lease 0" {
		t.Fatalf("router holds %v; want a lease without end after error 725", mapped)
	}
	if d := clock.next(t); d != permanentRenew {
		t.Fatalf("renewal of a lease without end due after %v; want %v", d, permanentRenew)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if mapped, _ := fake.state(); len(mapped) != 0 {
		t.Fatalf("after Close the router still holds %v", mapped)
	}
}

func TestEligible(t *testing.T) {
	for _, tc := range []struct {
		listen string
		ok     bool
		why    string
	}{
		{"127.0.0.1:30502", false, "loopback"},
		{"[::1]:30502", false, "loopback"},
		{"192.168.1.20:30502", true, ""},
		{"192.0.2.10:30502", true, ""},
		{"198.18.0.1:30502", false, "not behind a home router"},
		// An unspecified listener takes the address toward the gateway:
		// here loopback, which no router hands out.
		{":30502", false, "127.0.0.1 is not behind a home router"},
	} {
		ok, why := Eligible(tc.listen, netip.MustParseAddr("127.0.0.1"))
		if ok != tc.ok || !strings.Contains(why, tc.why) {
			t.Errorf("Eligible(%q) = %v, %q; want %v, %q", tc.listen, ok, why, tc.ok, tc.why)
		}
	}
}

func TestLinuxGateway(t *testing.T) {
	table := "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
		"eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n" +
		"eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
	path := filepath.Join(t.TempDir(), "route")
	if err := os.WriteFile(path, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	gw, err := linuxGateway(path)
	if err != nil || gw.String() != "192.0.2.1" {
		t.Fatalf("gateway %v, %v; want 192.0.2.1", gw, err)
	}
	if err := os.WriteFile(path, []byte(table[:strings.LastIndex(table[:len(table)-1], "\n")+1]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := linuxGateway(path); err != errNoGateway {
		t.Fatalf("a table without a default route: %v; want errNoGateway", err)
	}
}
