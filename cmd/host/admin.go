package main

import (
	"context"
	"log/slog"
	"net"
	"os"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/operator/admin"
	"github.com/lockhost/lockhost/operator/rcon"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// adminFlags are serve's ways in for the host operator: the console and
// Source RCON.
func adminFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "console", Usage: "read admin commands (players, kick, ban, say, save, pause, shutdown, help, ...) from standard input even when it is not a terminal; on a terminal they are read anyway"},
		&cli.StringFlag{Name: "rcon", Usage: "serve Source RCON (the admin commands) on `ADDR`; a bare port such as 27015 listens on loopback only, 0.0.0.0:27015 on every interface; needs --rcon-password-file or " + rcon.PasswordEnv},
		&cli.StringFlag{Name: "rcon-password-file", Usage: "with --rcon: the RCON password is the first line of `FILE` (or set " + rcon.PasswordEnv + ")"},
	}
}

// adminWays holds what serve opened for the admin ways in before the world
// is hosted, so a bad address or a missing password fails at once.
type adminWays struct {
	rconLn   net.Listener
	password []byte
	console  bool
}

// openAdmin checks the admin flags and opens the RCON port.
func openAdmin(c *cli.Context) (*adminWays, error) {
	w := &adminWays{console: c.Bool("console") || isTerminal(os.Stdin)}
	addr := c.String("rcon")
	if addr == "" {
		if c.String("rcon-password-file") != "" {
			return nil, cliutil.Usagef("--rcon-password-file needs --rcon")
		}
		return w, nil
	}
	pw, err := cliutil.Secret("RCON password", c.String("rcon-password-file"), rcon.PasswordEnv)
	if err != nil {
		return nil, cliutil.Usagef("--rcon-password-file: %v", err)
	}
	if len(pw) == 0 {
		return nil, cliutil.Usagef("--rcon needs a password: put it on the first line of a file named by --rcon-password-file, or set %s", rcon.PasswordEnv)
	}
	listen, err := rcon.ListenAddr(addr)
	if err != nil {
		return nil, cliutil.Usagef("--rcon: %v", err)
	}
	if w.rconLn, err = net.Listen("tcp", listen); err != nil {
		return nil, portFailed("--rcon", addr, err)
	}
	w.password = pw
	return w, nil
}

// close releases the RCON port if serve ends before running it.
func (w *adminWays) close() {
	if w.rconLn != nil {
		w.rconLn.Close()
	}
}

// run serves RCON and the console for srv until ctx is done.
func (w *adminWays) run(ctx context.Context, srv *host.Server, log *slog.Logger) error {
	if w.console {
		quietBackgroundRead()
		log.Info("admin console on standard input; type help")
		go func() {
			if err := admin.RunConsole(ctx, srv, admin.ByConsole, os.Stdin, os.Stdout); err != nil {
				log.Warn("admin console stopped", "err", err)
			}
		}()
	}
	if w.rconLn == nil {
		return nil
	}
	rs, err := rcon.NewServer(rcon.Config{Password: w.password, Logger: log,
		Exec: func(by, line string) string { return admin.Exec(srv, by, line) }})
	if err != nil {
		return err
	}
	return rs.Serve(ctx, w.rconLn)
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
