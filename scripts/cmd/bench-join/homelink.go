package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	"github.com/lockhost/lockhost/testing/testkit"
)

// The home-link comparison (-home-link): lockhost and OpenTTD each over
// the same emulated home link (toxiproxy: by default 10 Mbit/s each way
// and 50 ms round trip), one side after the other in one run. On each
// side a joiner joins, plays for a while, the link goes down (toxiproxy
// disables the proxy: its listener and every connection through it are
// closed, as a router restart does), comes back, and the joiner gets
// back in game. Between the link and each server a counting relay
// (testkit.Relay) notes when each connection was accepted and the bytes
// the server sent through it.
//
// lockhost: host serve --world-mib N; the join tool at nice 19 with
// --bot 2, which rejoins by itself after a drop (its Reconnector); in
// game is its WorldReady line, back in game its "reconnected:" line.
// OpenTTD: a dedicated server on the cached save of the map (made by the
// OpenTTD join script's gen, which this mode runs), one headless client
// (-v null) at nice 19 joining as a spectator; in game is its first
// "Sent ACK at" (net=7) after it connected. Whether OpenTTD's client
// reconnects by itself after the drop is watched for, not assumed: when
// no new connection comes from it within -ottd-wait of the link coming
// back, it is ended and the same client (the same configuration and
// name) is started again, a second join, and that is what is measured.
//
// Measured (one run, the defaults: 204 MiB against 4096², 10 Mbit/s,
// 50 ms, a 5 s drop after 10 s in game): lockhost's first join 36.4 s
// connect to in game, 42,017 kB from the host (its world at zstd:6 is
// 41,958 kB); its rejoin downloaded the world again, 41,458 kB in 39.3 s.
// OpenTTD's first join (lzma) 31.5 s, 33,003 kB; its 13.0 headless
// client did not reconnect by itself (it logs "Closed client connection
// 0", loads its title game and stays in its menu), and the same client
// started again joined in 31.5 s with 32,939 kB. With --compression
// zstd:10 (-compression) lockhost's first join was 37,729 kB.
//
// Since the join tool makes the maps' terrain itself (then --make-terrain
// auto, by the link's 50 ms round trip; now always, as the emulated link
// is on loopback, where auto never makes it) and the host sends the
// maps without it (docs/protocol.md, section 8.6), two runs: lockhost's
// first join 11.6 s and 13.1 s, 12,238,835 and 12,239,978 bytes from the
// host (the things and pawns; the terrain was 29.7 MB of the 42), its
// rejoin 13.1 s and 16.2 s with 12,003,375 and 11,930,282 bytes;
// OpenTTD's first join 29.2 s and 33.0 s, 32,990,177 and 33,195,442
// bytes.

// homeOptions are the -home-link mode's settings.
type homeOptions struct {
	openttdOptions
	link        link
	play, down  time.Duration // in game before the drop; the link down
	ottdWait    time.Duration // how long to watch OpenTTD's client reconnecting by itself
	ottdFormat  string        // OpenTTD's savegame_format, the codec of its map transfer
	compression string        // host serve --compression, when set
}

// linkJoin is one getting-in-game of one side over the link.
type linkJoin struct {
	side, what string
	accepted   time.Time // the relay accepted the connection that got in game
	ready      time.Time // the joiner in game (its line read)
	restored   time.Time // the link back up (rejoins only)
	bytes      int64     // the server sent, from that connection's accept on, until ready
	conns      int       // connections through the relay in that time
	first      int       // the relay's index of the first connection counted
	note       string
}

// connectToGame is from the connection's accept to in game.
func (j linkJoin) connectToGame() time.Duration { return j.ready.Sub(j.accepted) }

// homeLink runs both sides over the emulated link and prints the table.
func (b *bench) homeLink(o homeOptions) error {
	base := b.port
	tp, err := startToxiproxy(b.dir, fmt.Sprintf("127.0.0.1:%d", base+40))
	if err != nil {
		return err
	}
	defer tp.stop()
	fmt.Printf("home link (toxiproxy: %s); in game for %v, then the link down for %v (proxy disabled), then up again\n\n",
		o.link, o.play, o.down)
	var rows []linkJoin
	lh, err := b.homeLockhost(o, tp, fmt.Sprintf("127.0.0.1:%d", base+41))
	if err != nil {
		return fmt.Errorf("lockhost: %w", err)
	}
	rows = append(rows, lh...)
	if o.lockhostOnly {
		fmt.Println("lockhost only (-lockhost-only): OpenTTD is not run")
	} else if why := openttdMissing(o.openttdOptions); why != "" {
		fmt.Printf("OpenTTD skipped: %s\n", why)
	} else {
		ot, err := b.homeOpenTTD(o, tp, fmt.Sprintf("127.0.0.1:%d", base+42), base+43)
		if err != nil {
			return fmt.Errorf("OpenTTD: %w", err)
		}
		rows = append(rows, ot...)
	}
	printHome(rows)
	return nil
}

// openttdMissing says why OpenTTD cannot be run, or "".
func openttdMissing(o openttdOptions) string {
	if _, err := os.Stat(o.script); err != nil {
		return fmt.Sprintf("no OpenTTD join script at %s (set -openttd-script or %s)", o.script, peerScriptEnv)
	}
	if _, err := exec.LookPath(o.ottd); err != nil {
		return fmt.Sprintf("OpenTTD is not installed at %s (Debian packages openttd, openttd-opengfx; or set OTTD)", o.ottd)
	}
	return ""
}

var (
	reconnectedLine = regexp.MustCompile(`^reconnected: `)
	lostLine        = regexp.MustCompile(`^connection lost`)
)

// homeLockhost is the lockhost side: a first join and the rejoin after
// the drop, through the proxy "lockhost" listening on listen.
func (b *bench) homeLockhost(o homeOptions, tp *toxiproxy, listen string) ([]linkJoin, error) {
	w := world{flags: []string{"--world-mib", strconv.Itoa(o.worldMiB), "--seed", "1"}}
	side := fmt.Sprintf("lockhost %d MiB", o.worldMiB)
	if o.compression != "" {
		w.flags = append(w.flags, "--compression", o.compression)
		side += " " + o.compression
	}
	h, err := b.startHost(w, false)
	if err != nil {
		return nil, err
	}
	defer h.stop()
	relay, cw, unlink, err := relayedLink(o, tp, "lockhost", listen, h.addr)
	if err != nil {
		return nil, err
	}
	defer unlink()
	out := &lineLog{}
	cmd := exec.Command("nice", "-n", "19", b.joiner, listen, "--name", "HomePlayer", "--no-input", "--bot", "2", "-q", "--make-terrain", "always",
		"--timeout", "10m", "--reconnect-for", "10m")
	cmd.Stdout, cmd.Stderr = out, out
	p, err := startProc(cmd)
	if err != nil {
		return nil, err
	}
	defer p.stop(os.Interrupt)
	ready, err := out.wait(readyLine, nil, time.Time{}, 10*time.Minute, p.exited)
	if err != nil {
		return nil, fmt.Errorf("first join: %w", err)
	}
	first := linkJoin{side: side, what: "first join", ready: ready.at}
	first.accepted, _ = cw.accepted(0)
	first.bytes, first.conns = downFrom(relay, 0)
	first.note = lockhostPhases(ready.text)
	rejoin, err := dropAndRestore(o, tp, "lockhost", relay, func(cut time.Time) error {
		_, err := out.wait(lostLine, nil, cut, time.Minute, p.exited)
		return err
	})
	if err != nil {
		return nil, err
	}
	back, err := out.wait(reconnectedLine, nil, rejoin.restored, 10*time.Minute, p.exited)
	if err != nil {
		return nil, fmt.Errorf("rejoin: %w", err)
	}
	rejoin.finish(side, "rejoin after the drop", back.at, relay, cw)
	rejoin.note = "the join tool's Reconnector, by itself; it printed: " + back.text
	return []linkJoin{first, rejoin}, nil
}

// lockhostPhases is the join tool's own account of a join.
func lockhostPhases(readyText string) string {
	var parts []string
	for _, m := range field.FindAllStringSubmatch(readyText, -1) {
		switch m[1] {
		case "download", "load", "catch-up", "total":
			parts = append(parts, m[1]+" "+m[2])
		}
	}
	return fmt.Sprintf("the join tool: %v", parts)
}

// relayedLink is the path a side's joiner takes to target: the proxy name,
// listening on listen and shaped as o.link, to a counting relay, watched,
// to target. unlink stops the watch and closes the relay.
func relayedLink(o homeOptions, tp *toxiproxy, name, listen, target string) (relay *testkit.Relay, cw *connWatch, unlink func(), err error) {
	relay, err = testkit.NewRelay(target)
	if err != nil {
		return nil, nil, nil, err
	}
	cw = watchConns(relay)
	unlink = func() {
		cw.stop()
		relay.Close()
	}
	if err = tp.proxy(name, listen, relay.Addr(), o.link); err != nil {
		unlink()
		return nil, nil, nil, err
	}
	return relay, cw, unlink, nil
}

// dropAndRestore takes the proxy's link down after o.play in game, waits
// until lost reports the joiner saw it, keeps it down for o.down in all,
// and brings it up again. The linkJoin it returns has restored set and
// first, the index of the relay's next connection.
func dropAndRestore(o homeOptions, tp *toxiproxy, proxy string, relay *testkit.Relay, lost func(cut time.Time) error) (linkJoin, error) {
	time.Sleep(o.play)
	cut := time.Now()
	if err := tp.setEnabled(proxy, false); err != nil {
		return linkJoin{}, err
	}
	if err := lost(cut); err != nil {
		return linkJoin{}, fmt.Errorf("the drop: %w", err)
	}
	time.Sleep(time.Until(cut.Add(o.down)))
	j := linkJoin{first: len(relay.Conns())}
	if err := tp.setEnabled(proxy, true); err != nil {
		return linkJoin{}, err
	}
	j.restored = time.Now()
	return j, nil
}

// finish fills in a rejoin once in game at ready: the connection that
// got in game is the last one the relay accepted.
func (j *linkJoin) finish(side, what string, ready time.Time, relay *testkit.Relay, cw *connWatch) {
	j.side, j.what, j.ready = side, what, ready
	j.bytes, j.conns = downFrom(relay, j.first)
	j.accepted, _ = cw.accepted(len(relay.Conns()) - 1)
}

// proc is a started child process.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop signals the process and waits for it, killing it after 10 s.
func (p *proc) stop(sig os.Signal) {
	if p.exited() {
		return
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// printHome prints the table of both sides and the two ratios.
func printHome(rows []linkJoin) {
	fmt.Printf("%-26s %-32s %14s %14s %15s %5s\n", "side", "what", "connect→game s", "link up→game s", "bytes from host", "conns")
	for _, r := range rows {
		up := "-"
		if !r.restored.IsZero() {
			up = fmt.Sprintf("%.2f", r.ready.Sub(r.restored).Seconds())
		}
		fmt.Printf("%-26s %-32s %14.2f %14s %15d %5d\n", r.side, r.what, r.connectToGame().Seconds(), up, r.bytes, r.conns)
	}
	fmt.Println()
	for _, r := range rows {
		fmt.Printf("  %s, %s: %s\n", r.side, r.what, r.note)
	}
	if len(rows) == 4 {
		fmt.Printf("\nlockhost rejoin / OpenTTD's getting back in game, connect to in game: %.3fx (the target: at most 0.05x)\n",
			rows[1].connectToGame().Seconds()/rows[3].connectToGame().Seconds())
		fmt.Printf("lockhost first join / OpenTTD first join, connect to in game: %.2fx (the target: at most 1x); bytes %.3f MB against %.3f MB (%.2fx)\n",
			rows[0].connectToGame().Seconds()/rows[2].connectToGame().Seconds(), float64(rows[0].bytes)/1e6, float64(rows[2].bytes)/1e6,
			float64(rows[0].bytes)/float64(rows[2].bytes))
	}
	fmt.Println("  connect→game: from the counting relay's accept of the connection that got in game (toxiproxy dials it when the")
	fmt.Println("  joiner connects) to the joiner's in-game line as read here (lockhost: WorldReady, or 'reconnected:' after the drop;")
	fmt.Println("  OpenTTD: its first 'Sent ACK at'). link up→game: from enabling the proxy again (lockhost's Reconnector waits")
	fmt.Println("  its backoff; for OpenTTD's second client, from starting its process). bytes from host: what the server sent through")
	fmt.Println("  the relay on those connections until in game (MB below = 10^6 bytes); conns: connections through the relay in that time.")
}
