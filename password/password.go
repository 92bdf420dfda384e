// Package password is the session password's challenge-response: the host
// sends a fresh random challenge with every connection, the client answers
// with an HMAC of the challenge keyed by the password, and the host checks
// the answer in constant time. The password itself never crosses the wire,
// and a captured answer is useless for any other connection.
package password

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

// ChallengeSize is the size of a challenge in bytes.
const ChallengeSize = 32

// ProofSize is the size of a proof in bytes.
const ProofSize = sha256.Size

// domain separates lockhost's proofs from any other use of the password.
const domain = "lockhost session password v1\x00"

// NewChallenge returns a fresh random challenge.
func NewChallenge() ([]byte, error) {
	c := make([]byte, ChallengeSize)
	if _, err := rand.Read(c); err != nil {
		return nil, fmt.Errorf("password challenge: %w", err)
	}
	return c, nil
}

// Proof answers challenge with pw.
func Proof(pw, challenge []byte) []byte {
	m := hmac.New(sha256.New, pw)
	m.Write([]byte(domain))
	m.Write(challenge)
	return m.Sum(nil)
}

// Verify reports whether proof answers challenge with pw. It takes the same
// time whether the proof is right or wrong (and whatever its length).
func Verify(pw, challenge, proof []byte) bool {
	want := Proof(pw, challenge)
	// hmac.Equal returns early only on a length mismatch; compare against
	// a fixed-size copy so a short proof costs the same as a wrong one.
	var got [ProofSize]byte
	copy(got[:], proof)
	ok := hmac.Equal(want, got[:])
	return ok && len(proof) == ProofSize
}

// arbiterDomain separates the arbiter secret's proofs from the password's
// (docs/protocol.md, section 14.2).
const arbiterDomain = "lockhost arbiter secret v1\x00"

// ArbiterProof answers a relay host's arbiter challenge with the arbiter
// secret.
func ArbiterProof(secret, challenge []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(arbiterDomain))
	m.Write(challenge)
	return m.Sum(nil)
}

// VerifyArbiter reports whether proof answers challenge with the arbiter
// secret, in the same time whether it is right or wrong.
func VerifyArbiter(secret, challenge, proof []byte) bool {
	want := ArbiterProof(secret, challenge)
	var got [ProofSize]byte
	copy(got[:], proof)
	ok := hmac.Equal(want, got[:])
	return ok && len(proof) == ProofSize
}
