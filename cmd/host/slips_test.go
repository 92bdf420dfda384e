package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/transport/coord"
)

// The tests in this file run the real host through an operator's
// ordinary slips: a second host on a save, a busy port, a zero value, a
// mod without its base. Each must be one sentence and exit 2, found
// before any world is made, and must change no file.

// refuseWithin bounds a run that must be refused; the refusals take well
// under a second, and a host that starts instead is killed after it.
const refuseWithin = 15 * time.Second

var (
	slipBinOnce sync.Once
	slipBinDir  string
	slipBin     string
	slipBinErr  error
)

// TestMain removes the host hostBinary built, if it built one. Every
// host the tests run, in this process or as a child, maps no port: no test
// asks a real router (portMappingEnv); and answers no LAN discovery, so
// no player's join discover lists it (discoveryPortEnv).
func TestMain(m *testing.M) {
	os.Setenv(portMappingEnv, "off")
	os.Setenv(discoveryPortEnv, "-1")
	os.Unsetenv(coord.URLEnv) // no test registers with a coordinator it did not start
	code := m.Run()
	if slipBinDir != "" {
		os.RemoveAll(slipBinDir)
	}
	os.Exit(code)
}

// hostBinary builds the host once for the tests of this file, or takes
// the one LOCKHOST_TEST_HOST names: so these tests can be run against an
// older build, to see what they catch.
func hostBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the host")
	}
	if bin := os.Getenv("LOCKHOST_TEST_HOST"); bin != "" {
		return bin
	}
	slipBinOnce.Do(func() {
		slipBinDir, slipBinErr = os.MkdirTemp("", "lockhost-slips-")
		if slipBinErr != nil {
			return
		}
		slipBin, slipBinErr = procstat.BuildTool(slipBinDir, "github.com/lockhost/lockhost/cmd/host")
	})
	if slipBinErr != nil {
		t.Fatal(slipBinErr)
	}
	return slipBin
}

// runBounded is runTool that kills bin after limit: a host that starts
// when it should have refused is reported, not waited for. Its exit code
// is then -1.
func runBounded(t *testing.T, limit time.Duration, bin string, args ...string) (int, string) {
	t.Helper()
	var out syncbuf.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitCode(t, err), out.String()
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return -1, fmt.Sprintf("(still running after %v; killed)\n%s", limit, out.String())
	}
}

// wantRefused checks a run that must fail with exit 2 and one line that
// holds every want, before any world was made.
func wantRefused(t *testing.T, code int, out string, wants ...string) {
	t.Helper()
	if code != 2 {
		t.Errorf("exit %d, want 2:\n%s", code, out)
	}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, never := range []string{"world generated", "generating the world", "save loaded", "msg=hosting"} {
		if strings.Contains(out, never) {
			t.Errorf("the host got as far as %q before refusing:\n%s", never, out)
		}
	}
}

// TestOneHostPerSave: a second host on a save that a host runs on is
// refused, naming the save and the holder, and so are --force-new (which
// moves nothing), --new and saves new --force; once the holder is killed
// with SIGKILL the save is free (the OS released the lock) and the same
// command goes on with it.
func TestOneHostPerSave(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	save := filepath.Join(dir, "colony.lhsave")
	first := startServe(t, bin, filepath.Join(dir, "data1"), "--save", save, "--new", "--autosave", "1s")
	first.waitLog(t, "msg=hosting")
	first.waitLog(t, "msg=saved") // an autosave is on disk
	addr := hostingAddr(t, first.log)
	holder := fmt.Sprintf("(process %d, listening on %s, since ", first.cmd.Process.Pid, addr)

	code, out := runBounded(t, refuseWithin, bin, append([]string{"serve", "--data-dir", filepath.Join(dir, "data2"), "--save", save}, smallWorld...)...)
	wantRefused(t, code, out, "the save "+save+" is in use by another host "+holder)
	code, out = runBounded(t, refuseWithin, bin, append([]string{"serve", "--data-dir", filepath.Join(dir, "data2"), "--save", save, "--force-new"}, smallWorld...)...)
	wantRefused(t, code, out, "is in use by another host "+holder)
	code, out = runBounded(t, refuseWithin, bin, append([]string{"serve", "--data-dir", filepath.Join(dir, "data2"), "--save", save, "--new"}, smallWorld...)...)
	wantRefused(t, code, out, "is in use by another host")
	code, out = runBounded(t, refuseWithin, bin, "saves", "new", "--out", save, "--force", "--maps", "1", "--map-size", "48")
	wantRefused(t, code, out, "--out: the save "+save+" is in use by another host "+holder)
	if moved, _ := filepath.Glob(filepath.Join(dir, "colony.old-*")); len(moved) > 0 {
		t.Fatalf("--force-new moved the running host's files into %v", moved)
	}
	if autos, err := saves.Autosaves(save); err != nil || len(autos) == 0 {
		t.Fatalf("the running host's autosaves are gone: %v, %v", autos, err)
	}

	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.exit(t)
	again := startServe(t, bin, filepath.Join(dir, "data2"), "--save", save)
	again.waitLog(t, "msg=hosting")
	if code := again.stop(t); code != 0 {
		t.Fatalf("the host after the kill exited %d:\n%s", code, again.log.String())
	}
}

// TestBusyPortsFailFast: a port that is taken, the game's (TCP or its UDP
// twin), the status page's or RCON's, stops the host before it makes a
// 200 MiB world, in one sentence with exit 2.
func TestBusyPortsFailFast(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	busy, busyUDP := tcp.Addr().String(), udp.LocalAddr().String()
	big := []string{"serve", "--data-dir", filepath.Join(dir, "data"), "--world-mib", "200"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", busy}, "--listen " + busy + ": cannot listen on TCP " + busy + ": address already in use"},
		{[]string{"--listen", busyUDP}, "--listen " + busyUDP + ": cannot listen on UDP " + busyUDP + ": address already in use"},
		{[]string{"--listen", "127.0.0.1:0", "--http", busy}, "--http " + busy + ": cannot listen on TCP " + busy + ": address already in use"},
		{[]string{"--listen", "127.0.0.1:0", "--rcon", busy, "--rcon-password-file", pw}, "--rcon " + busy + ": cannot listen on TCP " + busy + ": address already in use"},
	} {
		start := time.Now()
		code, out := runBounded(t, refuseWithin, bin, append(append([]string{}, big...), tc.args...)...)
		took := time.Since(start)
		wantRefused(t, code, out, tc.want)
		t.Logf("%v: exit %d in %v: %s", tc.args, code, took.Round(time.Millisecond), strings.TrimSpace(out))
	}
}

// TestDataDirProblemsFailAtStart: a data folder that cannot be made or
// holds a damaged ban list stops the host at once; before, the first was
// found when the world was ready and the second only then too.
func TestDataDirProblemsFailAtStart(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "damaged")
	writeUnder(t, damaged, "bans.json", []byte("{not json"))
	for _, tc := range []struct{ data, want string }{
		{filepath.Join(file, "data"), "the data folder cannot be made"},
		{damaged, "ban list " + filepath.Join(damaged, "bans.json") + " is damaged"},
	} {
		code, out := runBounded(t, refuseWithin, bin, append([]string{"serve", "--data-dir", tc.data, "--world-mib", "200"}, "--listen", "127.0.0.1:0")...)
		wantRefused(t, code, out, "--data-dir "+tc.data+":", tc.want)
	}
}

// TestNumbersHaveOneRule: a zero or negative value is refused, naming the
// option (and the config file and line), unless the help says what it
// means, and then it means that.
func TestNumbersHaveOneRule(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-players", "0"}, "--max-players 0 is refused: it takes 1 to 1024"},
		{[]string{"--tick-rate", "0"}, "--tick-rate 0 is refused: it takes 1 to 1000"},
		{[]string{"--max-pending", "0"}, "--max-pending 0 is refused: it takes at least 1; -1: no limit"},
		{[]string{"--conn-rate", "0"}, "--conn-rate 0 is refused"},
		{[]string{"--keep", "0"}, "--keep 0 is refused"},
		{[]string{"--max-lag", "0"}, "--max-lag 0 is refused"},
		{[]string{"--hash-every", "0"}, "--hash-every 0 is refused: it takes 1 to 1048576; -1: no desync detection"},
		{[]string{"--max-hold", "0s"}, "--max-hold 0s is refused: it takes more than 0; -1s: no limit"},
		{[]string{"--max-hold", "-5s"}, "--max-hold -5s is refused"},
		{[]string{"--maps", "0"}, "--maps 0 is refused"},
		{[]string{"--pawns-per-map", "0"}, "--pawns-per-map 0 is refused"},
		{[]string{"--max-spectators", "0"}, "--max-spectators 0 is refused: it takes 1 to 1024; -1: no spectators"},
		{[]string{"--autosave", "0"}, "--autosave 0s is refused: it takes more than 0; -1s: never autosave"},
		{[]string{"--drop-unverified", "0"}, "--drop-unverified 0 is refused: it takes 1 to 1000; -1: never drop"},
		{[]string{"--world-mib", "999999"}, "--world-mib 999999 is refused: it takes 1 to "},
		{[]string{"--world-mib", "0"}, "--world-mib 0 is refused"},
	} {
		code, out := runBounded(t, refuseWithin, bin, append([]string{"serve", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0"}, tc.args...)...)
		wantRefused(t, code, out, tc.want)
	}
	conf := writeFile(t, "h.toml", "game-name = \"x\"\nmax-players = -3\n")
	code, out := runBounded(t, refuseWithin, bin, "serve", "--config", conf, "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0")
	wantRefused(t, code, out, "--max-players -3 is refused", "config file "+conf+": max-players on line 2")

	code, out = runBounded(t, refuseWithin, bin, "serve", "--help")
	if code != 0 || !strings.Contains(out, "a quarter of this machine's") || !strings.Contains(out, numbersRule[:40]) {
		t.Errorf("serve --help does not give the rule and the world's maximum (exit %d):\n%s", code, out)
	}
	if !regexp.MustCompile(`--max-spectators value +most spectators online at once, counted apart from players \(1 to 1024; -1: no spectators\)`).MatchString(out) {
		t.Errorf("serve --help does not say what --max-spectators -1 means:\n%s", out)
	}
}

// TestModAloneSaysWhatItLacks: a mod hosted without the base content it
// builds on is refused in one message naming everything the content
// lacks and the flags that load the base under it.
func TestModAloneSaysWhatItLacks(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	mod := filepath.Join(dir, "SmokeMod")
	writeUnder(t, mod, "About/About.xml", []byte(`<ModMetaData><packageId>test.smoke</packageId><name>Smoke</name></ModMetaData>`))
	writeUnder(t, mod, "Defs/Things.xml", []byte(`<Defs><ThingDef><defName>Mote_Smoke</defName><category>Mote</category></ThingDef></Defs>`))
	code, out := runBounded(t, refuseWithin, bin, "serve", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--content", mod)
	if code == 0 {
		t.Fatalf("a mod alone was hosted:\n%s", out)
	}
	for _, want := range []string{"no TerrainDef, no ThingDef of category Item, Food, Plant or Building, no PawnKindDef",
		"--content PATH/TO/RimWorld/Data/Core --content " + mod, "--content game/colony/content/Core --content " + mod} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(strings.TrimSpace(out), "\n"); n != 0 {
		t.Errorf("%d lines, want one:\n%s", n+1, out)
	}
}

// TestEveryNumberFlagHasARule: the rule covers every number option of the
// commands that take them, so a new option cannot skip it.
func TestEveryNumberFlagHasARule(t *testing.T) {
	app := newApp()
	for _, cmd := range []string{"serve", "saves new"} {
		c := app.Command(strings.Fields(cmd)[0])
		if sub := strings.Fields(cmd); len(sub) > 1 {
			c = c.Command(sub[1])
		}
		for _, f := range c.Flags {
			if kind, _ := flagKind(f); kind == kindString || kind == kindBool {
				continue
			}
			if _, ok := numberRules()[f.Names()[0]]; !ok {
				t.Errorf("%s --%s has no rule in numberRules", cmd, f.Names()[0])
			}
		}
	}
}

// TestWarnOpen: the host says so when it listens on every interface with
// no password, and only then.
func TestWarnOpen(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		password bool
		warned   bool
	}{
		{"0.0.0.0:30502", false, true},
		{"[::]:30502", false, true},
		{"0.0.0.0:30502", true, false},
		{"127.0.0.1:30502", false, false},
	} {
		var buf syncbuf.Buffer
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		warnOpen(addr, tc.password, slog.New(slog.NewTextHandler(&buf, nil)))
		if got := strings.Contains(buf.String(), "anyone who can reach port 30502 may join"); got != tc.warned {
			t.Errorf("%s, password %v: warned %v, want %v: %s", tc.addr, tc.password, got, tc.warned, buf.String())
		}
	}
}
