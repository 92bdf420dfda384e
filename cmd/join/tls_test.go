package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/tlsid"
)

// TestJoinTLSPinning runs the tool against a TLS host: the first join
// trusts and pins the certificate, a wrong --fingerprint is refused loudly
// with both fingerprints (exit 3), and so is a host whose certificate no
// longer matches the pinned one.
func TestJoinTLSPinning(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	cert, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fp := tlsid.Fingerprint(cert)
	addr := serveBundle(t, b, func(c *host.Config) { c.Admission.TLS = tlsid.ServerConfig(cert) })
	known := filepath.Join(t.TempDir(), "known_hosts")

	code, out, errOut := runJoin(t, addr, "--name", "Alice", "-q", "--exit-after-ready", "--tls", "--known-hosts", known)
	if code != 0 || !strings.Contains(out, "WorldReady") || !strings.Contains(errOut, "trusting "+addr+" on first use: certificate "+fp) {
		t.Fatalf("first TLS join: exit %d\n%s\n%s", code, out, errOut)
	}
	// Another name: the host may not have seen Alice's connection close yet,
	// and would refuse a second Alice as already online.
	if code, _, errOut = runJoin(t, addr, "--name", "Bob", "-q", "--exit-after-ready", "--tls", "--known-hosts", known); code != 0 || strings.Contains(errOut, "trusting") {
		t.Fatalf("second TLS join: exit %d\n%s", code, errOut)
	}

	other, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wrong := tlsid.Fingerprint(other)
	code, _, errOut = runJoin(t, addr, "--name", "Alice", "-q", "--exit-after-ready", "--tls", "--known-hosts", known, "--fingerprint", wrong)
	if code != cliutil.ExitRejected || !strings.Contains(errOut, fp) || !strings.Contains(errOut, wrong) {
		t.Fatalf("wrong --fingerprint: exit %d, stderr:\n%s", code, errOut)
	}

	// The host makes a new key: the pinned one no longer matches.
	addr2 := serveBundle(t, b, func(c *host.Config) { c.Admission.TLS = tlsid.ServerConfig(other) })
	if err := (&tlsid.KnownHosts{Path: known}).Remember(addr2, fp); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runJoin(t, addr2, "--name", "Alice", "-q", "--exit-after-ready", "--tls", "--known-hosts", known)
	if code != cliutil.ExitRejected || !strings.Contains(errOut, fp) || !strings.Contains(errOut, wrong) || !strings.Contains(errOut, known) {
		t.Fatalf("changed certificate: exit %d, stderr:\n%s", code, errOut)
	}
	t.Logf("refusal as printed:\n%s", errOut)
}
