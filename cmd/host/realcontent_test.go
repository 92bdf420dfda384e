package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

// realModFiles is a mod written the way real RimWorld mods are: version
// folders only, thing categories and def types the reference game does not
// simulate, a pawn kind without its invented fields, a def inheriting
// from a parent in Core, a song named by its clip, a Latin-1 file.
var realModFiles = map[string]string{
	"About/About.xml": `<?xml version="1.0" encoding="utf-8"?>
<ModMetaData><packageId>test.realmod</packageId><name>Real-style mod</name>
<supportedVersions><li>1.5</li><li>1.6</li></supportedVersions></ModMetaData>`,
	"1.6/Defs/Things.xml": `<?xml version="1.0" encoding="utf-8"?>
<Defs>
  <ThingDef><defName>Mote_Smoke</defName><category>Mote</category><altitudeLayer>MoteOverhead</altitudeLayer><mote><fadeInTime>0.2</fadeInTime></mote></ThingDef>
  <ThingDef><defName>Raider</defName><category>Pawn</category><race><body>Human</body></race></ThingDef>
  <ThingDef><defName>Apparel_Parka</defName><category>Item</category><stackLimit>1</stackLimit><apparel><bodyPartGroups><li>Torso</li></bodyPartGroups></apparel></ThingDef>
  <ThingDef ParentName="ResourceBase"><defName>Uranium</defName><label>uranium</label></ThingDef>
  <ThingDef><defName>Plant_Potato</defName><category>Plant</category><plant><growDays>5.8</growDays></plant></ThingDef>
</Defs>`,
	"1.6/Defs/Other.xml": `<Defs>
  <FleckDef><defName>DustPuff</defName><graphicData><texPath>Things/Mote/DustPuff</texPath></graphicData></FleckDef>
  <SongDef><clipPath>Songs/Ambient/Dawn</clipPath></SongDef>
  <PawnKindDef><defName>Villager</defName><race>Human</race><combatPower>40</combatPower></PawnKindDef>
</Defs>`,
	// Old content: not loaded for 1.6, which has its own folder.
	"1.5/Defs/Things.xml": `<Defs><ThingDef><defName>Old15</defName><category>Item</category></ThingDef></Defs>`,
}

// writeRealContent writes the embedded Core and the real-style mod (with a
// Latin-1 file) under dir and returns their folders.
func writeRealContent(t *testing.T, dir string) (core, mod string) {
	t.Helper()
	core, mod = filepath.Join(dir, "Core"), filepath.Join(dir, "RealMod")
	if err := os.CopyFS(core, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	for name, text := range realModFiles {
		writeUnder(t, mod, name, []byte(text))
	}
	writeUnder(t, mod, "1.6/Defs/Latin1.xml", []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<Defs><ThingDef><defName>Caf\xe9Table</defName><category>Building</category><label>caf\xe9 table</label></ThingDef></Defs>"))
	return core, mod
}

func writeUnder(t *testing.T, root, name string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostRealModContent hosts the embedded Core plus a mod with unknown
// thing categories and def types through the real tools: serve, join,
// play commands, the final save, then load that save and join again.
func TestHostRealModContent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tools")
	}
	dir := t.TempDir()
	hostBin, joinBin := buildHostAndJoin(t, dir)
	core, mod := writeRealContent(t, dir)
	content := []string{"--content", core, "--content", mod}

	// The content loads as the tools will load it: the mod's unknown
	// defs are carried, and they are part of the def databases.
	bundle, err := gamecontent.Load([]string{core, mod}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"FleckDef", "SongDef"} {
		if bundle.Set.Database(typ).Count() != 1 || bundle.Report.Carried[typ] != 1 {
			t.Errorf("%s: %d in the databases, %d carried", typ, bundle.Set.Database(typ).Count(), bundle.Report.Carried[typ])
		}
	}
	if things := bundle.Set.Database("ThingDef"); things.Def("Old15") != nil || things.Def("Uranium") == nil || things.Def("CaféTable") == nil {
		t.Fatalf("wrong folders or files read: %v", bundle.Set.Mods)
	}
	if bundle.Content.ThingIndex("Mote_Smoke") >= 0 || bundle.Content.ThingIndex("Apparel_Parka") < 0 {
		t.Fatal("a Mote is simulated or an Item is not")
	}

	save := filepath.Join(dir, "world.lhsave")
	serve := func(args ...string) (*syncbuf.Buffer, string, string, chan error, *exec.Cmd) {
		all := append([]string{"serve", "--listen", "127.0.0.1:0", "--save", save, "--autosave", "-1s", "--map-size", "48",
			"--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1", "--http", "127.0.0.1:0"}, content...)
		h := runHost(t, hostBin, append(all, args...)...)
		page := waitStatusPage(t, h.log, h.done)
		return h.log, page, hostingAddr(t, h.log), h.done, h.cmd
	}
	stop := func(cmd *exec.Cmd, done chan error, log *syncbuf.Buffer) {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			done <- err
			if err != nil {
				t.Fatalf("host exited with %v:\n%s", err, log.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("host still running 20 s after SIGTERM:\n%s", log.String())
		}
	}

	hostLog, page, addr, done, hostCmd := serve("--new")
	if !strings.Contains(hostLog.String(), `folders="lockhost.core: /; test.realmod: /, 1.6/"`) {
		t.Errorf("host log does not say which folders it read:\n%s", hostLog.String())
	}
	if !strings.Contains(hostLog.String(), "carried without being simulated") {
		t.Errorf("host log does not say which defs are carried:\n%s", hostLog.String())
	}
	stdin, joinOut, joinErr := join(t, joinBin, addr, content)
	// Play: commands for the mod's simulated things, moves, a speed change.
	for i := range 10 {
		fmt.Fprintf(stdin, "spawn Apparel_Parka 0 %d %d 1\n", 5+i, 7)
		fmt.Fprintf(stdin, "spawn Uranium 0 %d %d 10\n", 5+i, 9)
	}
	fmt.Fprintln(stdin, "speed 3")
	fmt.Fprintln(stdin, "move 0 1 20 20")
	const sent = 21 // the spawns and the move; speed is the session's, not a map command
	var accepted int
	for deadline := time.Now().Add(30 * time.Second); accepted < sent || readOverview(t, page).Speed != 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d commands accepted after 30 s\nhost:\n%s\njoin:\n%s", accepted, sent, hostLog.String(), joinErr.String())
		}
		accepted = commandsAccepted(t, page)
	}
	// Run past at least two state-hash checks (every 60 ticks) after the
	// commands, so a desync would show.
	start := readOverview(t, page).Tick
	for deadline := time.Now().Add(30 * time.Second); readOverview(t, page).Tick < start+150; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("session stuck:\n%s", hostLog.String())
		}
	}
	if strings.Contains(hostLog.String(), `msg=desync`) {
		t.Fatalf("the joiner desynced on real-style content:\n%s", hostLog.String())
	}
	stop(hostCmd, done, hostLog)
	stdin.Close()
	if !strings.Contains(joinOut.String(), "WorldReady") {
		t.Fatalf("join never reached WorldReady:\n%s\n%s", joinOut.String(), joinErr.String())
	}
	f, err := saves.Read(save)
	if err != nil {
		t.Fatalf("final save: %v", err)
	}
	if f.Meta.Tick < start+150 {
		t.Errorf("final save at tick %d, want at least %d", f.Meta.Tick, start+150)
	}

	// Load the save with the same content and join it again.
	hostLog, _, addr, done, hostCmd = serve()
	stdin, joinOut, joinErr = join(t, joinBin, addr, content)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(joinOut.String(), "WorldReady"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no WorldReady after loading the save:\n%s\n%s", joinErr.String(), hostLog.String())
		}
	}
	m := regexp.MustCompile(`WorldReady\D*(\d+)`).FindStringSubmatch(joinOut.String())
	if m == nil {
		t.Fatalf("WorldReady line without a tick: %s", joinOut.String())
	}
	if tick, _ := strconv.ParseUint(m[1], 10, 64); tick < f.Meta.Tick {
		t.Errorf("joined the loaded world at tick %d, before the save's tick %d", tick, f.Meta.Tick)
	}
	stop(hostCmd, done, hostLog)
	stdin.Close()
}

// join starts the join tool on addr with content flags and returns its
// standard input and output.
func join(t *testing.T, bin, addr string, content []string) (io.WriteCloser, *syncbuf.Buffer, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{addr, "--name", "Alice", "--no-reconnect"}, content...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "WorldReady"); time.Sleep(20 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("join exited before WorldReady:\n%s\n%s", out.String(), errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("join did not reach WorldReady:\n%s", errOut.String())
		}
	}
	return stdin, &out, &errOut
}

// commandsAccepted reads lockhost_commands_total{result="accepted"}.
func commandsAccepted(t *testing.T, page string) int {
	t.Helper()
	resp, err := http.Get(page + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), `lockhost_commands_total{result="accepted"} `); ok {
			n, err := strconv.ParseFloat(rest, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return 0
}
