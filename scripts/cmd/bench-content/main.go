// Command bench-content measures content sync (docs/protocol.md, section
// 17) through the real binaries on loopback: a host runs the base
// content and three real mods with --share-content, and the join tool
// joins it -runs times each way: with every mod on this machine (no
// fetching), with only the base content and --fetch-content into an
// empty cache (fetching every mod over the session connection), and
// again from the warm cache. For each it prints the median time from the
// process's start to its exit right after WorldReady, the join's own
// connect-to-WorldReady time, and the bytes fetched the join printed. It
// prints figures; it asserts nothing.
//
//	go run ./scripts/cmd/bench-content [-runs 5] [-rate RATE] [-allow-tool DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
)

func main() {
	runs := flag.Int("runs", 5, "joins measured each way")
	rate := flag.String("rate", "-1", "the host's --max-upload-rate (a link's speed, such as 8Mbit; -1: none)")
	allow := flag.String("allow-tool", "../shared/testdata/real-mods/AllowTool@cc168e8", "the Allow Tool mod's folder")
	flag.Parse()
	if err := run(*runs, *rate, *allow); err != nil {
		fmt.Fprintln(os.Stderr, "bench-content:", err)
		os.Exit(1)
	}
}

// way is one way of joining, measured.
type way struct {
	name  string
	args  func(run int) []string
	wall  []time.Duration
	ready []string // the join's connect-to-WorldReady, as it printed it
	got   []string // the content line it printed
}

func run(runs int, rate, allow string) error {
	dir, err := os.MkdirTemp("", "benchcontent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hostBin, joinBin, err := procstat.BuildHostAndJoin(dir)
	if err != nil {
		return err
	}
	core, _ := filepath.Abs("game/colony/content/Core")
	mods := []string{core, allow, "cmd/join/testdata/realmods/MapReroll", "cmd/join/testdata/realmods/DefensivePositions"}
	var contentArgs []string
	for _, m := range mods {
		if _, err := os.Stat(m); err != nil {
			return fmt.Errorf("mod folder: %w", err)
		}
		contentArgs = append(contentArgs, "--content", m)
	}
	addr, stop, err := startHost(hostBin, dir, rate, contentArgs)
	if err != nil {
		return err
	}
	defer stop()
	base := []string{addr, "--exit-after-ready", "--no-input", "-q", "--no-reconnect"}
	ways := []*way{
		{name: "all mods here, no fetching", args: func(i int) []string {
			return append(append([]string{"--name", fmt.Sprintf("Have%d", i)}, base...), contentArgs...)
		}},
		{name: "base content only, --fetch-content, empty cache", args: func(i int) []string {
			return append([]string{"--name", fmt.Sprintf("Cold%d", i), "--content", core, "--fetch-content",
				"--content-cache", filepath.Join(dir, fmt.Sprintf("cold-%d", i))}, base...)
		}},
		{name: "base content only, --fetch-content, warm cache", args: func(i int) []string {
			return append([]string{"--name", fmt.Sprintf("Warm%d", i), "--content", core, "--fetch-content",
				"--content-cache", filepath.Join(dir, "cold-0")}, base...)
		}},
	}
	fmt.Printf("bench-content: a host with the base content and 3 real mods, --share-content, upload cap %s; %d joins each way\n\n", rate, runs)
	for i := range runs {
		for _, w := range ways {
			if err := w.measure(joinBin, i); err != nil {
				return err
			}
		}
	}
	for _, w := range ways {
		fmt.Printf("%-50s process start to WorldReady: median %v (runs %v)\n", w.name, median(w.wall), w.wall)
		fmt.Printf("%-50s the join's connect to WorldReady: %s\n", "", strings.Join(w.ready, " "))
		if len(w.got) > 0 {
			fmt.Printf("%-50s %s\n", "", w.got[0])
		}
	}
	return nil
}

var (
	readyTotal  = regexp.MustCompile(`WorldReady .* total=(\S+)`)
	contentLine = regexp.MustCompile(`(?m)^content: \d+ files, .*$`)
)

// measure runs one join and records its times.
func (w *way) measure(bin string, i int) error {
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, w.args(i)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v\n%s%s", w.name, err, out.String(), errOut.String())
	}
	w.wall = append(w.wall, time.Since(start).Round(time.Millisecond))
	if m := readyTotal.FindStringSubmatch(out.String()); m != nil {
		w.ready = append(w.ready, m[1])
	}
	if m := contentLine.FindString(out.String()); m != "" {
		w.got = append(w.got, m)
	}
	return nil
}

// startHost runs the host tool sharing its content until stop.
func startHost(bin, dir, rate string, content []string) (string, func(), error) {
	var log syncbuf.Buffer
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--maps", "1", "--map-size", "64", "--conn-rate", "-1",
		"--data-dir", filepath.Join(dir, "data"), "--share-content", "--max-upload-rate", rate}, content...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }
	hosting := regexp.MustCompile(`msg=hosting addr=(\S+)`)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := hosting.FindStringSubmatch(log.String()); m != nil {
			return m[1], stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("the host did not start:\n%s", log.String())
}

// median is the middle of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
