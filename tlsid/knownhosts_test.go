package tlsid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	fpA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	fpB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	fpC = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func TestKnownHostsRememberLookup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config", "lockhost")
	k := &KnownHosts{Path: filepath.Join(dir, "known_hosts")}

	// A missing file is empty.
	if fp, ok, err := k.Lookup("example.org:7000"); fp != "" || ok || err != nil {
		t.Fatalf("missing file: Lookup = %q, %v, %v", fp, ok, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("Lookup made the folder: %v", err)
	}

	if err := k.Remember("example.org:7000", strings.ToUpper(fpA)); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, err := os.Stat(k.Path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file: %v, %v", fi, err)
	}
	for _, c := range []struct {
		addr, fp string
		ok       bool
	}{
		{"example.org:7000", fpA, true},
		{"example.org:7001", "", false},
		{"EXAMPLE.org:7000", "", false},
	} {
		fp, ok, err := k.Lookup(c.addr)
		if err != nil || ok != c.ok || fp != c.fp {
			t.Errorf("Lookup(%q) = %q, %v, %v; want %q, %v", c.addr, fp, ok, err, c.fp, c.ok)
		}
	}

	if err := k.Remember("[::1]:7000", fpB); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(k.Path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "example.org:7000 " + fpA + "\n[::1]:7000 " + fpB + "\n"; string(data) != want {
		t.Errorf("file is\n%s\nwant\n%s", data, want)
	}
}

func TestKnownHostsReplace(t *testing.T) {
	const before = `# lockhost known hosts
alpha:1 ` + fpA + `

beta:2 ` + fpB + ` # the office machine
	# indented comment
gamma:3   SHA256:` + "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC" + `
beta:2 ` + fpB + `
`
	const after = `# lockhost known hosts
alpha:1 ` + fpA + `

beta:2 ` + fpC + `
	# indented comment
gamma:3   SHA256:` + "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC" + `
`
	k := &KnownHosts{Path: filepath.Join(t.TempDir(), "known_hosts")}
	if err := os.WriteFile(k.Path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]string{"alpha:1": fpA, "beta:2": fpB, "gamma:3": fpC} {
		if fp, ok, err := k.Lookup(addr); fp != want || !ok || err != nil {
			t.Errorf("before: Lookup(%s) = %q, %v, %v", addr, fp, ok, err)
		}
	}
	if err := k.Remember("beta:2", fpC); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(k.Path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != after {
		t.Errorf("file is\n%s\nwant\n%s", data, after)
	}
	if fp, ok, err := k.Lookup("beta:2"); fp != fpC || !ok || err != nil {
		t.Errorf("after: Lookup(beta:2) = %q, %v, %v", fp, ok, err)
	}
}

func TestKnownHostsBad(t *testing.T) {
	for _, c := range []struct{ name, text, inError string }{
		{"one field", "alpha:1\n", "line 1"},
		{"three fields", "# c\nalpha:1 " + fpA + " extra\n", "line 2"},
		{"bad fingerprint", "alpha:1 sha256:abc\n", "line 1"},
		{"no port", "alpha " + fpA + "\n", "line 1"},
		{"conflict", "alpha:1 " + fpA + "\nalpha:1 " + fpB + "\n", "line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := &KnownHosts{Path: filepath.Join(t.TempDir(), "known_hosts")}
			if err := os.WriteFile(k.Path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := k.Lookup("alpha:1")
			if err == nil || !strings.Contains(err.Error(), c.inError) || !strings.Contains(err.Error(), k.Path) {
				t.Errorf("Lookup error %v, want one naming %s and %q", err, k.Path, c.inError)
			}
			if err := k.Remember("beta:2", fpB); err == nil {
				t.Error("Remember rewrote a malformed file")
			}
			if data, _ := os.ReadFile(k.Path); string(data) != c.text {
				t.Error("malformed file changed")
			}
		})
	}

	k := &KnownHosts{Path: filepath.Join(t.TempDir(), "known_hosts")}
	for _, c := range []struct{ addr, fp string }{
		{"", fpA},
		{"alpha", fpA},
		{"alpha:1 beta:2", fpA},
		{"alpha:1#", fpA},
		{"alpha:1\n", fpA},
		{":1", fpA},
		{"alpha:1", "sha256:abc"},
		{"alpha:1", ""},
	} {
		if err := k.Remember(c.addr, c.fp); err == nil {
			t.Errorf("Remember(%q, %q) accepted", c.addr, c.fp)
		}
	}
	if _, err := os.Stat(k.Path); !os.IsNotExist(err) {
		t.Errorf("refused Remember wrote the file: %v", err)
	}
}

func TestDefaultKnownHostsPath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/some/config")
	t.Setenv("HOME", "/some/home")
	t.Setenv("AppData", "/some/appdata")
	p, err := DefaultKnownHostsPath()
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "lockhost", "known_hosts"); p != want {
		t.Errorf("DefaultKnownHostsPath() = %q, want %q", p, want)
	}
}

func FuzzParseKnownHosts(f *testing.F) {
	for _, s := range []string{
		"",
		"\n",
		"# comment\n",
		"alpha:1 " + fpA + "\n",
		"alpha:1 " + fpA,
		"[::1]:7000 SHA256:" + strings.Repeat("AB:", 31) + "AB # note\r\n",
		"alpha:1 " + fpA + "\nalpha:1 " + fpA + "\nbeta:2 " + fpB + "\n",
		"alpha:1 " + fpA + "\nalpha:1 " + fpB + "\n",
		"alpha " + fpA + "\n",
		"\x00 \xff\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := parseKnownHosts(data)
		if err != nil {
			return
		}
		for _, l := range lines {
			if l.addr == "" {
				continue
			}
			if n, err := ParseFingerprint(l.fp); err != nil || n != l.fp {
				t.Fatalf("parsed fingerprint %q is not normal", l.fp)
			}
		}
		// Rewriting a file that parsed keeps it parseable, with the new entry.
		out := renderKnownHosts(lines, "new.example:9", fpC)
		again, err := parseKnownHosts(out)
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v\n%q", err, out)
		}
		found := 0
		for _, l := range again {
			if l.addr == "new.example:9" {
				found++
				if l.fp != fpC {
					t.Fatalf("rewritten entry has %q", l.fp)
				}
			}
		}
		if found != 1 {
			t.Fatalf("rewritten file has %d entries for the new address", found)
		}
	})
}
