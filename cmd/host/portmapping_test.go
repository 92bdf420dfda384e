package main

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/transport/portmap"
)

// TestPlanPortMapping: auto asks a router only when the listen address is
// eligible and the host is not under Agones; off never asks; a value
// other than auto, upnp, nat-pmp or off is a usage error.
func TestPlanPortMapping(t *testing.T) {
	eligible := func(listen string) (bool, string) {
		if strings.HasPrefix(listen, "127.") {
			return false, "the host listens on loopback only"
		}
		return true, ""
	}
	for _, tc := range []struct {
		value, listen string
		agones        bool
		method, why   string
	}{
		{"auto", ":30502", false, "auto", ""},
		{"auto", "127.0.0.1:30502", false, "", "loopback"},
		{"upnp", "192.168.1.5:30502", false, "upnp", ""},
		{"nat-pmp", "127.0.0.1:30502", false, "", "loopback"},
		{"auto", ":30502", true, "", "Agones"},
		{"off", ":30502", false, "", ""},
	} {
		plan, err := planPortMapping(tc.value, tc.listen, tc.agones, eligible)
		if err != nil || string(plan.method) != tc.method || !strings.Contains(plan.why, tc.why) || (tc.why == "") != (plan.why == "") {
			t.Errorf("%s on %s (agones %v): %+v, %v; want method %q, why %q", tc.value, tc.listen, tc.agones, plan, err, tc.method, tc.why)
		}
	}
	if _, err := planPortMapping("pcp", ":1", false, eligible); err == nil || !strings.Contains(err.Error(), "auto, upnp, nat-pmp or off") {
		t.Errorf("--port-mapping pcp: %v; want a usage error naming the choices", err)
	}
}

// TestPortMappingUsage: serve refuses a bad --port-mapping before it opens
// a port or makes a world.
func TestPortMappingUsage(t *testing.T) {
	dir := t.TempDir()
	code, out := runTool(t, hostBinary(t), "serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--port-mapping", "always")
	if code != cliutil.ExitUsage || !strings.Contains(out, `--port-mapping "always": use auto, upnp, nat-pmp or off`) {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// TestMappingStatesReachTheStatusQuery: every state of a port mapping has
// a name the status query's version 2 reply carries.
func TestMappingStatesReachTheStatusQuery(t *testing.T) {
	for st := portmap.Off; st <= portmap.Removed; st++ {
		if m := status.ParseMapping(st.String()); m == status.MappingUnknown || m.String() != st.String() {
			t.Errorf("mapping state %q is %v in the status reply", st, m)
		}
	}
}

// TestNoPortMappingSaysOff: a host that asks no router (--port-mapping
// off, or a listen address no router serves) says so in the status
// query's version 2 reply: mapping 1, off, never 0, unknown (section
// 13.1), and no external address.
func TestNoPortMappingSaysOff(t *testing.T) {
	if got := (&serving{}).reach(); got != (status.Reach{Mapping: status.MappingOff}) {
		t.Errorf("without a port mapping the reply says %+v; want off and no address", got)
	}
}

// TestBrowserHint: once the router forwards the game port, a host whose
// --http listener other machines reach says how a friend on the internet
// plays in a browser: that port is not mapped, so it is forwarded by
// hand, and the address to send is the mapped one. A loopback listener,
// or none, gets no hint.
func TestBrowserHint(t *testing.T) {
	ext := netip.MustParseAddrPort("203.0.113.7:30502")
	hint := browserHint(ext, &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080})
	for _, want := range []string{"forward TCP port 8080 (--http)", "send http://203.0.113.7:8080/play", web.TokenEnv} {
		if !strings.Contains(hint, want) {
			t.Errorf("hint %q lacks %q", hint, want)
		}
	}
	if h := browserHint(ext, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}); h != "" {
		t.Errorf("loopback listener: hint %q, want none", h)
	}
	if h := browserHint(ext, nil); h != "" {
		t.Errorf("no listener: hint %q, want none", h)
	}
}
