package tlsid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOrCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	cert, created, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatal("first call: created = false")
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{
		{dir, 0o700 | os.ModeDir},
		{filepath.Join(dir, KeyFile), 0o600},
		{filepath.Join(dir, CertFile), 0o644},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
	key, err := os.ReadFile(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(key), "-----BEGIN PRIVATE KEY-----") {
		t.Errorf("key is not PKCS#8 PEM: %.40q", key)
	}
	leaf := cert.Leaf
	if leaf == nil {
		t.Fatal("no parsed leaf")
	}
	if leaf.Subject.CommonName != CommonName {
		t.Errorf("CommonName %q", leaf.Subject.CommonName)
	}
	if years := leaf.NotAfter.Sub(leaf.NotBefore).Hours() / 24 / 365; years < 19.9 || years > 20.1 {
		t.Errorf("validity %.1f years", years)
	}
	if n := leaf.SerialNumber.BitLen(); n < 64 || n > 128 {
		t.Errorf("serial has %d bits", n)
	}

	again, created, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if created {
		t.Error("second call: created = true")
	}
	if Fingerprint(again) != Fingerprint(cert) {
		t.Errorf("second call loaded %s, first made %s", Fingerprint(again), Fingerprint(cert))
	}

	// An existing folder with its own mode is left alone and still works.
	other := t.TempDir()
	if _, created, err := LoadOrCreate(other); err != nil || !created {
		t.Fatalf("existing empty folder: created %v, err %v", created, err)
	}
}

func TestLoadOrCreateOneMissing(t *testing.T) {
	for _, missing := range []string{KeyFile, CertFile} {
		t.Run(missing, func(t *testing.T) {
			dir := t.TempDir()
			if _, _, err := LoadOrCreate(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, missing)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadOrCreate(dir)
			if err == nil {
				t.Fatal("no error with one file missing")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "missing") {
				t.Errorf("error does not name the missing %s: %v", path, err)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%s was made again", path)
			}
		})
	}
}

func TestLoadOrCreateCorrupt(t *testing.T) {
	for _, name := range []string{KeyFile, CertFile} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, _, err := LoadOrCreate(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte("-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			if _, _, err := LoadOrCreate(dir); err == nil {
				t.Fatal("corrupt file loaded")
			} else if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name %s: %v", path, err)
			}
			after, _ := os.ReadFile(path)
			if string(before) != string(after) {
				t.Error("corrupt file was overwritten")
			}
		})
	}
}

func TestLoadOrCreateOtherHostsKey(t *testing.T) {
	dir, otherDir := t.TempDir(), t.TempDir()
	for _, d := range []string{dir, otherDir} {
		if _, _, err := LoadOrCreate(d); err != nil {
			t.Fatal(err)
		}
	}
	key, err := os.ReadFile(filepath.Join(otherDir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreate(dir); err == nil {
		t.Fatal("a key that does not match the certificate loaded")
	}
}

func TestLoadFiles(t *testing.T) {
	dir := t.TempDir()
	made, _, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := LoadFiles(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint(got) != Fingerprint(made) {
		t.Error("LoadFiles loaded a different certificate")
	}
	_, err = LoadFiles(filepath.Join(dir, "nope.pem"), filepath.Join(dir, KeyFile))
	if !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v does not wrap a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
