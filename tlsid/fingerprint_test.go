package tlsid

import (
	"crypto/tls"
	"strings"
	"testing"
)

func TestFingerprint(t *testing.T) {
	cert, _, err := LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fp := Fingerprint(cert)
	if len(fp) != 71 {
		t.Errorf("len(%q) = %d, want 71", fp, len(fp))
	}
	if !strings.HasPrefix(fp, "sha256:") || strings.ToLower(fp) != fp {
		t.Errorf("fingerprint %q is not sha256: and lowercase hex", fp)
	}
	if again := Fingerprint(cert); again != fp {
		t.Errorf("unstable: %s then %s", fp, again)
	}
	if d := FingerprintDER(cert.Certificate[0]); d != fp {
		t.Errorf("FingerprintDER %s, Fingerprint %s", d, fp)
	}
	if n, err := ParseFingerprint(fp); err != nil || n != fp {
		t.Errorf("ParseFingerprint(own) = %q, %v", n, err)
	}
	if got := Fingerprint(tls.Certificate{}); got != "" {
		t.Errorf("empty certificate: %q", got)
	}
	// Known answer: SHA-256 of nothing.
	if got, want := FingerprintDER(nil), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("FingerprintDER(nil) = %s", got)
	}
}

func TestParseFingerprint(t *testing.T) {
	const hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	const want = "sha256:" + hex
	colons := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i += 2 {
			if i > 0 {
				b.WriteByte(':')
			}
			b.WriteString(s[i : i+2])
		}
		return b.String()
	}
	for _, c := range []struct {
		name, in string
		ok       bool
	}{
		{"canonical", want, true},
		{"no prefix", hex, true},
		{"upper", strings.ToUpper(want), true},
		{"upper digits only", "sha256:" + strings.ToUpper(hex), true},
		{"colons", colons(hex), true},
		{"prefix and colons", "SHA256:" + colons(strings.ToUpper(hex)), true},
		{"surrounding space", "  " + want + "\n", true},
		{"empty", "", false},
		{"prefix only", "sha256:", false},
		{"short", want[:70], false},
		{"long", want + "0", false},
		{"non-hex", "sha256:" + hex[:63] + "g", false},
		{"other algorithm", "sha1:" + hex, false},
		{"prefix without colon", "sha256" + hex, false},
		{"inner space", "sha256:" + hex[:32] + " " + hex[32:], false},
		{"base64", "sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseFingerprint(c.in)
			if !c.ok {
				if err == nil {
					t.Fatalf("ParseFingerprint(%q) = %q, want an error", c.in, got)
				}
				return
			}
			if err != nil || got != want {
				t.Fatalf("ParseFingerprint(%q) = %q, %v; want %q", c.in, got, err, want)
			}
		})
	}
}
