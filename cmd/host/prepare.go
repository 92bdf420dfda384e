package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/savelock"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/urfave/cli/v2"
)

// prepared is what serve checks and opens before it reads content or
// makes a world, which can take seconds and gigabytes: every folder and
// file the host will write, the save's lock, and every port. So a slip
// (a busy port, an unwritable folder, a save another host runs on) is one
// sentence and exit 2 at once, not after the world is ready.
type prepared struct {
	game  *host.Listeners
	web   net.Listener
	admin *adminWays
	lock  *savelock.Lock
	start *saveStart // nil without --save
}

// startFailed is the error of a host that cannot start as asked: one
// sentence and exit 2, without the usage hint (the call was right).
func startFailed(format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), cliutil.ExitUsage)
}

// prepare takes the save's lock and opens the ports, after checkDataDir
// has checked the data folder. On error everything it opened is closed
// again.
func prepare(c *cli.Context, log *slog.Logger) (_ *prepared, err error) {
	p := &prepared{}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if path := c.String("save"); path != "" {
		if p.start, err = findSave(path); err != nil {
			return nil, err
		}
		if p.lock, err = savelock.Acquire(path, time.Now()); err != nil {
			var held *savelock.HeldError
			if errors.As(err, &held) {
				return nil, startFailed("%v", err)
			}
			return nil, startFailed("--save %s: %v", path, err)
		}
	}
	if addr := c.String("http"); addr != "" {
		if _, err := web.ListenAddr(addr); err != nil {
			return nil, cliutil.Usagef("--http: %v", err)
		}
		if p.web, err = web.Listen(addr); err != nil {
			return nil, portFailed("--http", addr, err)
		}
	}
	if p.admin, err = openAdmin(c); err != nil {
		return nil, err
	}
	listen := c.String("listen")
	if p.game, err = host.Listen(listen); err != nil {
		return nil, portFailed("--listen", listen, err)
	}
	p.game.Discovery = openDiscovery(c.Context, c.Int("discovery-port"), p.game.Addr(), log)
	if p.lock != nil {
		if err := p.lock.SetAddr(p.game.Addr().String()); err != nil {
			log.Warn("could not note the address in the save's lock file", "err", err)
		}
	}
	return p, nil
}

// close releases what prepare opened and serve did not take over.
func (p *prepared) close() {
	if p.game != nil {
		p.game.Close()
	}
	if p.web != nil {
		p.web.Close()
	}
	if p.admin != nil {
		p.admin.close()
	}
	if p.lock != nil {
		p.lock.Release()
	}
}

// checkDataDir makes the data folder if it is missing and checks that the
// host can write there and in its desyncs folder, and that the ban list,
// if any, reads: a ban that cannot be kept must not be found out only
// when an operator bans someone.
func checkDataDir(data string) error {
	if err := os.MkdirAll(data, 0o700); err != nil {
		return startFailed("--data-dir %s: the data folder cannot be made: %v", data, pathCause(err))
	}
	if err := checkWritable(data); err != nil {
		return startFailed("--data-dir %s: %v (bans, desync reports and the TLS identity are kept there)", data, err)
	}
	dd := filepath.Join(data, desync.DirName)
	if _, err := os.Stat(dd); err == nil {
		if err := checkWritable(dd); err != nil {
			return startFailed("--data-dir %s: %v", data, err)
		}
	}
	bans := filepath.Join(data, host.BansFileName)
	if err := host.CheckBanFile(bans); err != nil {
		return startFailed("--data-dir %s: %v", data, err)
	}
	return nil
}

// portFailed is the error of a port that cannot be opened: which flag,
// which protocol and address, and the cause ("address already in use").
func portFailed(flag, addr string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		cause := oe.Err
		var se *os.SyscallError
		if errors.As(cause, &se) {
			cause = se.Err
		}
		return startFailed("%s %s: cannot listen on %s %s: %v", flag, addr, strings.ToUpper(strings.TrimRight(oe.Net, "46")), oe.Addr, cause)
	}
	return startFailed("%s %s: %v", flag, addr, err)
}

// pathCause drops the path and operation of a path error, which the
// sentence says already.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
