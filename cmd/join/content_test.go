package main

import (
	"crypto/sha256"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/testing/procstat"
)

// fillCache makes a cache in a temporary folder holding the two files of
// one mod, laid out once (so the cache remembers the mod), and one file
// no remembered manifest lists. It returns the cache and the files'
// hashes: the mod's def file, its texture, the stray file.
func fillCache(t *testing.T) (*modsync.Cache, [3]modsync.Sum) {
	t.Helper()
	c, err := modsync.OpenCache(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	bodies := []string{"<Defs><ThingDef><defName>Lamp</defName></ThingDef></Defs>", "\x89PNG a lamp", "a file of no known mod"}
	var sums [3]modsync.Sum
	for i, b := range bodies {
		sums[i] = sha256.Sum256([]byte(b))
		if err := c.Insert(sums[i], int64(len(b)), strings.NewReader(b)); err != nil {
			t.Fatal(err)
		}
	}
	m := &modsync.Manifest{Format: 1, GameVersion: "1.5", Mods: []modsync.Mod{{
		PackageID: "test.lamp", Version: "1.2", Folders: []string{"."},
		Files: []modsync.File{
			{Path: "Defs/Lamp.xml", Size: int64(len(bodies[0])), Hash: sums[0], Kind: modsync.KindDefs, Databases: []string{"ThingDef"}},
			{Path: "Textures/Lamp.png", Size: int64(len(bodies[1])), Hash: sums[1], Kind: modsync.KindTexture},
		},
	}}}
	if err := m.Validate(modsync.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if _, err := c.View(m, 0); err != nil {
		t.Fatal(err)
	}
	return c, sums
}

// damage rewrites a cached file's bytes, as a failing disk might.
func damage(t *testing.T, c *modsync.Cache, s modsync.Sum) {
	t.Helper()
	h := s.String()
	p := filepath.Join(c.Dir(), "objects", h[:2], h)
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("\x89PNG a lamq"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true},
		{"0", 0, true},
		{"0d", 0, true},
		{"12h", 12 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{"-1h", 0, false},
		{"-3d", 0, false},
		{"d", 0, false},
		{"3x", 0, false},
		{"", 0, false},
		{"99999999d", 0, false},
	} {
		got, err := parseAge(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseAge(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestContentCommands runs join content ls, verify and prune in turn on
// one cache: ls names the mod file each cached file is; verify finds a
// damaged file, removes it and exits 3, then 0; prune keeps files used
// lately and removes every file with --older-than 0, counting them.
func TestContentCommands(t *testing.T) {
	c, sums := fillCache(t)
	damage(t, c, sums[1])
	dir := []string{"--content-cache", c.Dir()}
	arg := func(a ...string) []string { return append(append([]string{"content"}, a...), dir...) }
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		want   []string // in stdout, in order of the steps
		absent string
	}{
		{"ls", arg("ls"), 0, []string{sums[0].String(), "test.lamp 1.2: Defs/Lamp.xml", sums[2].String() + "         22", "(no remembered mod)", "3 file(s)"}, ""},
		{"verify finds the damage", arg("verify"), exitDamaged, []string{"removed " + sums[1].String(), "verified 3 file(s)", "1 damaged"}, sums[0].String()},
		{"verify again", arg("verify"), 0, []string{"verified 2 file(s)", "0 damaged"}, "removed"},
		{"prune keeps what was used lately", arg("prune"), 0, []string{"pruned 0 file(s)"}, ""},
		{"prune a bad age", arg("prune", "--older-than", "soon"), 2, nil, "pruned"},
		{"prune stray arguments", arg("prune", "now"), 2, nil, "pruned"},
		{"prune everything", arg("prune", "--older-than", "0"), 0, []string{"pruned 2 file(s)", "(", " bytes)"}, ""},
		{"ls an empty cache", arg("ls"), 0, []string{"0 file(s), 0B (0 bytes)"}, sums[0].String()},
	} {
		code, out, errOut := runJoin(t, tc.args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out, errOut)
			continue
		}
		rest := out
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: %q missing (in order) from\n%s", tc.name, w, out)
				break
			}
			rest = rest[i+len(w):]
		}
		if tc.absent != "" && strings.Contains(out, tc.absent) {
			t.Errorf("%s: %q in\n%s", tc.name, tc.absent, out)
		}
	}
}

// TestBinaryContent runs the built join tool's content commands: --help
// explains them and the exit codes, ls --json lists what the cache holds
// with its mods, verify exits 3 on a damaged file, prune counts bytes.
func TestBinaryContent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tool")
	}
	bin := procstat.BuildTools(t, "github.com/lockhost/lockhost/cmd/join")[0]
	c, sums := fillCache(t)

	code, out, _ := runBin(t, bin, "content", "verify", "--help")
	if code != 0 || !strings.Contains(out, "3 damaged files were found and removed") || !strings.Contains(out, "--content-cache DIR") {
		t.Errorf("verify --help: %d\n%s", code, out)
	}
	code, out, errOut := runBin(t, bin, "content", "ls", "--json", "--content-cache", c.Dir())
	var ls struct {
		Dir   string
		Files []cachedFile
		Bytes int64
	}
	if err := json.Unmarshal([]byte(out), &ls); code != 0 || err != nil || len(ls.Files) != 3 || ls.Dir != c.Dir() {
		t.Fatalf("ls --json: %d %v\n%s%s", code, err, out, errOut)
	}
	var total int64
	for _, f := range ls.Files {
		total += f.Size
		if time.Since(f.LastUsed) > time.Hour {
			t.Errorf("%s last used %v", f.Hash, f.LastUsed)
		}
		if (f.Hash == sums[2].String()) != (len(f.Mods) == 0) {
			t.Errorf("%s: mods %q", f.Hash, f.Mods)
		}
	}
	if total != ls.Bytes {
		t.Errorf("bytes %d, files add up to %d", ls.Bytes, total)
	}
	damage(t, c, sums[0])
	if code, out, _ := runBin(t, bin, "content", "verify", "--content-cache", c.Dir()); code != exitDamaged || !strings.Contains(out, "removed "+sums[0].String()) {
		t.Errorf("verify a damaged cache: %d\n%s", code, out)
	}
	left := total - ls.Files[0].Size
	for _, f := range ls.Files {
		if f.Hash == sums[0].String() {
			left = total - f.Size
		}
	}
	code, out, _ = runBin(t, bin, "content", "prune", "--older-than", "0", "--content-cache", c.Dir())
	if want := "pruned 2 file(s)"; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "("+itoa(left)+" bytes)") {
		t.Errorf("prune: %d, want %q and %d bytes\n%s", code, want, left, out)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
