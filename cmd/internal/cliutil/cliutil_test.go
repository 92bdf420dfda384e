package cliutil

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestPassword(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	os.WriteFile(file, []byte("s3cret pass\r\nsecond line\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)

	t.Setenv(PasswordEnv, "")
	if pw, err := Password(""); err != nil || pw != nil {
		t.Fatalf("no password: %q %v", pw, err)
	}
	if pw, err := Password(file); err != nil || string(pw) != "s3cret pass" {
		t.Fatalf("file: %q %v", pw, err)
	}
	if _, err := Password(empty); err == nil {
		t.Fatal("empty password file accepted")
	}
	if _, err := Password(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing password file accepted")
	}
	t.Setenv(PasswordEnv, "from env")
	if pw, _ := Password(""); string(pw) != "from env" {
		t.Fatalf("env: %q", pw)
	}
	if pw, _ := Password(file); string(pw) != "s3cret pass" {
		t.Fatalf("file must win over env: %q", pw)
	}
}

func TestReorderFlags(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{&cli.StringFlag{Name: "name"}, &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}}},
		Commands: []*cli.Command{{Name: "defs", Subcommands: []*cli.Command{{Name: "diff",
			Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}, &cli.StringFlag{Name: "game-version"}}}}}},
	}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"join", "host:1", "--name", "Al", "-q"}, []string{"join", "--name", "Al", "-q", "host:1"}},
		{[]string{"join", "--name", "Al", "host:1"}, []string{"join", "--name", "Al", "host:1"}},
		{[]string{"join", "host:1", "--name=Al"}, []string{"join", "--name=Al", "host:1"}},
		{[]string{"join", "defs", "diff", "a", "b", "--json", "--game-version", "1.5"},
			[]string{"join", "defs", "diff", "--json", "--game-version", "1.5", "a", "b"}},
		{[]string{"join", "h", "--", "--name"}, []string{"join", "h", "--", "--name"}},
	} {
		if got := ReorderFlags(app, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("ReorderFlags(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRunEscapesErrors: an error quoting a file or a peer is printed
// without its control characters.
func TestRunEscapesErrors(t *testing.T) {
	app := &cli.App{Name: "tool", Action: func(*cli.Context) error {
		return errors.New("cannot read \"evil\x1b[2Jname\"")
	}}
	var stderr bytes.Buffer
	if code := Run(app, []string{"tool"}, &stderr, nil); code != ExitFailure {
		t.Fatalf("exit %d", code)
	}
	if want := "tool: cannot read \"evil\\x1b[2Jname\"\n"; stderr.String() != want {
		t.Fatalf("printed %q, want %q", stderr.String(), want)
	}
}
