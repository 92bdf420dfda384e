package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// serveBundle hosts a small world of b on loopback for the test's life.
func serveBundle(t *testing.T, b *gamecontent.Bundle, mods ...func(*host.Config)) string {
	t.Helper()
	addr, _ := serveBundleServer(t, b, mods...)
	return addr
}

// serveBundleServer is serveBundle that also returns the host, for tests
// that act on it (kick, ban).
func serveBundleServer(t *testing.T, b *gamecontent.Bundle, mods ...func(*host.Config)) (string, *host.Server) {
	t.Helper()
	world, err := colony.New(b.Content, colony.Config{Maps: 2, Width: 64, Height: 64, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	manifest := b.Set.Manifest()
	var cfg host.Config
	for _, m := range mods {
		m(&cfg)
	}
	h := hosttest.Start(t, cfg,
		host.Content{GameVersion: b.GameVersion, Mods: b.Mods, Databases: b.Summary(),
			Detail: func(types []string) []byte {
				d, err := defs.MarshalDetail(manifest.Only(types))
				if err != nil {
					t.Error(err)
				}
				return d
			}}, world)
	return h.Addr, h.Server
}

// runJoin runs the tool in-process and returns its exit code and output.
func runJoin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	stdout, stderr = &out, &errOut
	defer func() { stdout, stderr = os.Stdout, os.Stderr }()
	code := cliutil.Run(newApp(), append([]string{"join"}, args...), &errOut, classify)
	return code, out.String(), errOut.String()
}

func TestJoinExitCodes(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b)
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := free.Addr().String()
	free.Close()

	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"ready", []string{addr, "--name", "Alice", "--exit-after-ready", "-q"}, cliutil.ExitOK, "WorldReady tick=", ""},
		{"flags first", []string{"--name", "Bob", "--exit-after-ready", "-q", addr}, cliutil.ExitOK, "WorldReady tick=", ""},
		{"no host", []string{"--name", "Alice"}, cliutil.ExitUsage, "", "give the host"},
		{"no name", []string{addr}, cliutil.ExitUsage, "", "--name"},
		{"unknown flag", []string{addr, "--nmae", "x"}, cliutil.ExitUsage, "", "nmae"},
		{"bad name", []string{addr, "--name", "A b", "-q"}, cliutil.ExitRejected, "", "UsernameChars): Usernames may only contain letters, digits and underscores. Choose another name with --name."},
		{"nobody listening", []string{closedAddr, "--name", "Alice", "-q"}, cliutil.ExitNetwork, "", "connect"},
		{"zero timeout", []string{addr, "--name", "Alice", "--timeout", "0s", "-q"}, cliutil.ExitUsage, "", "--timeout 0s is refused"},
		{"zero download cap", []string{addr, "--name", "Alice", "--max-download-mib", "0", "-q"}, cliutil.ExitUsage, "", "--max-download-mib 0 is refused"},
		{"negative bot", []string{addr, "--name", "Alice", "--bot", "-1", "-q"}, cliutil.ExitUsage, "", "--bot -1 is refused"},
		{"zero reconnect", []string{addr, "--name", "Alice", "--reconnect-for", "0s", "-q"}, cliutil.ExitUsage, "", "--reconnect-for 0s is refused"},
		{"zero pings", []string{"ping", addr, "--count", "0"}, cliutil.ExitUsage, "", "--count 0 is refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runJoin(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out, tc.out, errOut, tc.err)
			}
		})
	}
}

func TestJoinPasswordAndSpectate(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b, func(c *host.Config) { c.Admission.Password = []byte("correct horse") })
	pwFile := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pwFile, []byte("correct horse\n"), 0o600)
	badFile := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(badFile, []byte("wrong horse\n"), 0o600)

	// A refusal for the password says how to give one, or where the
	// wrong one came from.
	t.Setenv(cliutil.PasswordEnv, "")
	if code, _, errOut := runJoin(t, addr, "--name", "NoPw", "-q", "--exit-after-ready"); code != cliutil.ExitRejected ||
		!strings.Contains(errOut, "BadPassword") || !strings.Contains(errOut, "--password-file FILE, or set "+cliutil.PasswordEnv) ||
		strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("no password: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runJoin(t, addr, "--name", "BadPw", "-q", "--exit-after-ready", "--password-file", badFile); code != cliutil.ExitRejected ||
		!strings.Contains(errOut, "The password from the password file "+badFile+" is not the host's") {
		t.Fatalf("wrong password: exit %d, %q", code, errOut)
	}
	t.Setenv(cliutil.PasswordEnv, "wrong horse")
	if code, _, errOut := runJoin(t, addr, "--name", "EnvBadPw", "-q", "--exit-after-ready"); code != cliutil.ExitRejected ||
		!strings.Contains(errOut, "The password from "+cliutil.PasswordEnv+" is not the host's") {
		t.Fatalf("wrong password from the environment: exit %d, %q", code, errOut)
	}
	if code, out, errOut := runJoin(t, addr, "--name", "FilePw", "-q", "--exit-after-ready", "--password-file", pwFile); code != 0 || !strings.Contains(out, "WorldReady") {
		t.Fatalf("password file: exit %d, %q %q", code, out, errOut)
	}
	t.Setenv(cliutil.PasswordEnv, "correct horse")
	if code, out, errOut := runJoin(t, addr, "--name", "EnvPw", "-q", "--exit-after-ready", "--spectate"); code != 0 || !strings.Contains(out, "WorldReady") {
		t.Fatalf("password from env, spectating: exit %d, %q %q", code, out, errOut)
	}
}

// TestRefusalIsNotADownload: a join the host refuses at the username
// (a wrong password, a bad name) shows the handshake and no download
// step, as nothing was downloaded; an admitted join shows its download.
func TestRefusalIsNotADownload(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b, func(c *host.Config) { c.Admission.Password = []byte("correct horse") })
	t.Setenv(cliutil.PasswordEnv, "")
	for _, name := range []string{"NoPw", "A b"} {
		code, _, errOut := runJoin(t, addr, "--name", name, "--exit-after-ready")
		if code != cliutil.ExitRejected || !strings.Contains(errOut, "handshake...\n") || strings.Contains(errOut, "download") {
			t.Errorf("refused %q: exit %d, stderr:\n%s", name, code, errOut)
		}
	}
	t.Setenv(cliutil.PasswordEnv, "correct horse")
	if code, _, errOut := runJoin(t, addr, "--name", "Alice", "--exit-after-ready"); code != 0 || !strings.Contains(errOut, "handshake...\ndownload...\n") {
		t.Errorf("admitted: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestJoinDifferentContentPrintsExactDiff hosts content in which one def
// value differs from the embedded default, and checks the join tool names
// that def, its type and its mod, says how to load other content, and
// exits 3.
func TestJoinDifferentContentPrintsExactDiff(t *testing.T) {
	hb, err := gamecontent.Load([]string{riceCore(t)}, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, hb)
	code, out, errOut := runJoin(t, addr, "--name", "Alice", "-q")
	if code != cliutil.ExitRejected {
		t.Fatalf("exit %d, want 3\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, want := range []string{"RawRice", "ThingDef", "lockhost.core", "Defs", "with --content DIR, once per mod"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("report does not mention %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "RawCorn") {
		t.Errorf("report names an unchanged def:\n%s", errOut)
	}
	t.Logf("join output:\n%s", errOut)
}

// riceCore is a copy of the base content under a new folder, in which
// one def value (raw rice's nutrition) differs from the embedded one.
func riceCore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Core")
	if err := os.CopyFS(dir, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	foods := filepath.Join(dir, "Defs", "ThingDefs", "Foods.xml")
	xml, err := os.ReadFile(foods)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(xml), "<label>rice</label>\n    <nutrition>5</nutrition>", "<label>rice</label>\n    <nutrition>6</nutrition>", 1)
	if changed == string(xml) {
		t.Fatal("test content edit did not apply")
	}
	if err := os.WriteFile(foods, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDefsRefusalAdvisesFetchContent: a content (Defs) refusal ends with
// the join tool's advice, which names --content and, for a host that
// shares its content, --fetch-content. The tool gives that sentence for
// every Defs refusal (it cannot tell whether a host shares before it
// asks); a host that shares says so in its own message besides, and one
// that does not never claims to.
func TestDefsRefusalAdvisesFetchContent(t *testing.T) {
	const advice = "Load the host's mods, at the host's versions, with --content DIR, once per mod in its load order " +
		"(the report above says what differs), or, when the host shares its content, join with --fetch-content to fetch what you lack."
	const shares = "The host shares its mods' data: join again with --fetch-content to fetch what you lack."
	core := riceCore(t)
	hb, err := gamecontent.Load([]string{core}, "")
	if err != nil {
		t.Fatal(err)
	}
	sharing, _ := serveShared(t, []string{core})
	for _, tc := range []struct {
		name, addr string
		shares     bool
	}{
		{"host that shares its content", sharing, true},
		{"host that does not", serveBundle(t, hb), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runJoin(t, tc.addr, "--name", "Alice", "-q", "--no-input")
			if code != cliutil.ExitRejected {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, cliutil.ExitRejected, out, errOut)
			}
			var refusal string
			for line := range strings.Lines(errOut) {
				if strings.Contains(line, "refused by the host (Defs)") {
					refusal = line
				}
			}
			t.Logf("refusal: %s", refusal)
			if !strings.HasSuffix(strings.TrimSpace(refusal), " "+advice) {
				t.Errorf("the refusal does not end with the advice\n%s\nrefusal: %q\nstderr:\n%s", advice, refusal, errOut)
			}
			if got := strings.Contains(refusal, shares); got != tc.shares {
				t.Errorf("the refusal says the host shares its content: %v, want %v\n%s", got, tc.shares, refusal)
			}
		})
	}
}

// runJoinInput is runJoin with in as standard input.
func runJoinInput(t *testing.T, in io.Reader, args ...string) (int, string, string) {
	t.Helper()
	stdin = in
	defer func() { stdin = os.Stdin }()
	return runJoin(t, args...)
}

// TestJoinLeavesWhenInputEnds: the join tool leaves the session cleanly
// and exits 0 at the end of its input (a piped script, Ctrl-D) and on
// quit or /quit with the input still open; help lists quit. The host
// counts leaves, not drops.
func TestJoinLeavesWhenInputEnds(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr, srv := serveBundleServer(t, b)
	code, out, errOut := runJoinInput(t, strings.NewReader("help\nplayers\n"), addr, "--name", "Piped", "-q")
	if code != cliutil.ExitOK || !strings.Contains(out, "\n  quit ") || !strings.Contains(out, "1 in the session:") ||
		!strings.HasSuffix(out, "left the session\n") || !strings.Contains(errOut, "end of standard input: leaving") {
		t.Fatalf("piped input: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for i, word := range []string{"quit", "/quit"} {
		r, w := io.Pipe()
		defer w.Close() // the input stays open: quit alone leaves
		go fmt.Fprintf(w, "players\n%s\n", word)
		code, out, errOut := runJoinInput(t, r, addr, "--name", "Quitter"+strconv.Itoa(i), "-q")
		if code != cliutil.ExitOK || !strings.HasSuffix(out, "left the session\n") {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", word, code, out, errOut)
		}
	}
	testkit.WaitFor(t, "three leaves", func() bool { return srv.Overview().Stats.Leaves == 3 })
	if st := srv.Overview().Stats; st.Drops != 0 {
		t.Fatalf("%d drops, want none", st.Drops)
	}
}
