package password

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestArbiterProof checks the arbiter proof against the spec's example
// (docs/protocol.md, section 14.2) and that it is not the password's
// proof of the same bytes.
func TestArbiterProof(t *testing.T) {
	secret := []byte("correct horse battery")
	challenge := bytes.Repeat([]byte{0x33}, ChallengeSize)
	p := ArbiterProof(secret, challenge)
	if got, want := hex.EncodeToString(p), "cc7f52b04cb8b7c4e7df5a6f46c9f4391cf32ce56de390af5f1cda58b816427e"; got != want {
		t.Errorf("ArbiterProof = %s, want the spec's %s", got, want)
	}
	if bytes.Equal(p, Proof(secret, challenge)) {
		t.Error("the arbiter proof equals the password proof of the same secret and challenge")
	}
	other := bytes.Repeat([]byte{0x34}, ChallengeSize)
	for _, tc := range []struct {
		name          string
		secret, c, pr []byte
		want          bool
	}{
		{"right", secret, challenge, p, true},
		{"wrong secret", []byte("correct horse batterY"), challenge, p, false},
		{"other challenge", secret, other, p, false},
		{"empty proof", secret, challenge, nil, false},
		{"short proof", secret, challenge, p[:16], false},
		{"password proof", secret, challenge, Proof(secret, challenge), false},
	} {
		if got := VerifyArbiter(tc.secret, tc.c, tc.pr); got != tc.want {
			t.Errorf("%s: VerifyArbiter = %v, want %v", tc.name, got, tc.want)
		}
	}
}
