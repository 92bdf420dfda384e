package cliutil

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/urfave/cli/v2"
)

// Exit codes shared by both tools.
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitUsage    = 2
	ExitRejected = 3
	ExitNetwork  = 4
	// ExitSaveFailed: host serve stopped, but its final save could not
	// be written.
	ExitSaveFailed = 5
)

// UsageError is a mistake in how the tool was called.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Out is where a command's output goes: the app's Writer, or os.Stdout
// when it has none.
func Out(c *cli.Context) io.Writer {
	if c.App.Writer != nil {
		return c.App.Writer
	}
	return os.Stdout
}

// ErrOut is where a command's messages and warnings go: the app's
// ErrWriter, or os.Stderr when it has none.
func ErrOut(c *cli.Context) io.Writer {
	if c.App.ErrWriter != nil {
		return c.App.ErrWriter
	}
	return os.Stderr
}

// Run runs app with args and returns the process exit code, printing the
// error (one sentence) to stderr. classify maps errors that are not usage
// errors or cli.ExitCoder to a code; nil means ExitFailure.
func Run(app *cli.App, args []string, stderr io.Writer, classify func(error) int) int {
	app.ExitErrHandler = func(*cli.Context, error) {} // exit codes are decided here, not inside Run
	strict(app)
	err := app.Run(ReorderFlags(app, args))
	if err == nil {
		return ExitOK
	}
	var ue *UsageError
	var ec cli.ExitCoder
	code := ExitFailure
	switch {
	case errors.As(err, &ue):
		code = ExitUsage
	case errors.As(err, &ec):
		code = ec.ExitCode()
	case classify != nil:
		code = classify(err)
	}
	if msg := err.Error(); msg != "" {
		// An error may quote a file or a peer: no escape sequences.
		fmt.Fprintf(stderr, "%s: %s\n", app.Name, termsafe.String(msg))
	}
	if ue != nil {
		// Only a mistake in how the tool was called points at --help; a
		// failure with the same exit code (unreadable content) does not.
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", app.Name)
	}
	return code
}

// ReorderFlags moves flags that follow positional arguments in front of
// them, so that "join HOST --name Alice" works: urfave/cli stops parsing
// flags at the first positional argument. It looks up the command that
// args select and leaves everything after "--" alone.
func ReorderFlags(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	rest := args[1:]
	flags := app.Flags
	// Walk into subcommands named before any positional argument.
	cmds := app.Commands
	for len(rest) > 0 {
		if c := findCommand(cmds, rest[0]); c != nil {
			out = append(out, rest[0])
			rest = rest[1:]
			flags, cmds = c.Flags, c.Subcommands
			continue
		}
		if strings.HasPrefix(rest[0], "-") && rest[0] != "-" && rest[0] != "--" {
			// A flag before the positional arguments: keep it and its value.
			n := flagWidth(flags, rest)
			out = append(out, rest[:n]...)
			rest = rest[n:]
			continue
		}
		break
	}
	var fl, pos []string
	for i := 0; i < len(rest); {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && a != "-" {
			n := flagWidth(flags, rest[i:])
			fl = append(fl, rest[i:i+n]...)
			i += n
			continue
		}
		pos = append(pos, a)
		i++
	}
	out = append(out, fl...)
	return append(out, pos...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// flagWidth is 2 for a flag that takes its value as the next argument,
// else 1.
func flagWidth(flags []cli.Flag, args []string) int {
	a := strings.TrimLeft(args[0], "-")
	if strings.Contains(a, "=") || len(args) < 2 {
		return 1
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != a {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return 1
			}
			return 2
		}
	}
	return 1 // unknown flags (help, version) take no value
}

// LogFlags are the logging flags of both tools.
func LogFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "log-format", Value: "text", Usage: "log format: text or json"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log level: debug, info, warn or error"},
	}
}

// Logger builds the logger the log flags ask for, writing to w.
func Logger(c *cli.Context, w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return nil, Usagef("--log-level %q: use debug, info, warn or error", c.String("log-level"))
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch c.String("log-format") {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, Usagef("--log-format %q: use text or json", c.String("log-format"))
}

// Stderr is where both tools write diagnostics; a variable for tests.
var Stderr io.Writer = os.Stderr

// PasswordEnv is the environment variable both tools read the session
// password from when no password file is given.
const PasswordEnv = "LOCKHOST_PASSWORD"

// Password reads the session password from file (its first line) or, when
// file is empty, from PasswordEnv. No password is nil. A password is never
// taken from a plain flag value, which would show in the process list.
func Password(file string) ([]byte, error) {
	return Secret("password", file, PasswordEnv)
}

// Secret reads a secret, named what in errors, from the first line of file
// or, when file is empty, from the environment variable env. No secret is
// nil; a file whose first line is empty is an error.
func Secret(what, file, env string) ([]byte, error) {
	if file == "" {
		if v := os.Getenv(env); v != "" {
			return []byte(v), nil
		}
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		// A file named on the command line that is not there is a
		// mistake in how the tool was called.
		return nil, &UsageError{Msg: fmt.Sprintf("%s file: %v", what, err)}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimRight(line, "\r")
	if line == "" {
		return nil, &UsageError{Msg: fmt.Sprintf("%s file %s: the first line is empty", what, file)}
	}
	return []byte(line), nil
}

// PasswordFlag is the --password-file flag of both tools.
func PasswordFlag(usage string) cli.Flag {
	return &cli.StringFlag{Name: "password-file", Usage: usage + " (first line of `FILE`; or set " + PasswordEnv + ")"}
}
