package host_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/tlsid"
)

// TestTLSJoinAndPinning: over TLS a joiner trusts the host on first use
// and plays in sync; a later joiner with another pin is refused with both
// fingerprints, and a plain-protocol client gets nowhere; the player in
// the session is not disturbed.
func TestTLSJoinAndPinning(t *testing.T) {
	cert, created, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil || !created {
		t.Fatalf("identity: %v (created %v)", err, created)
	}
	fp := tlsid.Fingerprint(cert)
	h := startHost(t, host.Config{Admission: host.AdmissionConfig{TLS: tlsid.ServerConfig(cert)}}, locksteptest.New(2, 256))
	known := &tlsid.KnownHosts{Path: filepath.Join(t.TempDir(), "known_hosts")}

	cfg, learned := tlsid.ClientConfig(h.addr, "", known)
	alice := startJoiner(t, h.addr, "Alice", func(c *join.Config) { c.TLS = cfg })
	got, isNew := learned()
	if got != fp || !isNew {
		t.Fatalf("learned %q new=%v, host is %q", got, isNew, fp)
	}
	if err := known.Remember(h.addr, got); err != nil {
		t.Fatal(err)
	}

	// Bob comes back knowing the host: pinned by the file.
	cfg2, learned2 := tlsid.ClientConfig(h.addr, "", known)
	startJoiner(t, h.addr, "Bob", func(c *join.Config) { c.TLS = cfg2 })
	if _, isNew := learned2(); isNew {
		t.Fatal("a known host counted as new")
	}

	// Mallory pins another certificate.
	other, _, err := tlsid.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := tlsid.ClientConfig(h.addr, tlsid.Fingerprint(other), known)
	c := joinCfg(h.addr, "Mallory", newHashLog())
	c.TLS = bad
	_, err = join.Join(context.Background(), c)
	var me *tlsid.MismatchError
	if !errors.As(err, &me) || me.Got != fp || me.Known != tlsid.Fingerprint(other) {
		t.Fatalf("wrong pin: %v, want a mismatch naming both fingerprints", err)
	}
	if !strings.Contains(err.Error(), fp) || !strings.Contains(err.Error(), tlsid.Fingerprint(other)) {
		t.Fatalf("message %q lacks a fingerprint", err)
	}

	// A client speaking the plain protocol to a TLS host fails cleanly.
	plain := joinCfg(h.addr, "Plain", newHashLog())
	plain.HandshakeTimeout = 2e9
	if _, err := join.Join(context.Background(), plain); err == nil {
		t.Fatal("a plain client joined a TLS host")
	}

	next := (hostTick(h)/60 + 2) * 60
	checkSameHashes(t, h, next, alice)
	select {
	case err := <-alice.errc:
		t.Fatalf("Alice left: %v", err)
	default:
	}
}
