package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/urfave/cli/v2"
)

// runDesyncsCLI runs the host tool in-process and returns its exit code, its
// output and its diagnostics.
func runDesyncsCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errOut
	code := cliutil.Run(app, append([]string{"host"}, args...), &errOut, nil)
	return code, out.String(), errOut.String()
}

// writeDesyncReports writes two reports into dataDir's desyncs folder, Alice's
// (map scope, parts, a long command window) first and Bob's (world
// scope) an hour later, and returns their paths.
func writeDesyncReports(t *testing.T, dataDir string, commands int) (string, string) {
	t.Helper()
	dir := filepath.Join(dataDir, desync.DirName)
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	var cmds []lockstep.Command
	for i := range commands {
		cmds = append(cmds, lockstep.Command{Tick: 1100 + uint64(i)/4, Seq: uint32(i % 4), MapID: 2, Kind: 0x0007, Player: 2, Payload: make([]byte, 9)})
	}
	alice := &desync.Report{
		Time: t0, Game: "test colony", PlayerID: 2, Player: "Alice", Tick: 1200, HostTick: 1206,
		Scope: desync.ScopeMap, MapIDs: []int32{2}, WorldHost: 0xdeadbeefcafef00d, WorldClient: 0x0123456789abcdef,
		Maps: []desync.MapCheck{
			{ID: 1, Host: 0x11, Client: 0x11, Match: true},
			{ID: 2, Host: 0x22, Client: 0x23, Parts: []desync.PartCheck{
				{Name: "terrain", Host: 1, Client: 1, Match: true},
				{Name: "things rows q2", Host: 4, Client: 5},
			}},
		},
		Commands: desync.Records(cmds), CommandsFrom: 1100, Repair: desync.RepairMap, Count: 1,
		Reference: desync.ReferenceMajority(2, 3),
	}
	bob := &desync.Report{
		Time: t0.Add(time.Hour), Game: "test colony", PlayerID: 3, Player: "Bob", Tick: 4800, HostTick: 4805,
		Scope: desync.ScopeWorld, WorldHost: 1, WorldClient: 2,
		Maps:     []desync.MapCheck{{ID: 1, Host: 5, Client: 5, Match: true}},
		Commands: nil, CommandsFrom: 4700, Repair: desync.RepairWorld, Count: 3,
	}
	p1, err := desync.Write(dir, alice)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := desync.Write(dir, bob)
	if err != nil {
		t.Fatal(err)
	}
	return p1, p2
}

func wantInOutput(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

func TestDesyncsListEmpty(t *testing.T) {
	data := t.TempDir()
	code, out, errOut := runDesyncsCLI(t, "desyncs", "list", "--data-dir", data)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if want := fmt.Sprintf("No desync reports in %s.\n", filepath.Join(data, desync.DirName)); out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
	// The same from the environment, the folder not existing at all.
	t.Setenv("LOCKHOST_DATA", filepath.Join(data, "never-made"))
	if code, out, _ := runDesyncsCLI(t, "desyncs", "list"); code != 0 || !strings.Contains(out, "never-made") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestDesyncsListAndShow(t *testing.T) {
	data := t.TempDir()
	p1, p2 := writeDesyncReports(t, data, 250)

	code, out, errOut := runDesyncsCLI(t, "desyncs", "list", "--data-dir", data)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	wantInOutput(t, "list", out, "Alice", "Bob", "1200", "4800", "map 2: things rows q2", "world", "REPAIR")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[2], "1 ") || !strings.Contains(lines[2], "Alice") ||
		!strings.HasPrefix(lines[3], "2 ") || !strings.Contains(lines[3], "Bob") {
		t.Fatalf("list is not oldest first:\n%s", out)
	}
	if want := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC).Local().Format(time.RFC3339); !strings.Contains(lines[2], want) {
		t.Errorf("list lacks the local time %s:\n%s", want, out)
	}

	_, byIndex, _ := runDesyncsCLI(t, "desyncs", "show", "--data-dir", data, "1")
	for name, args := range map[string][]string{
		"path":       {"desyncs", "show", p1},
		"file name":  {"desyncs", "show", "--data-dir", data, filepath.Base(p1)},
		"flag after": {"desyncs", "show", "1", "--data-dir", data},
	} {
		code, out, errOut := runDesyncsCLI(t, args...)
		if code != 0 || out != byIndex {
			t.Errorf("show by %s: exit %d, %s\n%s\nwant\n%s", name, code, errOut, out, byIndex)
		}
	}
	wantInOutput(t, "show 1", byIndex, "Alice (ID 2)", "test colony", "1200", "1206", "deadbeefcafef00d", "0123456789abcdef",
		"DIFFERS", "things rows q2", "terrain", "Map 2 parts:", "majority 2 of 3 players",
		"Commands from tick 1100 to 1199 (250):", "(50 earlier commands left out; --all prints them)", "0x0007", "9 bytes")
	if n := strings.Count(byIndex, "9 bytes"); n != 200 {
		t.Errorf("show printed %d commands, want the last 200", n)
	}
	code, all, _ := runDesyncsCLI(t, "desyncs", "show", "--all", "--data-dir", data, "1")
	if n := strings.Count(all, "9 bytes"); code != 0 || n != 250 || strings.Contains(all, "left out") {
		t.Errorf("show --all: exit %d, %d commands", code, n)
	}

	code, last, errOut := runDesyncsCLI(t, "desyncs", "show", "--data-dir", data, "last")
	if code != 0 {
		t.Fatalf("show last: exit %d: %s", code, errOut)
	}
	wantInOutput(t, "show last", last, p2, "Bob (ID 3)", "4800", "world", "Count:", "3", "Commands from tick 4700 to 4799 (0):", "none")
	if strings.Contains(last, "Alice") || strings.Count(last, "DIFFERS") != 1 {
		t.Errorf("show last shows the wrong report:\n%s", last)
	}
	if _, two, _ := runDesyncsCLI(t, "desyncs", "show", "--data-dir", data, "2"); two != last {
		t.Errorf("show 2 differs from show last")
	}
}

func TestDesyncsShowErrors(t *testing.T) {
	data := t.TempDir()
	p1, _ := writeDesyncReports(t, data, 3)
	for _, args := range [][]string{
		{"desyncs", "show", "--data-dir", data, "3"},
		{"desyncs", "show", "--data-dir", data, "0"},
		{"desyncs", "show", "--data-dir", data, "99999999999999999999"},
		{"desyncs", "show", "--data-dir", data, "nonsense"},
		{"desyncs", "show", "--data-dir", data},
		{"desyncs", "show", "--data-dir", data, "1", "2"},
		{"desyncs", "list", "--data-dir", data, "extra"},
		{"desyncs", "show", "--data-dir", t.TempDir(), "last"},
	} {
		code, out, errOut := runDesyncsCLI(t, args...)
		if code != cliutil.ExitUsage || !strings.Contains(errOut, "--help") {
			t.Errorf("%q: exit %d, want %d; stdout %q, stderr %q", args, code, cliutil.ExitUsage, out, errOut)
		}
	}

	// A damaged report: exit 1 with one sentence naming it.
	if err := os.WriteFile(p1, []byte(`{"version":1,"tick":12`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runDesyncsCLI(t, "desyncs", "show", "--data-dir", data, "1")
	if code != cliutil.ExitFailure || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("damaged report: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	wantInOutput(t, "error", errOut, "cannot read the desync report", p1, "truncated")
	// list shows it as unreadable, lists the other, and exits 1.
	code, out, errOut = runDesyncsCLI(t, "desyncs", "list", "--data-dir", data)
	if code != cliutil.ExitFailure {
		t.Fatalf("list with a damaged report: exit %d", code)
	}
	wantInOutput(t, "list", out, "cannot be read", "Bob")
	wantInOutput(t, "list stderr", errOut, "1 of the 2 desync reports")
}

func TestDataDir(t *testing.T) {
	get := func(args ...string) string {
		t.Helper()
		var got string
		app := &cli.App{Flags: []cli.Flag{dataDirFlag()}, Action: func(c *cli.Context) error {
			var err error
			got, err = dataDir(c)
			return err
		}}
		if err := app.Run(append([]string{"x"}, args...)); err != nil {
			t.Fatal(err)
		}
		return got
	}
	dir := t.TempDir()
	t.Setenv("LOCKHOST_DATA", "")
	if got := get("--data-dir", dir); got != dir {
		t.Errorf("flag: %s", got)
	}
	t.Setenv("LOCKHOST_DATA", filepath.Join(dir, "env"))
	if got := get(); got != filepath.Join(dir, "env") {
		t.Errorf("env: %s", got)
	}
	if got := get("--data-dir", dir); got != dir {
		t.Errorf("flag over env: %s", got)
	}
	t.Setenv("LOCKHOST_DATA", "")
	if runtime.GOOS != "linux" {
		return // the defaults below depend on XDG_CONFIG_HOME
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	if got, want := get(), filepath.Join(dir, "config", "lockhost", "host"); got != want {
		t.Errorf("default %s, want %s", got, want)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "")
	wd, _ := os.Getwd()
	if got, want := get(), filepath.Join(wd, ".lockhost-host"); got != want {
		t.Errorf("fallback %s, want %s", got, want)
	}
	if got := get("--data-dir", "rel"); got != filepath.Join(wd, "rel") {
		t.Errorf("relative %s", got)
	}
}

// TestDesyncsShowEscapesControlCharacters: a report's text (from a client
// or an edited file) reaches the terminal with its control characters
// escaped, in show and in list.
func TestDesyncsShowEscapesControlCharacters(t *testing.T) {
	data := t.TempDir()
	r := &desync.Report{
		Time: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC), Game: "colony\x1b[2J", PlayerID: 2, Player: "Eve\x1b]0;owned\x07",
		Tick: 1200, HostTick: 1206, Scope: desync.ScopeMap, MapIDs: []int32{2}, WorldHost: 1, WorldClient: 2,
		Maps:         []desync.MapCheck{{ID: 2, Host: 1, Client: 2, Parts: []desync.PartCheck{{Name: "rows\r\u009b31m", Host: 1, Client: 2}}}},
		CommandsFrom: 1100, Repair: desync.RepairMap, Count: 1,
	}
	if _, err := desync.Write(filepath.Join(data, desync.DirName), r); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"desyncs", "show", "--data-dir", data, "last"}, {"desyncs", "list", "--data-dir", data}} {
		code, out, errOut := runDesyncsCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if strings.ContainsAny(out, "\x1b\x07\r\u009b") {
			t.Errorf("%v printed control characters raw:\n%q", args, out)
		}
		wantInOutput(t, args[1], out, `Eve\x1b]0;owned\x07`)
	}
	_, out, _ := runDesyncsCLI(t, "desyncs", "show", "--data-dir", data, "last")
	wantInOutput(t, "show", out, `colony\x1b[2J`, `rows\x0d\x9b31m`)
}

// TestDesyncsDataDirFromConfig: with the config file serve reads (by
// LOCKHOST_CONFIG or --config), the desyncs commands look in its
// data-dir, whatever serve's other keys it holds; --data-dir and
// LOCKHOST_DATA win over it, as they do for serve.
func TestDesyncsDataDirFromConfig(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the default data folder, empty
	t.Setenv("LOCKHOST_DATA", "")
	os.Unsetenv("LOCKHOST_DATA")
	data := t.TempDir()
	writeDesyncReports(t, data, 3)
	file := filepath.Join(t.TempDir(), "host.toml")
	if err := os.WriteFile(file, []byte(fmt.Sprintf("tick-rate = 30\ndata-dir = %q\nmax-players = 4\n", data)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(configEnv, file)
	if code, out, errOut := runDesyncsCLI(t, "desyncs", "list"); code != 0 || !strings.Contains(out, "Alice") {
		t.Fatalf("%s from the environment: exit %d\n%s%s", configEnv, code, out, errOut)
	}
	if code, out, errOut := runDesyncsCLI(t, "desyncs", "show", "last"); code != 0 || !strings.Contains(out, "Bob") {
		t.Fatalf("show: exit %d\n%s%s", code, out, errOut)
	}
	os.Unsetenv(configEnv)
	if code, out, errOut := runDesyncsCLI(t, "desyncs", "list", "--config", file); code != 0 || !strings.Contains(out, "Alice") {
		t.Fatalf("--config: exit %d\n%s%s", code, out, errOut)
	}
	other := t.TempDir()
	if code, out, _ := runDesyncsCLI(t, "desyncs", "list", "--config", file, "--data-dir", other); code != 0 || !strings.Contains(out, "No desync reports in "+other) {
		t.Fatalf("--data-dir over the file: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("tick-rate = 30\ndata-dir = 7\n"), 0o600)
	if code, _, errOut := runDesyncsCLI(t, "desyncs", "list", "--config", bad); code != cliutil.ExitUsage || !strings.Contains(errOut, "line 2: data-dir must be a string") {
		t.Fatalf("a data-dir that is no string: exit %d, %s", code, errOut)
	}
	t.Setenv("LOCKHOST_DATA", other)
	if code, out, _ := runDesyncsCLI(t, "desyncs", "list", "--config", file); code != 0 || !strings.Contains(out, "No desync reports in "+other) {
		t.Fatalf("LOCKHOST_DATA over the file: exit %d\n%s", code, out)
	}
}
