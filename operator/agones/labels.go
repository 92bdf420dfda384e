package agones

import (
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/tlsid"
)

// maxLabelValue is the longest Kubernetes label value.
const maxLabelValue = 63

// Facts are what a matchmaker selects a session on.
type Facts struct {
	Game     string
	Protocol uint32
	// Databases are the def databases the host announces.
	Databases []defs.Summary
	Password  bool
	// Fingerprint is the TLS certificate's fingerprint ("" without TLS).
	Fingerprint string
}

// Metadata returns the labels and annotations of f. Labels hold values a
// selector can match (each a valid label value, at most 63 characters):
// game, protocol, defs-hash, password, tls and tls-fingerprint (the
// first 32 hex digits of the fingerprint, since the whole of it is 64);
// the whole fingerprint and the game name as given are annotations.
func (f Facts) Metadata() (labels, annotations map[string]string) {
	labels = map[string]string{
		"game":      LabelValue(f.Game),
		"protocol":  strconv.FormatUint(uint64(f.Protocol), 10),
		"defs-hash": DefsHash(f.Databases),
		"password":  strconv.FormatBool(f.Password),
		"tls":       strconv.FormatBool(f.Fingerprint != ""),
	}
	annotations = map[string]string{"game": f.Game}
	if f.Fingerprint != "" {
		hexfp := strings.TrimPrefix(f.Fingerprint, tlsid.FingerprintPrefix)
		labels["tls-fingerprint"] = hexfp[:min(len(hexfp), 32)]
		annotations["tls-fingerprint"] = f.Fingerprint
	}
	return labels, annotations
}

// DefsHash is one hash of the def databases, order aside: 16 hex digits.
func DefsHash(dbs []defs.Summary) string {
	dbs = slices.Clone(dbs)
	slices.SortFunc(dbs, func(a, b defs.Summary) int { return strings.Compare(a.Type, b.Type) })
	h := xxhash.New()
	for _, db := range dbs {
		h.WriteString(db.Type)
		h.WriteString("\x00")
		h.WriteString(strconv.FormatUint(db.Hash, 16))
		h.WriteString("\x00")
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// LabelValue turns s into a valid Kubernetes label value: letters,
// digits, '-', '_' and '.', starting and ending with a letter or digit,
// at most 63 characters. Any other character becomes '-'.
func LabelValue(s string) string {
	b := make([]byte, 0, min(len(s), maxLabelValue))
	for i := 0; i < len(s) && len(b) < maxLabelValue; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.':
			b = append(b, c)
		default:
			b = append(b, '-')
		}
	}
	return strings.Trim(string(b), "-_.")
}
