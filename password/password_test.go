package password

import (
	"bytes"
	"testing"
)

func TestProofRoundTrip(t *testing.T) {
	c1, err := NewChallenge()
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := NewChallenge()
	if bytes.Equal(c1, c2) || len(c1) != ChallengeSize {
		t.Fatal("challenges must be fresh and full size")
	}
	pw := []byte("hunter2")
	p := Proof(pw, c1)
	if bytes.Contains(p, pw) {
		t.Fatal("proof contains the password")
	}
	for _, tc := range []struct {
		name      string
		pw, c, pr []byte
		want      bool
	}{
		{"right", pw, c1, p, true},
		{"wrong password", []byte("hunter3"), c1, p, false},
		{"other challenge", pw, c2, p, false},
		{"empty proof", pw, c1, nil, false},
		{"short proof", pw, c1, p[:16], false},
		{"long proof", pw, c1, append(append([]byte(nil), p...), 0), false},
		{"proof of the right prefix", pw, c1, append(p[:ProofSize-1:ProofSize-1], p[ProofSize-1]^1), false},
	} {
		if got := Verify(tc.pw, tc.c, tc.pr); got != tc.want {
			t.Errorf("%s: Verify = %v, want %v", tc.name, got, tc.want)
		}
	}
}
