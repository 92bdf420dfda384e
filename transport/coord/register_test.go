package coord

import (
	"crypto/ed25519"
	"encoding/base64"
	"testing"
	"time"
)

// TestOwners: a code belongs to the first key that registers it, across
// a restart of the coordinator, until its host stays away for the TTL;
// the table is bounded.
// TestRegisterSignature: a register must sign this connection's
// challenge with the key it names.
func TestRegisterSignature(t *testing.T) {
	secret, _ := NewSecret()
	h := &Host{key: KeyOf(secret), cfg: HostConfig{Reach: func() Reach { return Reach{} }}}
	m := h.registerMsg("bm9uY2Ux")
	if pub, err := VerifyRegister(m, "bm9uY2Ux"); err != nil || CodeOf(pub) != CodeOfSecret(secret) {
		t.Fatalf("a good register: %v", err)
	}
	if _, err := VerifyRegister(m, "bm9uY2Uy"); err == nil {
		t.Fatal("a register signing another challenge was taken")
	}
	other, _ := NewSecret()
	m.Key = base64.RawURLEncoding.EncodeToString(KeyOf(other).Public().(ed25519.PublicKey))
	if _, err := VerifyRegister(m, "bm9uY2Ux"); err == nil {
		t.Fatal("a register whose key did not sign it was taken")
	}
}

// TestRenewEvery: a host registers again at half its TURN credentials'
// lifetime, at most once a minute, and not at all without them.
func TestRenewEvery(t *testing.T) {
	for _, c := range []struct {
		turn *TURN
		want time.Duration
	}{
		{nil, 0},
		{&TURN{TTL: 0}, 0},
		{&TURN{TTL: 3600}, 30 * time.Minute},
		{&TURN{TTL: 10}, time.Minute},
	} {
		if got := renewEvery(c.turn); got != c.want {
			t.Errorf("renewEvery(%+v) = %v, want %v", c.turn, got, c.want)
		}
	}
}
