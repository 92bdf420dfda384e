package cliutil

import (
	"net"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// strict makes every mistake in how app is called a UsageError (exit 2,
// one line, then a pointer to --help), never a help dump or another
// code: a bad or missing flag value anywhere, an unknown command, and a
// command group (or the bare tool) called without a command.
func strict(app *cli.App) {
	usage := func(_ *cli.Context, err error, _ bool) error { return &UsageError{Msg: err.Error()} }
	app.OnUsageError = usage
	if app.Action == nil && len(app.Commands) > 0 {
		app.Action = needCommand("", app.Commands)
	}
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			c.OnUsageError = usage
			if len(c.Subcommands) > 0 {
				if c.Action == nil {
					c.Action = needCommand(path+c.Name, c.Subcommands)
				}
				walk(path+c.Name+" ", c.Subcommands)
			}
		}
	}
	walk("", app.Commands)
}

// needCommand is the action of the tool or a command group (path, empty
// for the tool itself): called without one of its commands, or with a
// name none of them has, it is a usage error.
func needCommand(path string, cmds []*cli.Command) cli.ActionFunc {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	list := strings.Join(names, ", ")
	prefix, of := "", ""
	if path != "" {
		prefix, of = path+" ", " of "+path
	}
	return func(c *cli.Context) error {
		if c.NArg() == 0 {
			return Usagef("give a command%s: %s", of, list)
		}
		return Usagef("unknown command %q; the commands%s are %s", prefix+c.Args().First(), of, list)
	}
}

// CheckListenAddr checks a HOST:PORT (or :PORT) to listen on before
// anything slow starts: a missing or out-of-range port is a usage error.
// flag names the option in the message.
func CheckListenAddr(flag, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return Usagef("%s %q: want HOST:PORT or :PORT", flag, addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return Usagef("%s %q: the port must be a number from 0 to 65535", flag, addr)
	}
	return nil
}
