package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/urfave/cli/v2"
)

// dataDirEnv is the environment variable that names the host's data
// folder when --data-dir is not given.
const dataDirEnv = "LOCKHOST_DATA"

// maxShownCommands is how many commands of a report's window "desyncs
// show" prints without --all: the last ones.
const maxShownCommands = 200

// dataDirFlag is the --data-dir flag: the host's data folder, which holds
// the desync reports (in desync.DirName) and, later, keys. Read it with
// dataDir.
func dataDirFlag() cli.Flag {
	return &cli.StringFlag{
		Name:        "data-dir",
		EnvVars:     []string{dataDirEnv},
		DefaultText: defaultDataDir(),
		Usage:       "the host's data folder `DIR` (bans, desync reports, the TLS key and certificate); serve makes it if missing and refuses to start if it cannot write there",
	}
}

// defaultDataDir is the data folder when neither --data-dir nor
// LOCKHOST_DATA names one: "lockhost/host" in the user's configuration
// folder, or ".lockhost-host" in the working folder when there is none.
func defaultDataDir() string {
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "lockhost", "host")
	}
	return ".lockhost-host"
}

// dataDir is the host's data folder as the command's --data-dir flag (see
// dataDirFlag), LOCKHOST_DATA or the default says, made absolute. An
// empty value means the default. The folder need not exist.
func dataDir(c *cli.Context) (string, error) {
	d := c.String("data-dir")
	if d == "" {
		d = defaultDataDir()
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("data folder %s: %w", d, err)
	}
	return abs, nil
}

// desyncsDir is the folder of the desync reports.
func desyncsDir(c *cli.Context) (string, error) {
	d, err := dataDir(c)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, desync.DirName), nil
}

// desyncsConfigFlag is --config of desyncs list and show: the config file
// serve reads, for its data folder.
func desyncsConfigFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "config",
		EnvVars: []string{configEnv},
		Usage:   "the TOML `FILE` host serve reads (--config): its data-dir says where the reports are, unless --data-dir or " + dataDirEnv + " does",
	}
}

// dataDirFromConfig is the Before hook of desyncs list and show: when
// neither --data-dir nor LOCKHOST_DATA names the data folder, the config
// file's data-dir does, as it does for serve. Only that key is read: the
// file's other keys are serve's.
func dataDirFromConfig(c *cli.Context) error {
	path := c.String("config")
	if path == "" || c.String("data-dir") != "" {
		return nil
	}
	b, doc, err := loadConfig(path)
	if err != nil {
		return err
	}
	v, ok := doc["data-dir"]
	if !ok {
		return nil
	}
	d, ok := v.(string)
	if !ok {
		return cliutil.Usagef("%s: data-dir must be a string, not %s", where(path, keyLines(b)["data-dir"]), describe(v))
	}
	return c.Set("data-dir", d)
}

// desyncsCommand is "host desyncs": list and show desync reports.
func desyncsCommand() *cli.Command {
	return &cli.Command{
		Name:  "desyncs",
		Usage: "list and show the desync reports the host wrote",
		Description: "Each time a player's state hash differs from the host's, the host writes a report to the\n" +
			"desyncs folder of its data folder (--data-dir, or data-dir in the --config file): who, which\n" +
			"tick, which maps and parts differ, what the host did, and the commands that led up to it.\n" +
			"The newest " + strconv.Itoa(desync.Keep) + " are kept.",
		Subcommands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the desync reports, oldest first",
				UsageText: "host desyncs list [--data-dir DIR | --config FILE]",
				Flags:     []cli.Flag{dataDirFlag(), desyncsConfigFlag()},
				Before:    dataDirFromConfig,
				Action:    desyncsList,
			},
			{
				Name:  "show",
				Usage: "show one desync report",
				UsageText: "host desyncs show [--data-dir DIR | --config FILE] [--all] REPORT\n\n" +
					"REPORT is a report file, a file name in the desyncs folder, a number from 'host desyncs list'\n" +
					"(1 is the oldest) or \"last\".",
				Flags: []cli.Flag{
					dataDirFlag(),
					desyncsConfigFlag(),
					&cli.BoolFlag{Name: "all", Usage: fmt.Sprintf("print every command of the window, not only the last %d", maxShownCommands)},
				},
				Before: dataDirFromConfig,
				Action: desyncsShow,
			},
		},
	}
}

// desyncsList is "host desyncs list".
func desyncsList(c *cli.Context) error {
	if c.NArg() > 0 {
		return cliutil.Usagef("list takes no arguments, got %q (give the data folder with --data-dir)", c.Args().First())
	}
	dir, err := desyncsDir(c)
	if err != nil {
		return err
	}
	entries, err := desync.List(dir)
	if err != nil {
		return err
	}
	w := termsafe.Writer(cliutil.Out(c)) // report text is file text
	if len(entries) == 0 {
		fmt.Fprintf(w, "No desync reports in %s.\n", dir)
		return nil
	}
	fmt.Fprintf(w, "Desync reports in %s, oldest first:\n", dir)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tTIME\tPLAYER\tTICK\tSCOPE\tMAPS\tDIFFERS\tREPAIR")
	bad := 0
	for i, e := range entries {
		if e.Err != nil {
			bad++
			fmt.Fprintf(tw, "%d\t-\t-\t-\t-\t-\t-\tcannot be read: %v\n", i+1, e.Err)
			continue
		}
		r := e.Report
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", i+1, r.Time.Local().Format(time.RFC3339),
			reportPlayer(r), r.Tick, dashIfEmpty(r.Scope), reportMapList(r.MapIDs), desyncDiffSummary(r), dashIfEmpty(r.Repair))
	}
	tw.Flush()
	if bad > 0 {
		return cli.Exit(fmt.Sprintf("%d of the %d desync reports in %s cannot be read", bad, len(entries), dir), 1)
	}
	return nil
}

// reportPlayer is the report's player name, or its ID when it has none.
func reportPlayer(r *desync.Report) string {
	if r.Player == "" {
		return "ID " + strconv.Itoa(int(r.PlayerID))
	}
	return r.Player
}

// dashIfEmpty is s, or "-" for nothing.
func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// reportMapList is "2", "1,3" or "-"; past six maps it counts the rest.
func reportMapList(ids []int32) string {
	if len(ids) == 0 {
		return "-"
	}
	const most = 6
	var parts []string
	for i, id := range ids {
		if i == most {
			parts = append(parts, fmt.Sprintf("+%d", len(ids)-most))
			break
		}
		parts = append(parts, strconv.Itoa(int(id)))
	}
	return strings.Join(parts, ",")
}

// desyncDiffSummary is a short DiffParts: "world" when only the world hash
// differs.
func desyncDiffSummary(r *desync.Report) string {
	d := r.DiffParts()
	if len(d) == 0 {
		if r.WorldHost != r.WorldClient {
			return "world"
		}
		return "-"
	}
	return shortenRunes(strings.Join(d, "; "), 48)
}

// shortenRunes cuts s to at most n runes, marking the cut.
func shortenRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// resolveDesyncReport finds the file that REPORT names: "last" or a number
// from list (digits are always an index; write ./3 for a file named 3),
// else an existing file, else a file name in dir.
func resolveDesyncReport(dir, arg string) (string, error) {
	if arg == "last" || isReportIndex(arg) {
		names, err := desync.Names(dir)
		if err != nil {
			return "", err
		}
		if len(names) == 0 {
			return "", cliutil.Usagef("there are no desync reports in %s, so none numbered %s", dir, arg)
		}
		i := len(names)
		if arg != "last" {
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 || n > len(names) {
				return "", cliutil.Usagef("there is no desync report %s: %s holds reports 1 (the oldest) to %d", arg, dir, len(names))
			}
			i = n
		}
		return filepath.Join(dir, names[i-1]), nil
	}
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return arg, nil
	}
	if filepath.Base(arg) == arg {
		p := filepath.Join(dir, arg)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", cliutil.Usagef("%q is not a report file, a report name in %s, a number from 'host desyncs list' or \"last\"", arg, dir)
}

// isReportIndex tells whether s is all digits.
func isReportIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// desyncsShow is "host desyncs show".
func desyncsShow(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usagef("give one report: host desyncs show REPORT (a file, a name in the desyncs folder, a number from 'host desyncs list' or last)")
	}
	dir, err := desyncsDir(c)
	if err != nil {
		return err
	}
	path, err := resolveDesyncReport(dir, c.Args().First())
	if err != nil {
		return err
	}
	r, err := desync.Read(path)
	if err != nil {
		return fmt.Errorf("cannot read the %w", err) // "cannot read the desync report PATH: why"
	}
	printDesyncReport(termsafe.Writer(cliutil.Out(c)), path, r, c.Bool("all"))
	return nil
}

// hashState is the state of a pair of hashes.
func hashState(match bool) string {
	if match {
		return "ok"
	}
	return "DIFFERS"
}

// printDesyncReport prints r readably.
func printDesyncReport(w io.Writer, path string, r *desync.Report, all bool) {
	fmt.Fprintf(w, "Desync report %s\n", path)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprintf(tw, "Time:\t%s\n", r.Time.Local().Format(time.RFC3339))
	fmt.Fprintf(tw, "Game:\t%s\n", r.Game)
	fmt.Fprintf(tw, "Player:\t%s (ID %d)\n", reportPlayer(r), r.PlayerID)
	fmt.Fprintf(tw, "Tick:\t%d (the checkpoint whose hashes differ)\n", r.Tick)
	fmt.Fprintf(tw, "Host tick:\t%d (when the host noticed)\n", r.HostTick)
	fmt.Fprintf(tw, "Scope:\t%s\n", dashIfEmpty(r.Scope))
	fmt.Fprintf(tw, "Repair:\t%s\n", dashIfEmpty(r.Repair))
	fmt.Fprintf(tw, "Reference:\t%s (whose hashes the client's were compared with)\n", dashIfEmpty(r.Reference))
	fmt.Fprintf(tw, "Count:\t%d (this player's desyncs within the drop window, this one included)\n", r.Count)
	fmt.Fprintf(tw, "World hash:\thost %016x, client %016x: %s\n", r.WorldHost, r.WorldClient, hashState(r.WorldHost == r.WorldClient))
	tw.Flush()

	fmt.Fprintln(w)
	if len(r.Maps) == 0 {
		fmt.Fprintln(w, "The client reported no maps.")
	} else {
		fmt.Fprintf(w, "Maps (%d reported):\n", len(r.Maps))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  MAP\tHOST\tCLIENT\tSTATE")
		for _, m := range r.Maps {
			fmt.Fprintf(tw, "  %d\t%016x\t%016x\t%s\n", m.ID, m.Host, m.Client, hashState(m.Match))
		}
		tw.Flush()
	}
	for _, m := range r.Maps {
		if m.Match || len(m.Parts) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nMap %d parts:\n", m.ID)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  PART\tHOST\tCLIENT\tSTATE")
		for _, p := range m.Parts {
			fmt.Fprintf(tw, "  %s\t%016x\t%016x\t%s\n", p.Name, p.Host, p.Client, hashState(p.Match))
		}
		tw.Flush()
	}

	to := r.CommandsFrom
	if r.Tick > r.CommandsFrom {
		to = r.Tick - 1
	}
	cmds := r.Commands
	fmt.Fprintf(w, "\nCommands from tick %d to %d (%d):\n", r.CommandsFrom, to, len(cmds))
	if len(cmds) == 0 {
		fmt.Fprintln(w, "  none")
		return
	}
	if !all && len(cmds) > maxShownCommands {
		fmt.Fprintf(w, "  (%d earlier commands left out; --all prints them)\n", len(cmds)-maxShownCommands)
		cmds = cmds[len(cmds)-maxShownCommands:]
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  TICK\tSEQ\tPLAYER\tMAP\tKIND\tPAYLOAD\t")
	for _, cmd := range cmds {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t0x%04x\t%d bytes\t\n", cmd.Tick, cmd.Seq, cmd.Player, cmd.MapID, cmd.Kind, len(cmd.Payload))
	}
	tw.Flush()
}
