package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/operator/rcon"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

// TestConsoleFromPipe runs the real host with --console and its commands
// on standard input: they run, their answers go to standard output, and
// shutdown ends the host with exit 0 after its final save.
func TestConsoleFromPipe(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	save := filepath.Join(dir, "c.lhsave")
	args := append([]string{"serve", "--console", "--data-dir", filepath.Join(dir, "data"), "--save", save, "--new"}, smallWorld...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), rcon.PasswordEnv+"=")
	// An admin's save takes a name, never a path, and never replaces a
	// file that is not a save.
	notes := filepath.Join(dir, "notes.txt")
	notSave := filepath.Join(dir, "keep.lhsave")
	for _, f := range []string{notes, notSave} {
		if err := os.WriteFile(f, []byte("my notes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd.Stdin = strings.NewReader("players\n\nban 192.0.2.7 1h flooding\nbans\nsave\nsave " + notes + "\nsave keep\nsave before-raid\nspeed 9\nshutdown\n")
	var out, log syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("host: %v\n%s", err, log.String())
		}
	case <-time.After(60 * time.Second): // bounds a hang only
		_ = cmd.Process.Kill()
		t.Fatalf("the host did not shut down; stdout:\n%s\nlog:\n%s", out.String(), log.String())
	}
	for _, want := range []string{"no players online", "banned 192.0.2.7 until", "1 banned:", "192.0.2.7 until", "saved " + save,
		"error: save \"" + notes + "\": give a plain name", "error: " + notSave + " exists and is not a lockhost save; it is not replaced",
		"saved " + filepath.Join(dir, "before-raid.lhsave"), "error: speed 9", "shutting down"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{notes, notSave} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "my notes\n" {
			t.Errorf("%s was replaced: %q, %v", f, b, err)
		}
	}
	if in := saves.Inspect(filepath.Join(dir, "before-raid.lhsave")); in.Err != nil {
		t.Errorf("save before-raid: %v", in.Err)
	}
	// A shutdown is no error: the status queries' socket closing with
	// the session was logged as one.
	if strings.Contains(log.String(), "level=ERROR") {
		t.Errorf("an error was logged:\n%s", log.String())
	}
	if !strings.Contains(log.String(), `msg="admin action" by=console action=ban target=192.0.2.7`) {
		t.Errorf("the ban is not logged with who did it:\n%s", log.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "data", "bans.json"))
	if err != nil || !strings.Contains(string(b), `"addr": "192.0.2.7"`) {
		t.Fatalf("bans.json: %v\n%s", err, b)
	}
}

// TestRCONFlagsRefused: --rcon without a password, or a password file
// without --rcon, is a usage error (exit 2) said in one sentence.
func TestRCONFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	bin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/host")
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rcon", "0"}, "--rcon needs a password"},
		{[]string{"--rcon-password-file", pw}, "--rcon-password-file needs --rcon"},
		{[]string{"--rcon", "0", "--rcon-password-file", filepath.Join(dir, "missing")}, "--rcon-password-file:"},
		{[]string{"--rcon", "127.0.0.1:99999", "--rcon-password-file", pw}, "not a number from 0 to 65535"},
	} {
		cmd := exec.Command(bin, append(append([]string{"serve", "--data-dir", dir}, smallWorld...), tc.args...)...)
		cmd.Env = append(os.Environ(), rcon.PasswordEnv+"=")
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("%v: %v\n%s", tc.args, err, out)
		}
	}
}
