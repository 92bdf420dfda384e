package coord

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCodeOf(t *testing.T) {
	a, b := bytes.Repeat([]byte{1}, SecretLen), bytes.Repeat([]byte{2}, SecretLen)
	ca, cb := CodeOf(a), CodeOf(b)
	if ca != CodeOf(a) {
		t.Fatalf("CodeOf is not deterministic")
	}
	if ca == cb {
		t.Fatalf("two secrets give one code %s", ca)
	}
	seen := map[Code]bool{}
	letters := map[rune]int{}
	for i := 0; i < 2000; i++ {
		s, err := NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		c := CodeOf(s)
		if len(c) != CodeLen+1 || c[0] != '+' {
			t.Fatalf("code %q: not + and %d letters", c, CodeLen)
		}
		for _, r := range c[1:] {
			if !strings.ContainsRune(Alphabet, r) {
				t.Fatalf("code %q has %q, outside the alphabet", c, r)
			}
			letters[r]++
		}
		if seen[c] {
			t.Fatalf("code %s twice in 2000 secrets", c)
		}
		seen[c] = true
		if p, err := ParseCode(strings.ToLower(string(c[1:4])) + "-" + string(c[4:])); err != nil || p != c {
			t.Fatalf("ParseCode of %s as typed: %q, %v", c, p, err)
		}
	}
	// 14000 letters over 30: each about 467; a letter never or twice as
	// often as it should says the mapping is skewed.
	for _, r := range Alphabet {
		if n := letters[r]; n < 300 || n > 650 {
			t.Errorf("letter %q appears %d times in 14000", r, n)
		}
	}
}

func TestParseCode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Code
		ok   bool
	}{
		{"+K7QF2MX", "+K7QF2MX", true},
		{"k7qf2mx", "+K7QF2MX", true},
		{"+K7Q F2M-X", "+K7QF2MX", true},
		{"+K7QF2M", "", false},
		{"+K7QF2MXX", "", false},
		{"+K7QF2M0", "", false}, // 0 is not in the alphabet
		{"+K7QF2MI", "", false},
		{"+K7QF2Mé", "", false},
		{"", "", false},
	} {
		got, err := ParseCode(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseCode(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestSecretStable(t *testing.T) {
	dir := t.TempDir()
	s1, created, err := LoadOrCreateSecret(dir)
	if err != nil || !created {
		t.Fatalf("first load: created=%v err=%v", created, err)
	}
	s2, created, err := LoadOrCreateSecret(dir)
	if err != nil || created || !bytes.Equal(s1, s2) {
		t.Fatalf("second load: created=%v err=%v same=%v", created, err, bytes.Equal(s1, s2))
	}
	if fi, err := os.Stat(filepath.Join(dir, SecretFile)); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("secret file: %v, mode %v", err, fi.Mode())
	}
	os.WriteFile(filepath.Join(dir, SecretFile), []byte("short\n"), 0o600)
	if _, _, err := LoadOrCreateSecret(dir); err == nil {
		t.Errorf("a damaged secret file was read")
	}
}

// TestTURNCredentials holds TURNCredentials to the TURN REST convention
// with vectors computed apart from this package: Python's hmac module
// and openssl dgst -sha1 -hmac both give these.
func TestTURNCredentials(t *testing.T) {
	for _, tc := range []struct {
		secret, id string
		expiry     int64
		user, pass string
	}{
		{"north-wind-secret", "K7QF2MX", 1700000000, "1700000000:K7QF2MX", "+krY0VT9EKlTnONLn/LSTDQWvDM="},
		{"", "", 0, "0:", "OMULkEY8i3k1y1l5jqF6MXE1eYs="},
	} {
		u, p := TURNCredentials([]byte(tc.secret), tc.id, time.Unix(tc.expiry, 0))
		if u != tc.user || p != tc.pass {
			t.Errorf("TURNCredentials(%q, %q, %d) = %q, %q; want %q, %q", tc.secret, tc.id, tc.expiry, u, p, tc.user, tc.pass)
		}
	}
}

// coordinator starts a coordinator over loopback TLS and returns it and
// its URL with the certificate's pin.
// register registers a host and waits for the coordinator's answer.
// TestCodeStableAcrossRestart: the same secret gets the same code from a
// coordinator started afresh; a host pinging in time stays registered, and
// one whose connection the coordinator drops registers again by itself.
// get runs one request from remote through the coordinator's handler.
