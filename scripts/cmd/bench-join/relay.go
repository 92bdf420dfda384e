package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/testing/procstat"
)

// relayRow is one way a joiner gets a world, measured -runs times.
type relayRow struct {
	name          string
	total, ready  []float64 // ms: connect to WorldReady, and without the catch-up
	cut, download []float64 // ms: the host's build or the arbiter's upload; the download
	bytes         []float64 // compressed world bytes
}

// compareRelay joins a world of mib MiB through a simulating host and a
// relay host, runs times each, interleaved, and prints min / median / max
// per way:
//   - simulating host, its join point kept ready (built before the join);
//   - simulating host with --lazy-join-points: cut and built at the join;
//   - relay host, the arbiter's world upload just taken (the join reuses it);
//   - relay host, the point older than the join-point age limit: the host
//     asks the arbiter for one at the join, and the joiner waits for its
//     upload.
//
// The arbiter is the join tool with the colony game (join
// --arbiter-secret-file --world-mib), on this machine beside the host and
// the joiner, at the same priority as the joiner.
func (b *bench) compareRelay(mib, runs int) error {
	w := world{name: fmt.Sprintf("%d MiB", mib), flags: []string{"--world-mib", strconv.Itoa(mib), "--seed", "1"}}
	secret := filepath.Join(b.dir, "arbiter-secret")
	if err := os.WriteFile(secret, []byte("bench relay secret\n"), 0o600); err != nil {
		return err
	}
	rows := []*relayRow{{name: "simulating host, point ready"}, {name: "simulating host, point cut at the join"},
		{name: "relay host, the world upload"}, {name: "relay host, point asked at the join"}}
	for i := range runs {
		fmt.Printf("run %d of %d ...\n", i+1, runs)
		for j, lazy := range []bool{false, true} {
			if err := b.simulatedJoin(w, lazy, rows[j]); err != nil {
				return fmt.Errorf("simulating host: %w", err)
			}
		}
		if err := b.relayJoins(mib, secret, rows[2], rows[3]); err != nil {
			return fmt.Errorf("relay host: %w", err)
		}
	}
	fmt.Printf("\n%d MiB world (raw state), %d runs, min / median / max; ms unless said\n", mib, runs)
	fmt.Printf("%-40s %-22s %-22s %-22s %-20s %s\n", "", "connect to ready", "without catch-up", "cut+compress (upload)", "download", "MiB on the wire")
	for _, r := range rows {
		mb := make([]float64, len(r.bytes))
		for i, v := range r.bytes {
			mb[i] = v / (1 << 20)
		}
		fmt.Printf("%-40s %-22s %-22s %-22s %-20s %s\n", r.name, minMedMax(r.total, "%.0f"), minMedMax(r.ready, "%.0f"),
			minMedMax(r.cut, "%.0f"), minMedMax(r.download, "%.0f"), minMedMax(mb, "%.1f"))
	}
	fmt.Println("  cut+compress: the simulating host's build of the point (build_ms), or the arbiter's cut and upload")
	fmt.Println("  as the relay host saw it (from its request to the upload's end; 0 when the world upload was reused)")
	return nil
}

// record adds one join's figures to the row; cut is the point's making.
func (r *relayRow) record(j *joinResult, cut time.Duration) {
	t := j.timings
	r.total = append(r.total, procstat.Ms(t["total"]))
	r.ready = append(r.ready, procstat.Ms(t["total"]-t["catch-up"]))
	r.download = append(r.download, procstat.Ms(t["download"]))
	r.cut = append(r.cut, procstat.Ms(cut))
	r.bytes = append(r.bytes, j.bytes)
}

// simulatedJoin is one join to a simulating host serving w.
func (b *bench) simulatedJoin(w world, lazy bool, row *relayRow) error {
	h, err := b.startHost(w, lazy)
	if err != nil {
		return err
	}
	defer h.stop()
	j, err := b.join(h.addr, "Player")
	if err != nil {
		return err
	}
	row.record(j, h.logs.duration("build_ms"))
	return nil
}

// relayJoins starts a relay host and the arbiter with a world of mib MiB,
// joins once right after the world's upload (fresh) and once after the
// join-point age limit (asked).
func (b *bench) relayJoins(mib int, secret string, fresh, asked *relayRow) error {
	b.port++
	addr := fmt.Sprintf("127.0.0.1:%d", b.port)
	hcmd := exec.Command(b.host, "serve", "--listen", addr, "--log-format", "json", "--max-players", "32", "--conn-rate", "-1",
		"--relay", "--arbiter-secret-file", secret)
	logs := &logTail{}
	hcmd.Stderr = logs
	if err := hcmd.Start(); err != nil {
		return err
	}
	h := &hostProc{cmd: hcmd, logs: logs, addr: addr}
	defer h.stop()
	if err := waitFor(logs, `"msg":"hosting"`, time.Minute); err != nil {
		return err
	}
	acmd := exec.Command(b.joiner, addr, "--name", "Arbiter", "--arbiter-secret-file", secret, "--world-mib", strconv.Itoa(mib),
		"--world-seed", "1", "--no-input", "-q", "--timeout", "10m")
	arbLog := &logTail{}
	acmd.Stdout, acmd.Stderr = arbLog, arbLog
	if err := acmd.Start(); err != nil {
		return err
	}
	defer func() { acmd.Process.Kill(); acmd.Wait() }()
	if err := waitFor(logs, `"msg":"world uploaded"`, 5*time.Minute); err != nil {
		return fmt.Errorf("%w\narbiter: %s", err, tail(arbLog.String(), 600))
	}
	j, err := b.join(addr, "Fresh")
	if err != nil {
		return err
	}
	fresh.record(j, 0)
	// Past the age limit (10 s) the point is not reused: the next joiner
	// gets one the arbiter cuts at its admission.
	time.Sleep(11 * time.Second)
	asks := countLines(logs, `"msg":"join point uploaded"`)
	if j, err = b.join(addr, "Asked"); err != nil {
		return err
	}
	if countLines(logs, `"msg":"join point uploaded"`) != asks+1 {
		return fmt.Errorf("the second joiner did not get a point the arbiter uploaded at its join")
	}
	from, err := lastTime(logs, "join point asked of the arbiter")
	if err != nil {
		return err
	}
	to, err := lastTime(logs, "join point uploaded")
	if err != nil {
		return err
	}
	asked.record(j, to.Sub(from))
	return nil
}

// waitFor waits until the log has s.
func waitFor(l *logTail, s string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for !l.has(s) {
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s in %v:\n%s", s, d, tail(l.String(), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// countLines counts the log lines with s.
func countLines(l *logTail, s string) int { return strings.Count(l.String(), s) }

// lastTime is the time of the last log line whose msg is msg.
func lastTime(l *logTail, msg string) (time.Time, error) {
	var at time.Time
	for _, line := range strings.Split(l.String(), "\n") {
		var m struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Msg == msg {
			at = m.Time
		}
	}
	if at.IsZero() {
		return at, fmt.Errorf("no %q in the host's log", msg)
	}
	return at, nil
}
