// Command bench-replay measures recording and replaying a session through
// the real binaries on loopback: a host serves the default world with
// --record, its clock running -speedup times faster than play so that
// minutes of play take seconds, while a join tool's bot sends -rate
// commands per second of play. Once -minutes of play are recorded the
// host stops, and `host replay verify` replays the segment headless. It
// prints the recording's size (the start save, then the commands and
// checkpoints per hour of play at that rate) and the replay's time
// against the time the session took to play at normal speed. It prints
// figures; it asserts nothing beyond the replay passing.
//
//	go run ./scripts/cmd/bench-replay [-minutes 10] [-rate 100] [-speedup 10]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/replay"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

func main() {
	minutes := flag.Float64("minutes", 10, "minutes of play to record")
	rate := flag.Float64("rate", 100, "commands the bot sends per second of play")
	speedup := flag.Int("speedup", 10, "how many times faster than play the host's clock runs while recording")
	flag.Parse()
	if err := run(*minutes, *rate, *speedup); err != nil {
		fmt.Fprintln(os.Stderr, "bench-replay:", err)
		os.Exit(1)
	}
}

const playRate = 60 // ticks a second of play, the host's default

func run(minutes, rate float64, speedup int) error {
	dir, err := os.MkdirTemp("", "benchreplay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hostBin, joinBin, err := procstat.BuildHostAndJoin(dir)
	if err != nil {
		return err
	}
	data := filepath.Join(dir, "data")
	ticks := uint64(minutes * 60 * playRate)
	fmt.Printf("bench-replay: the default world, %.0f minutes of play (%d ticks) at %g commands a second of play, recorded at %dx speed\n",
		minutes, ticks, rate, speedup)
	seg, recorded, err := record(hostBin, joinBin, data, ticks, rate, speedup)
	if err != nil {
		return err
	}
	return verify(hostBin, seg, recorded, rate)
}

// record runs the host with --record and a bot until the session has
// played ticks, then stops it, and returns the segment and how long the
// recording took.
func record(hostBin, joinBin, data string, ticks uint64, rate float64, speedup int) (string, time.Duration, error) {
	hostLog := &syncbuf.Buffer{}
	h := exec.Command(hostBin, "serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--record", "--discovery-port", "-1",
		"--port-mapping", "off", "--tick-rate", strconv.Itoa(playRate*speedup), "--command-rate", fmt.Sprint(rate*float64(speedup)*2),
		"--conn-rate", "-1", "--max-lag", strconv.Itoa(120*speedup), "--hash-every", strconv.Itoa(playRate))
	h.Stderr = hostLog
	start := time.Now()
	if err := h.Start(); err != nil {
		return "", 0, err
	}
	defer h.Process.Kill()
	addr, err := waitFor(hostLog, regexp.MustCompile(`msg=hosting addr=(\S+)`), time.Minute)
	if err != nil {
		return "", 0, fmt.Errorf("host: %w:\n%s", err, hostLog)
	}
	bot := exec.Command(joinBin, addr, "--name", "Bot", "--no-input", "--bot", fmt.Sprint(rate*float64(speedup)))
	bot.Stdout, bot.Stderr = nil, nil
	if err := bot.Start(); err != nil {
		return "", 0, err
	}
	defer bot.Process.Kill()
	var seg string
	for {
		time.Sleep(500 * time.Millisecond)
		segs, _ := filepath.Glob(filepath.Join(data, "replays", "*"+replay.Ext))
		if len(segs) == 0 {
			continue
		}
		seg = segs[len(segs)-1]
		in, err := replay.Summarise(seg)
		if err == nil && in.LastTick-in.FirstTick >= ticks {
			break
		}
		if time.Since(start) > time.Hour {
			return "", 0, fmt.Errorf("not %d ticks recorded within an hour", ticks)
		}
	}
	_ = bot.Process.Signal(syscall.SIGINT)
	_ = bot.Wait()
	_ = h.Process.Signal(syscall.SIGTERM)
	if err := h.Wait(); err != nil {
		return "", 0, fmt.Errorf("host: %w:\n%s", err, hostLog)
	}
	return seg, time.Since(start), nil
}

// verify replays seg with host replay verify and prints the figures.
func verify(hostBin, seg string, recorded time.Duration, rate float64) error {
	in, err := replay.Summarise(seg)
	if err != nil {
		return err
	}
	start := time.Now()
	out, err := exec.Command(hostBin, "replay", "verify", seg).CombinedOutput()
	took := time.Since(start)
	if err != nil {
		return fmt.Errorf("replay verify: %w:\n%s", err, out)
	}
	played := time.Duration(in.LastTick-in.FirstTick) * time.Second / playRate
	hours := played.Hours()
	perHour := float64(in.CommandBytes) / hours
	fmt.Printf("recorded %d ticks (%s of play) in %s: %d commands (%.1f a second of play), %d checkpoints\n",
		in.LastTick-in.FirstTick, played.Round(time.Second), recorded.Round(time.Second), in.Commands,
		float64(in.Commands)/played.Seconds(), in.Checkpoints)
	fmt.Printf("size: %.2f MiB in all: start save %.2f MiB, commands and checkpoints %.2f MiB (%.2f bytes a command with the checkpoints)\n",
		mib(in.Bytes), mib(in.StartBytes), mib(in.CommandBytes), float64(in.CommandBytes)/float64(max(1, in.Commands)))
	perCommand := float64(in.CommandBytes) / float64(max(1, in.Commands))
	fmt.Printf("an hour of play: %.2f MiB of commands and checkpoints at the rate measured; at %g commands a second, %.2f MiB (%.2f bytes a command); plus the start save\n",
		mib(int64(perHour)), rate, perCommand*rate*3600/(1<<20), perCommand)
	fmt.Printf("host replay verify: %s of play replayed and checked in %s (%.0fx faster than play)\n",
		played.Round(time.Second), took.Round(time.Millisecond), played.Seconds()/took.Seconds())
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fmt.Println("  " + sc.Text())
	}
	return nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// waitFor waits until log matches re and returns its first group.
func waitFor(log *syncbuf.Buffer, re *regexp.Regexp, within time.Duration) (string, error) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("no %q within %v", re, within)
}
