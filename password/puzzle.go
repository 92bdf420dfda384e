package password

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
)

// MaxPuzzleBits bounds a puzzle's difficulty in bits.
const MaxPuzzleBits = 32

// puzzleDomain separates the puzzle's hashes from the proof's.
const puzzleDomain = "lockhost password puzzle v1\x00"

// puzzleInput is the hashed bytes: the domain, the challenge and the
// nonce (8 bytes, big-endian), in that order.
func puzzleInput(challenge []byte) []byte {
	b := make([]byte, 0, len(puzzleDomain)+len(challenge)+8)
	b = append(b, puzzleDomain...)
	b = append(b, challenge...)
	return append(b, make([]byte, 8)...)
}

// zeroBits reports whether sum starts with at least n zero bits (n at
// most MaxPuzzleBits).
func zeroBits(sum *[sha256.Size]byte, n int) bool {
	return bits.LeadingZeros32(binary.BigEndian.Uint32(sum[:4])) >= n
}

// PuzzleSolved reports whether nonce solves the puzzle of n bits on
// challenge: SHA-256(domain || challenge || nonce as 8 bytes big-endian)
// starts with n zero bits. It costs one hash whatever its inputs (a
// difficulty over MaxPuzzleBits is never solved).
func PuzzleSolved(challenge []byte, n int, nonce uint64) bool {
	if n <= 0 {
		return true
	}
	if n > MaxPuzzleBits {
		return false
	}
	in := puzzleInput(challenge)
	binary.BigEndian.PutUint64(in[len(in)-8:], nonce)
	sum := sha256.Sum256(in)
	return zeroBits(&sum, n)
}

// SolvePuzzle finds the smallest nonce that solves the puzzle of n bits
// on challenge, trying 2^n nonces on average. It returns how many it
// tried, and ctx's error if ctx ends first.
func SolvePuzzle(ctx context.Context, challenge []byte, n int) (nonce, tried uint64, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	in := puzzleInput(challenge)
	tail := in[len(in)-8:]
	for nonce = 0; ; nonce++ {
		if nonce&0xffff == 0 && ctx.Err() != nil {
			return 0, nonce, ctx.Err()
		}
		binary.BigEndian.PutUint64(tail, nonce)
		sum := sha256.Sum256(in)
		if zeroBits(&sum, n) {
			return nonce, nonce + 1, nil
		}
	}
}
