package cliutil

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// version is the release's version, stamped at build time by
// scripts/release with -ldflags "-X github.com/lockhost/lockhost/cmd/internal/cliutil.version=v1.2.3".
// Empty in a plain build: the module version from the build information
// is used instead.
var version string

// commit is the commit the release was built from, stamped the same way
// (…/cliutil.commit=HASH), for builds without VCS information.
var commit string

// Version describes this build for --version: the release or module
// version, the commit it was built from (with "+changes" when the work
// tree had uncommitted changes) and the protocol version it speaks, which
// the tool passes in (cliutil knows no protocol).
func Version(protocol uint32) string {
	v, rev, dirty := version, commit, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if r, ok := strings.CutSuffix(rev, "+changes"); ok {
		rev, dirty = r, true // stamped by scripts/release from a changed tree
	}
	if v == "" {
		v = "(devel)"
	}
	if rev == "" {
		rev = "unknown"
	} else if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+changes"
	}
	return fmt.Sprintf("%s, commit %s, protocol %d", v, rev, protocol)
}

// SetVersion gives app a --version flag that prints Version(protocol).
func SetVersion(app *cli.App, protocol uint32) {
	app.Version = Version(protocol)
	cli.VersionPrinter = func(c *cli.Context) {
		fmt.Fprintf(c.App.Writer, "%s %s\n", c.App.Name, c.App.Version)
	}
}
