package main

import (
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/urfave/cli/v2"
)

// positiveFlags are the join tool's number flags that take only values
// above 0, by command. The rule is the host's: a value that would quietly
// become a default, or mean nothing, is refused (exit 2) naming the flag;
// the one number flag where 0 has a meaning, --bot (0: no bot), says so
// in its help and refuses only a negative value.
var positiveFlags = map[string][]string{
	"join": {"timeout", "reconnect-for", "max-download-mib", "connect-timeout"},
	"ping": {"count", "timeout"},
}

// checkNumbers applies the rule to the flags of one command that were set.
func checkNumbers(c *cli.Context, command string) error {
	for _, name := range positiveFlags[command] {
		if !c.IsSet(name) {
			continue
		}
		var bad bool
		switch v := c.Value(name).(type) {
		case time.Duration:
			bad = v <= 0
		case int:
			bad = v <= 0
		}
		if bad {
			return cliutil.Usagef("--%s %v is refused: it takes a value above 0", name, c.Value(name))
		}
	}
	if c.IsSet("bot") && c.Float64("bot") < 0 {
		return cliutil.Usagef("--bot %v is refused: it takes a rate of 0 (no bot) or more", c.Float64("bot"))
	}
	return nil
}
