package coord

import (
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestOwners: a code belongs to the first key that registers it, across
// a restart of the coordinator, until its host stays away for the TTL;
// the table is bounded.
func TestOwners(t *testing.T) {
	file := filepath.Join(t.TempDir(), "owners.json")
	now := time.Unix(1700000000, 0)
	o, err := loadOwners(file, time.Hour, 2, now)
	if err != nil {
		t.Fatal(err)
	}
	a, b := Code("+K7QF2MX"), Code("+2222222")
	steps := []struct {
		code Code
		key  string
		at   time.Duration
		ok   bool
	}{
		{a, "k1", 0, true},
		{a, "k2", time.Minute, false}, // another key with the same code
		{a, "k1", 2 * time.Minute, true},
		{b, "k2", 3 * time.Minute, true},
		{Code("+3333333"), "k3", 4 * time.Minute, false}, // the table is full
	}
	for i, s := range steps {
		if err := o.claim(s.code, s.key, now.Add(s.at)); (err == nil) != s.ok {
			t.Fatalf("step %d: claim %s by %s: %v, want ok=%v", i, s.code, s.key, err, s.ok)
		}
	}
	// A restart reads the file: the code is still k1's.
	later := now.Add(5 * time.Hour)
	o2, err := loadOwners(file, time.Hour, 2, later)
	if err != nil {
		t.Fatal(err)
	}
	if err := o2.claim(a, "k2", later.Add(time.Minute)); err == nil {
		t.Fatal("after a restart another key took a held code")
	}
	// Its host away for the TTL, the code is free.
	o2.seen(a, "k1", later.Add(time.Minute))
	if err := o2.claim(a, "k2", later.Add(time.Minute+time.Hour)); err != nil {
		t.Fatalf("a code unseen for the TTL: %v", err)
	}
	os.WriteFile(file, []byte(`{"not a code":{"key":"k","seen":"2026-01-01T00:00:00Z"}}`), 0o600)
	if _, err := loadOwners(file, time.Hour, 2, now); err == nil {
		t.Fatal("an owners file with a bad code was read")
	}
}

// TestRegisterSignature: a register must sign this connection's
// challenge with the key it names.
func TestRegisterSignature(t *testing.T) {
	secret, _ := NewSecret()
	h := &Host{key: KeyOf(secret), cfg: HostConfig{Reach: func() Reach { return Reach{} }}}
	m := h.registerMsg("bm9uY2Ux")
	if pub, err := verifyRegister(m, "bm9uY2Ux"); err != nil || CodeOf(pub) != CodeOfSecret(secret) {
		t.Fatalf("a good register: %v", err)
	}
	if _, err := verifyRegister(m, "bm9uY2Uy"); err == nil {
		t.Fatal("a register signing another challenge was taken")
	}
	other, _ := NewSecret()
	m.Key = base64.RawURLEncoding.EncodeToString(KeyOf(other).Public().(ed25519.PublicKey))
	if _, err := verifyRegister(m, "bm9uY2Ux"); err == nil {
		t.Fatal("a register whose key did not sign it was taken")
	}
}
