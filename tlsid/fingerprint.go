package tlsid

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"strings"
)

// FingerprintPrefix starts every fingerprint.
const FingerprintPrefix = "sha256:"

// Fingerprint returns the fingerprint of cert's leaf certificate (the first
// of its chain): "sha256:" followed by the 64 lowercase hex digits of the
// SHA-256 of its DER encoding. It returns "" if cert holds no certificate.
func Fingerprint(cert tls.Certificate) string {
	if len(cert.Certificate) == 0 {
		return ""
	}
	return FingerprintDER(cert.Certificate[0])
}

// FingerprintDER returns the fingerprint of the DER-encoded certificate der,
// in the form Fingerprint describes.
func FingerprintDER(der []byte) string {
	sum := sha256.Sum256(der)
	return FingerprintPrefix + hex.EncodeToString(sum[:])
}

// ParseFingerprint normalises a fingerprint typed by a person to the form
// Fingerprint returns. The "sha256:" prefix is optional, case is ignored and
// so are ':' separators between digits; anything that is not then exactly
// 64 hex digits (32 bytes) is refused.
func ParseFingerprint(s string) (string, error) {
	fp, err := parseFingerprint(s)
	if err != nil {
		return "", fmt.Errorf("tlsid: %w", err)
	}
	return fp, nil
}

// parseFingerprint is ParseFingerprint with errors not naming the package.
func parseFingerprint(s string) (string, error) {
	t := strings.TrimSpace(s)
	if len(t) >= len(FingerprintPrefix) && strings.EqualFold(t[:len(FingerprintPrefix)], FingerprintPrefix) {
		t = t[len(FingerprintPrefix):]
	}
	t = strings.ToLower(strings.ReplaceAll(t, ":", ""))
	if len(t) != 2*sha256.Size {
		return "", fmt.Errorf("fingerprint %q is not 64 hex digits (32 bytes) after an optional %q", s, FingerprintPrefix)
	}
	if _, err := hex.DecodeString(t); err != nil {
		return "", fmt.Errorf("fingerprint %q is not hexadecimal", s)
	}
	return FingerprintPrefix + t, nil
}
