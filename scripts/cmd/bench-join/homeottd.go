package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/testing/testkit"
)

// The OpenTTD side of -home-link: OpenTTD driven directly (its join
// script connects its clients to the server's own port, not through a
// link), with the settings that script uses, on the save it generates.

// ottdBase is where the OpenTTD join script keeps its cached saves: its
// BASE, by default under TMPDIR.
func ottdBase() string {
	if b := os.Getenv("BASE"); b != "" {
		return b
	}
	tmp := os.Getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "openttd-peer")
}

// ottdSave makes sure the script's cached save of the map exists (its
// gen: minutes the first time) and returns its path.
func ottdSave(o openttdOptions) (string, error) {
	base := ottdBase()
	cmd := exec.Command("bash", o.script, "gen")
	cmd.Env = append(os.Environ(), "SIZES="+strconv.Itoa(o.size), "OTTD="+o.ottd, "BASE="+base)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("the script's gen: %v\n%s", err, tail(string(out), 2000))
	}
	save := filepath.Join(base, "saves", fmt.Sprintf("map%d.sav", o.size))
	if _, err := os.Stat(save); err != nil {
		return "", fmt.Errorf("the script's gen made no save: %w", err)
	}
	return save, nil
}

// ottdConfig writes an openttd.cfg as the join script does: no autosave,
// a local server, pause_on_join as OpenTTD's default (true), and its
// join timeouts raised (stock ones drop a client whose download of a
// 4096² map takes over 30 s), with format as savegame_format.
func ottdConfig(path, name string, size int, format string) error {
	bits := 0
	for n := size; n > 1; n /= 2 {
		bits++
	}
	lines := []string{"[misc]", "savegame_format = " + format, "[gui]", "autosave = off",
		"autosave_on_network_disconnect = false", "threaded_saves = true", "[network]", "server_name = peer-bench",
		"client_name = " + name, "server_game_type = local", "use_relay_service = never", "no_http_content_downloads = true",
		"pause_on_join = true", "max_clients = 25", "max_companies = 15", "max_init_time = 3000", "max_join_time = 30000",
		"max_download_time = 30000", "max_lag_time = 30000", "[game_creation]", "map_x = " + strconv.Itoa(bits),
		"map_y = " + strconv.Itoa(bits), "generation_seed = 12345", "starting_year = 1950"}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// ottdServer is a running dedicated server.
type ottdServer struct {
	p     *proc
	stdin io.WriteCloser
	out   *lineLog
}

// startOTTDServer starts a dedicated server on addr loading save, and
// waits until it runs the game (its console answers).
func startOTTDServer(o homeOptions, dir, addr, save string) (*ottdServer, error) {
	cfg := filepath.Join(dir, "server", "openttd.cfg")
	if err := ottdConfig(cfg, "bench-server", o.size, o.ottdFormat); err != nil {
		return nil, err
	}
	cmd := exec.Command(o.ottd, "-D", addr, "-c", cfg, "-x", "-d", "net=3,sl=2", "-g", save)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	s := &ottdServer{stdin: stdin, out: &lineLog{}}
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if s.p, err = startProc(cmd); err != nil {
		return nil, err
	}
	if _, err := s.out.wait(regexp.MustCompile(`Listening on `+regexp.QuoteMeta(addr)), nil, time.Time{}, 5*time.Minute, s.p.exited); err != nil {
		s.stop()
		return nil, err
	}
	// The console is read by the main loop once the save is loaded.
	if _, err := io.WriteString(stdin, "echo BENCH_READY\n"); err != nil {
		s.stop()
		return nil, err
	}
	if _, err := s.out.wait(regexp.MustCompile(`BENCH_READY`), nil, time.Time{}, 5*time.Minute, s.p.exited); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *ottdServer) stop() {
	_, _ = io.WriteString(s.stdin, "quit\n")
	select {
	case <-s.p.done:
	case <-time.After(10 * time.Second):
	}
	s.p.stop(os.Interrupt)
}

var (
	ottdInGame = regexp.MustCompile(`Sent ACK at`)
	ottdFailed = regexp.MustCompile(`Timeout while connecting|Could not connect|Closed client connection`)
	ottdLeft   = regexp.MustCompile(`peer1 has left the game`)
)

// startOTTDClient starts the headless client of dir (at nice 19, as on
// another machine) joining addr as a spectator.
func startOTTDClient(o homeOptions, dir, addr string) (*proc, *lineLog, error) {
	cfg := filepath.Join(dir, "openttd.cfg")
	if err := ottdConfig(cfg, "peer1", o.size, o.ottdFormat); err != nil {
		return nil, nil, err
	}
	out := &lineLog{}
	cmd := exec.Command("nice", "-n", "19", o.ottd, "-v", "null:ticks=2147483647", "-s", "null", "-m", "null",
		"-c", cfg, "-x", "-n", addr+"#255", "-d", "net=7,sl=1")
	cmd.Stdout, cmd.Stderr = out, out
	p, err := startProc(cmd)
	return p, out, err
}

// homeOpenTTD is the OpenTTD side: a first join, the drop, and getting
// back in game, through the proxy "openttd" listening on listen, to a
// server on port.
func (b *bench) homeOpenTTD(o homeOptions, tp *toxiproxy, listen string, port int) ([]linkJoin, error) {
	save, err := ottdSave(o.openttdOptions)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(b.dir, "openttd")
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv, err := startOTTDServer(o, dir, addr, save)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	relay, cw, unlink, err := relayedLink(o, tp, "openttd", listen, addr)
	if err != nil {
		return nil, err
	}
	defer unlink()
	side := fmt.Sprintf("OpenTTD %d^2 %s", o.size, o.ottdFormat)
	cli, out, err := startOTTDClient(o, filepath.Join(dir, "client"), listen)
	if err != nil {
		return nil, err
	}
	defer func() { cli.stop(syscall.SIGTERM) }()
	ready, err := out.wait(ottdInGame, ottdFailed, time.Time{}, 10*time.Minute, cli.exited)
	if err != nil {
		return nil, fmt.Errorf("first join: %w", err)
	}
	first := linkJoin{side: side, what: "first join", ready: ready.at}
	first.accepted, _ = cw.accepted(0)
	first.bytes, first.conns = downFrom(relay, 0)
	first.note = ottdPhases(out, time.Time{})
	again, err := dropAndRestore(o, tp, "openttd", relay, func(cut time.Time) error {
		_, err := srv.out.wait(ottdLeft, nil, cut, time.Minute, srv.p.exited)
		return err
	})
	if err != nil {
		return nil, err
	}
	var started time.Time
	again.note, out, cli, err = ottdBackInGame(o, dir, listen, relay, again, cli, out, &started)
	if err != nil {
		return nil, err
	}
	ready, err = out.wait(ottdInGame, ottdFailed, again.restored, 10*time.Minute, cli.exited)
	if err != nil {
		return nil, fmt.Errorf("after the drop: %w", err)
	}
	what := "reconnect by itself"
	if strings.HasPrefix(again.note, "no reconnect") {
		what = "second join of the same client"
	}
	again.finish(side, what, ready.at, relay, cw)
	if !started.IsZero() {
		again.restored = started // the link was up long before: count from the new client's start
	}
	again.note += "; " + ottdPhases(out, again.restored)
	return []linkJoin{first, again}, nil
}

// ottdBackInGame watches for OpenTTD's client reconnecting by itself
// within o.ottdWait of the link coming back; if it does not, it ends
// that client and starts the same one again. It says which in the note
// and returns the client to measure.
// started is set to when it started the client again.
func ottdBackInGame(o homeOptions, dir, listen string, relay *testkit.Relay, j linkJoin, cli *proc, out *lineLog, started *time.Time) (string, *lineLog, *proc, error) {
	deadline := j.restored.Add(o.ottdWait)
	for time.Now().Before(deadline) {
		if len(relay.Conns()) > j.first {
			return "the client reconnected by itself", out, cli, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	state := "still running (in its menu)"
	if cli.exited() {
		state = "exited"
	}
	last := strings.ReplaceAll(strings.TrimSpace(out.tail(3)), "\n", " | ")
	cli.stop(syscall.SIGTERM)
	note := fmt.Sprintf("no reconnect by itself in %v (the client %s; its last lines: %s); the same client started again", o.ottdWait, state, last)
	*started = time.Now()
	next, nextOut, err := startOTTDClient(o, filepath.Join(dir, "client"), listen)
	return note, nextOut, next, err
}

var ottdConnected = regexp.MustCompile(`Connected to `)

// ottdPhases is the client's own account: from its "Connected to" to its
// first "Sent ACK", after after.
func ottdPhases(out *lineLog, after time.Time) string {
	c, ok1 := out.find(ottdConnected, after)
	a, ok2 := out.find(ottdInGame, after)
	if !ok1 || !ok2 {
		return "the client's log: no 'Connected to' or 'Sent ACK'"
	}
	return fmt.Sprintf("the client's log: 'Connected to' to 'Sent ACK' %.2f s", a.at.Sub(c.at).Seconds())
}
