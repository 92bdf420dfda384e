package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/operator/agones"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/agonestest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// TestAgonesLifeOfAHost runs the real host under Agones' own SDK server
// in local mode, found only through AGONES_SDK_HTTP_PORT as in a pod: the
// GameServer is Ready once the world is loaded, with its labels; Health
// pings come while the session runs; the players List follows two joins
// and a leave (and the first join allocates it); once the last player has
// left the host shuts down after --agones-idle, writes its final save
// and marks the GameServer Shutdown. (That a stalled session stops the
// pings is TestAgentHealthStopsWhenSessionStalls in operator/agones.)
func TestAgonesLifeOfAHost(t *testing.T) {
	sdk, client := agonesSDK(t)
	bin, dir := hostBinary(t), t.TempDir()
	joinBin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/join")
	save := filepath.Join(dir, "world.lhsave")
	h := runHostEnv(t, []string{agones.PortEnv + "=" + strconv.Itoa(sdk.Port)}, bin, "serve",
		"--listen", "127.0.0.1:0", "--save", save, "--new", "--autosave", "-1s", "--maps", "2", "--map-size", "64",
		"--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1", "--game-name", "Agones colony", "--agones-idle", "2s",
		"--http", "127.0.0.1:0")
	page := waitStatusPage(t, h.log, h.done)
	h.waitLog(t, "agones: game server ready")
	gs := gameServer(t, client)
	if gs.Status.State != "Ready" {
		t.Fatalf("state after the host started = %q, want Ready", gs.Status.State)
	}
	for k, want := range map[string]string{"game": "Agones-colony", "protocol": strconv.Itoa(int(wire.ProtocolVersion)),
		"password": "false", "tls": "false"} {
		if got := gs.ObjectMeta.Labels["agones.dev/sdk-"+k]; got != want {
			t.Errorf("label %s = %q, want %q (labels %v)", k, got, want, gs.ObjectMeta.Labels)
		}
	}
	if len(gs.ObjectMeta.Labels["agones.dev/sdk-defs-hash"]) == 0 {
		t.Errorf("no defs-hash label: %v", gs.ObjectMeta.Labels)
	}
	h.waitFor(t, "two health pings", func() bool { return strings.Count(sdk.Log.String(), "Health Ping Received") >= 2 })

	ann := startJoin(t, joinBin, hostingAddr(t, h.log), "Anna")
	bo := startJoin(t, joinBin, hostingAddr(t, h.log), "Bob")
	waitPlayers(t, h, client, "Anna", "Bob")
	if s := gameServer(t, client).Status.State; s != "Allocated" {
		t.Errorf("state with players = %q, want Allocated", s)
	}
	m := readMetrics(t, page)
	for _, want := range []string{`lockhost_agones_state{state="Allocated"} 1`, "lockhost_agones_players 2"} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, m)
		}
	}
	if a := readAgonesStatus(t, page); a == nil || a.State != "Allocated" || a.Players != 2 || a.HealthPings < 2 || a.LastPing == nil {
		t.Errorf("/api/overview's agones = %+v, want Allocated, 2 players, the pings counted and the last one's time", a)
	}
	bo.leave(t)
	waitPlayers(t, h, client, "Anna")
	ann.leave(t)
	waitPlayers(t, h, client)

	checkIdleShutdown(t, h, client, save, "host")
	t.Logf("SDK server's log of the host's life (the test's own reads left out):\n%s", lifeLog(sdk.Log.String()))
}

// TestAgonesAllocatedNobodyComes runs the real host under Agones' SDK
// server: Ready, then allocated (as by a matchmaker, through the SDK
// server, not by a player), and no player ever joins: after
// --agones-first-player the host shuts down with its final save and the
// GameServer is Shutdown.
func TestAgonesAllocatedNobodyComes(t *testing.T) {
	sdk, client := agonesSDK(t)
	bin, dir := hostBinary(t), t.TempDir()
	save := filepath.Join(dir, "world.lhsave")
	h := runHostEnv(t, []string{agones.PortEnv + "=" + strconv.Itoa(sdk.Port)}, bin, "serve",
		"--listen", "127.0.0.1:0", "--save", save, "--new", "--autosave", "-1s", "--maps", "1", "--map-size", "64",
		"--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1", "--agones-first-player", "2s")
	h.waitLog(t, "agones: game server ready")
	if err := client.Allocate(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.waitLog(t, "agones: allocated, waiting for the first player")
	checkIdleShutdown(t, h, client, save, "host allocated with no player")
	if !strings.Contains(h.log.String(), "no player came") {
		t.Errorf("the host's log does not say why it shut down:\n%s", h.log)
	}
}

// TestAgonesRelayAllocatedNoArbiter runs the real relay host under
// Agones' SDK server: Ready before any world, then allocated (by a
// matchmaker, for an arbiter), and the arbiter never comes: after
// --agones-first-player the relay host exits 0 without a world to save
// and the GameServer is Shutdown, not left holding its pod.
func TestAgonesRelayAllocatedNoArbiter(t *testing.T) {
	sdk, client := agonesSDK(t)
	bin, dir := hostBinary(t), t.TempDir()
	secret := filepath.Join(dir, "arbiter-secret")
	if err := os.WriteFile(secret, []byte("an arbiter who never comes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := runHostEnv(t, []string{agones.PortEnv + "=" + strconv.Itoa(sdk.Port)}, bin, "serve", "--relay",
		"--arbiter-secret-file", secret, "--listen", "127.0.0.1:0", "--save", filepath.Join(dir, "relay.lhsave"), "--new",
		"--autosave", "-1s", "--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1", "--agones-first-player", "2s")
	h.waitLog(t, "relay host ready: waiting for the arbiter's world")
	h.waitLog(t, "agones: game server ready")
	if err := client.Allocate(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.waitLog(t, "agones: allocated, waiting for the first player")
	if code := h.exit(t); code != 0 {
		t.Fatalf("relay host with no arbiter exited %d after --agones-first-player:\n%s", code, h.log)
	}
	for _, want := range []string{"no player came", "agones: game server shut down"} {
		if !strings.Contains(h.log.String(), want) {
			t.Errorf("the relay host's log lacks %q:\n%s", want, h.log)
		}
	}
	if s := gameServer(t, client).Status.State; s != "Shutdown" {
		t.Errorf("state after the relay host with no arbiter stopped = %q, want Shutdown", s)
	}
	t.Logf("relay host's log:\n%s", h.log)
}

// checkIdleShutdown checks how host h (what, in messages) ended once its
// last player had left for the idle time: exit 0, its final save written
// and readable, and its GameServer in state Shutdown.
func checkIdleShutdown(t *testing.T, h *hostRun, client *agones.Client, save, what string) {
	t.Helper()
	if code := h.exit(t); code != 0 {
		t.Fatalf("%s exited %d after the idle time:\n%s", what, code, h.log)
	}
	if !strings.Contains(h.log.String(), "final=true") {
		t.Errorf("%s log lacks the final save:\n%s", what, h.log)
	}
	if _, err := saves.Read(save); err != nil {
		t.Errorf("final save: %v", err)
	}
	if s := gameServer(t, client).Status.State; s != "Shutdown" {
		t.Errorf("state after the %s stopped = %q, want Shutdown", what, s)
	}
}

// TestAgonesRelayHost runs the real relay host under Agones' SDK server,
// with the real join tool as its arbiter: the GameServer is Ready as soon
// as the relay host serves, before any world (a matchmaker allocates it
// for the arbiter, who can reach it only through that allocation); the
// arbiter's join allocates it and puts it in the players List, like a
// player's; a player joins from the arbiter's world and is listed too;
// once both have left, the idle shutdown follows with the final save and
// the GameServer is Shutdown.
func TestAgonesRelayHost(t *testing.T) {
	sdk, client := agonesSDK(t)
	bin, dir := hostBinary(t), t.TempDir()
	joinBin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/join")
	secret := filepath.Join(dir, "arbiter-secret")
	if err := os.WriteFile(secret, []byte("relay under agones\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	save := filepath.Join(dir, "relay.lhsave")
	h := runHostEnv(t, []string{agones.PortEnv + "=" + strconv.Itoa(sdk.Port)}, bin, "serve", "--relay",
		"--arbiter-secret-file", secret, "--listen", "127.0.0.1:0", "--save", save, "--new", "--autosave", "-1s",
		"--data-dir", filepath.Join(dir, "data"), "--conn-rate", "-1", "--agones-idle", "2s", "--http", "127.0.0.1:0")
	page := waitStatusPage(t, h.log, h.done)
	h.waitLog(t, "relay host ready: waiting for the arbiter's world")
	h.waitLog(t, "agones: game server ready")
	if s := gameServer(t, client).Status.State; s != "Ready" {
		t.Fatalf("state of the relay host before its arbiter = %q, want Ready", s)
	}
	addr := hostingAddr(t, h.log)

	arb := startJoin(t, joinBin, addr, "Arbiter", "--arbiter-secret-file", secret, "--bot", "2")
	h.waitLog(t, `msg="world uploaded"`)
	waitPlayers(t, h, client, "Arbiter")
	if s := gameServer(t, client).Status.State; s != "Allocated" {
		t.Errorf("state with the arbiter = %q, want Allocated", s)
	}
	anna := startJoin(t, joinBin, addr, "Anna")
	waitPlayers(t, h, client, "Anna", "Arbiter")
	if a := readAgonesStatus(t, page); a == nil || a.State != "Allocated" || a.Players != 2 {
		t.Errorf("/api/overview's agones = %+v, want Allocated, 2 players", a)
	}
	anna.leave(t)
	arb.leave(t)
	waitPlayers(t, h, client)

	checkIdleShutdown(t, h, client, save, "relay host")
	t.Logf("SDK server's log of the relay host's life:\n%s", lifeLog(sdk.Log.String()))
}

// lifeLog is the SDK server's log as time, message and values, without
// the reads and the stream closings that say nothing of the host's life.
func lifeLog(log string) string {
	var b strings.Builder
	for line := range strings.Lines(log) {
		var e struct {
			Time    string `json:"time"`
			Message string `json:"message"`
			Name    string `json:"name"`
			Values  any    `json:"values"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || strings.HasPrefix(e.Message, "Getting ") ||
			e.Message == "Health stream closed." || e.Message == "Gameserver update received" {
			continue
		}
		fmt.Fprintf(&b, "%s %s", e.Time, e.Message)
		if e.Name != "" {
			fmt.Fprintf(&b, " list=%s", e.Name)
		}
		if e.Values != nil {
			fmt.Fprintf(&b, " %v", e.Values)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// readMetrics reads the status page's /metrics.
func readMetrics(t *testing.T, page string) string {
	t.Helper()
	resp, err := http.Get(page + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: HTTP %d, %v", resp.StatusCode, err)
	}
	return string(b)
}

// agonesStatus is the "agones" of the status page's /api/overview.
type agonesStatus struct {
	State       string     `json:"state"`
	Players     int        `json:"players"`
	HealthPings int64      `json:"health_pings"`
	LastPing    *time.Time `json:"last_ping"`
}

// readAgonesStatus reads the "agones" of the status page's /api/overview
// (nil when it is null).
func readAgonesStatus(t *testing.T, page string) *agonesStatus {
	t.Helper()
	resp, err := http.Get(page + "api/overview")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Agones *agonesStatus `json:"agones"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/api/overview: HTTP %d, %v", resp.StatusCode, err)
	}
	return v.Agones
}

// runHostEnv is runHost with env added to the host's environment.
func runHostEnv(t *testing.T, env []string, bin string, args ...string) *hostRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), web.TokenEnv+"="), env...)
	h := &hostRun{cmd: cmd, log: &syncbuf.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = h.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		h.done <- <-h.done
	})
	return h
}

func gameServer(t *testing.T, c *agones.Client) agones.GameServer {
	t.Helper()
	gs, err := c.GameServer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

// waitPlayers waits until the SDK's players List holds exactly names.
func waitPlayers(t *testing.T, h *hostRun, c *agones.Client, names ...string) {
	t.Helper()
	var got []string
	h.waitFor(t, "players List "+strings.Join(names, ","), func() bool {
		l, err := c.GetList(context.Background(), agones.PlayersList)
		if err != nil {
			t.Fatal(err)
		}
		got = slices.Sorted(slices.Values(l.Values))
		return slices.Equal(got, names)
	})
}

// joiner is a running join tool.
type joiner struct {
	cmd  *exec.Cmd
	done chan error
	log  *syncbuf.Buffer
}

// startJoin starts the join tool as name, with extra arguments, and
// waits for its WorldReady.
func startJoin(t *testing.T, bin, addr, name string, extra ...string) *joiner {
	t.Helper()
	args := append([]string{addr, "--name", name, "--no-input", "--no-reconnect"}, extra...)
	j := &joiner{cmd: exec.Command(bin, args...),
		done: make(chan error, 1), log: &syncbuf.Buffer{}}
	stdout, err := j.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	j.cmd.Stderr = j.log
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.HasPrefix(sc.Text(), "WorldReady") {
				close(ready)
				signalled = true
			}
		}
		j.done <- j.cmd.Wait()
	}()
	t.Cleanup(func() { _ = j.cmd.Process.Kill() })
	select {
	case <-ready:
	case err := <-j.done:
		t.Fatalf("join %s ended (%v) before WorldReady:\n%s", name, err, j.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("join %s did not reach WorldReady:\n%s", name, j.log)
	}
	return j
}

// leave interrupts the join tool, which leaves the session, and waits.
func (j *joiner) leave(t *testing.T) {
	t.Helper()
	if err := j.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("join still running 30 s after SIGINT:\n%s", j.log)
	}
}

// TestAgonesBadPortRefusedAtStart: a malformed AGONES_SDK_HTTP_PORT is a
// slip refused before the world is made (exit 2, naming the variable),
// and --agones-idle follows the numbers rule.
func TestAgonesBadPortRefusedAtStart(t *testing.T) {
	bin := hostBinary(t)
	t.Setenv(agones.PortEnv, "nine")
	code, out := runBounded(t, 30*time.Second, bin, "serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	wantRefused(t, code, out, agones.PortEnv, `"nine"`)
	t.Setenv(agones.PortEnv, "")
	code, out = runBounded(t, 30*time.Second, bin, "serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--agones-idle", "0s")
	wantRefused(t, code, out, "--agones-idle")
}

// TestAgonesSIGTERMSavesThenShutsDown: Kubernetes stopping the pod sends
// SIGTERM; the host writes its final save, exits 0 and tells Agones
// Shutdown after it.
func TestAgonesSIGTERMSavesThenShutsDown(t *testing.T) {
	sdk := agonestest.Start(t, agonestest.GameServer)
	bin := hostBinary(t)
	client, err := agones.NewClient(sdk.Port)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	save := filepath.Join(dir, "world.lhsave")
	h := runHostEnv(t, []string{agones.PortEnv + "=" + strconv.Itoa(sdk.Port)}, bin, "serve",
		"--listen", "127.0.0.1:0", "--save", save, "--new", "--autosave", "-1s", "--maps", "1", "--map-size", "64",
		"--data-dir", filepath.Join(dir, "data"))
	h.waitLog(t, "agones: game server ready")
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := h.exit(t); code != 0 {
		t.Fatalf("host exited %d after SIGTERM:\n%s", code, h.log)
	}
	log := h.log.String()
	saved, told := strings.Index(log, "final=true"), strings.Index(log, "agones: game server shut down")
	if saved < 0 || told < saved {
		t.Errorf("want the final save logged, then Agones told (at %d and %d):\n%s", saved, told, log)
	}
	if _, err := saves.Read(save); err != nil {
		t.Errorf("final save: %v", err)
	}
	if s := gameServer(t, client).Status.State; s != "Shutdown" {
		t.Errorf("state after SIGTERM = %q, want Shutdown", s)
	}
}

// agonesSDK starts Agones' own SDK server for the test's GameServer and
// returns it with a client of it, as a matchmaker would allocate through.
func agonesSDK(t *testing.T) (*agonestest.SDK, *agones.Client) {
	t.Helper()
	sdk := agonestest.Start(t, agonestest.GameServer)
	client, err := agones.NewClient(sdk.Port)
	if err != nil {
		t.Fatal(err)
	}
	return sdk, client
}
