package coord

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockhost/lockhost/internal/atomicfile"
)

// Alphabet is the invite code's alphabet: digits and capital letters
// without those a reader mistakes for another (0 O, 1 I L) and U.
const Alphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"

// CodeLen is the number of characters after the "+" of a code.
const CodeLen = 7

// SecretLen is the length of a host's secret in bytes: an Ed25519 seed.
const SecretLen = ed25519.SeedSize

// SecretFile is the file in a host's data folder that holds its secret.
const SecretFile = "coordinator.secret"

// Code is an invite code, "+" and CodeLen characters of Alphabet.
type Code string

// NewSecret returns a fresh secret from crypto/rand.
func NewSecret() ([]byte, error) {
	s := make([]byte, SecretLen)
	if _, err := rand.Read(s); err != nil {
		return nil, fmt.Errorf("coordinator secret: %w", err)
	}
	return s, nil
}

// KeyOf is the Ed25519 key pair a host's secret is the seed of: the host
// proves its code by signing the coordinator's challenge with it.
func KeyOf(secret []byte) ed25519.PrivateKey { return ed25519.NewKeyFromSeed(secret) }

// CodeOfSecret is the invite code of the host whose secret it is.
func CodeOfSecret(secret []byte) Code {
	return CodeOf(KeyOf(secret).Public().(ed25519.PublicKey))
}

// CodeOf derives the invite code of a host's public key: SHA-256 of the
// key, then of that hash and so on, read a byte at a time; a byte below
// 240 (eight times the alphabet's 30 letters) gives the letter byte mod
// 30, a larger one is skipped. Anyone may compute it. A code has only
// about 35 bits, so the coordinator also keeps which key holds each code
// (ServerConfig.OwnersFile): another key that happens to give the same
// code is refused.
func CodeOf(pub ed25519.PublicKey) Code {
	var b strings.Builder
	b.WriteByte('+')
	h := sha256.Sum256(pub)
	for n := 0; n < CodeLen; {
		for _, c := range h {
			if c >= 240 {
				continue
			}
			b.WriteByte(Alphabet[int(c)%len(Alphabet)])
			if n++; n == CodeLen {
				break
			}
		}
		h = sha256.Sum256(h[:])
	}
	return Code(b.String())
}

// ParseCode reads a code as a person types it: the "+" may be missing,
// letters may be lower case, and spaces or dashes between letters are
// dropped. It refuses anything else.
func ParseCode(s string) (Code, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+")
	var b strings.Builder
	b.WriteByte('+')
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == ' ' || r == '-':
			continue
		case r < 128 && strings.IndexByte(Alphabet, byte(r)) >= 0:
			b.WriteRune(r)
		default:
			return "", fmt.Errorf("invite code %q: %q is not one of its letters", s, r)
		}
	}
	if b.Len() != CodeLen+1 {
		return "", fmt.Errorf("invite code %q: a code is + and %d letters", s, CodeLen)
	}
	return Code(b.String()), nil
}

// IsCode says whether s looks like an invite code on a command line: a
// "+" first.
func IsCode(s string) bool { return strings.HasPrefix(s, "+") }

// LoadOrCreateSecret reads the host's secret from SecretFile in dir, or
// makes one and writes it there (mode 0600). created says it is new, so
// the code is too.
func LoadOrCreateSecret(dir string) (secret []byte, created bool, err error) {
	path := filepath.Join(dir, SecretFile)
	b, err := os.ReadFile(path)
	if err == nil {
		s, derr := base64.RawURLEncoding.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(s) != SecretLen {
			return nil, false, fmt.Errorf("%s: not a coordinator secret (%d bytes of base64url expected); remove it for a new code", path, SecretLen)
		}
		return s, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("coordinator secret: %w", err)
	}
	s, err := NewSecret()
	if err != nil {
		return nil, false, err
	}
	if err := atomicfile.WriteFile(path, []byte(base64.RawURLEncoding.EncodeToString(s)+"\n"), 0o600); err != nil {
		return nil, false, fmt.Errorf("coordinator secret: %w", err)
	}
	return s, true, nil
}
